package mcpproxy

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"mime"
	"net/http"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
)

// standaloneBefore is the first protocol revision without the standalone
// GET stream (SEP-2575: a stateless server sends nothing outside a request).
const standaloneBefore = "2026-07-28"

// standalone keeps open the Streamable HTTP GET stream on which a server of
// an earlier revision sends what belongs to no request (list_changed
// notifications, its own requests). go-sdk opens it only for sessions its
// own client initialized, which the proxy's are not. It reconnects with
// the proxy's backoff, resuming after the last event id, and gives up
// quietly on a 405 (the server offers no such stream) or a lost session.
func (p *proxy) standalone(ctx context.Context, version, session string) {
	lastID := ""
	for attempt := 0; ; {
		req, err := http.NewRequestWithContext(ctx, http.MethodGet, p.cfg.URL, nil)
		if err != nil {
			p.cfg.Log("server stream: %v", err)
			return
		}
		req.Header.Set("Accept", "text/event-stream")
		req.Header.Set("Mcp-Protocol-Version", version)
		if session != "" {
			req.Header.Set("Mcp-Session-Id", session)
		}
		if lastID != "" {
			req.Header.Set("Last-Event-ID", lastID)
		}
		resp, err := p.client.Do(req)
		if ctx.Err() != nil {
			if err == nil {
				resp.Body.Close()
			}
			return
		}
		switch ct, _, _ := mime.ParseMediaType(headerOf(resp, "Content-Type")); {
		case err != nil:
			p.cfg.Log("server stream: %v", err)
		case resp.StatusCode == http.StatusMethodNotAllowed:
			resp.Body.Close()
			return // no stream offered: messages come with the requests only
		case resp.StatusCode == http.StatusNotFound && session != "":
			resp.Body.Close()
			return // the session is gone: the host's next request finds out
		case resp.StatusCode != http.StatusOK || ct != "text/event-stream":
			p.cfg.Log("server stream: HTTP %d (%s)", resp.StatusCode, orNone(ct))
			resp.Body.Close()
		default:
			attempt = 0
			var rerr error
			lastID, rerr = p.forwardEvents(ctx, resp.Body, lastID)
			resp.Body.Close()
			if ctx.Err() != nil {
				return
			}
			if rerr != nil {
				p.cfg.Log("server stream: %v", rerr)
			}
		}
		if attempt == len(p.cfg.Backoff) {
			p.cfg.Log("server stream: giving up after %d attempts; messages outside requests will not arrive", attempt+1)
			return
		}
		if p.cfg.Sleep(ctx, p.cfg.Backoff[attempt]) != nil {
			return
		}
		attempt++
	}
}

func headerOf(resp *http.Response, name string) string {
	if resp == nil {
		return ""
	}
	return resp.Header.Get(name)
}

// forwardEvents passes each event's JSON-RPC message to the host until the
// stream ends, and returns the last event id seen. An event over
// MaxMessage ends the stream (the reconnect resumes after it).
func (p *proxy) forwardEvents(ctx context.Context, body io.Reader, lastID string) (string, error) {
	r := bufio.NewReaderSize(body, 64<<10)
	var data bytes.Buffer
	for {
		raw, size, err := readLine(r, p.cfg.MaxMessage)
		if size > p.cfg.MaxMessage {
			return lastID, fmt.Errorf("a line longer than %d bytes", p.cfg.MaxMessage)
		}
		if err != nil {
			if errors.Is(err, io.EOF) {
				return lastID, nil
			}
			return lastID, err
		}
		line := strings.TrimSuffix(string(raw), "\r")
		field, value, _ := strings.Cut(line, ":")
		value = strings.TrimPrefix(value, " ")
		switch {
		case line == "": // the event is complete
			if data.Len() > 0 {
				msg, derr := jsonrpc.DecodeMessage(data.Bytes())
				if derr != nil {
					p.cfg.Log("server stream: an event that is not JSON-RPC: %v", derr)
				} else if werr := p.host.Write(ctx, msg); werr != nil {
					return lastID, fmt.Errorf("writing to the host: %w", werr)
				}
			}
			data.Reset()
		case field == "data":
			if data.Len() > 0 {
				data.WriteByte('\n')
			}
			if data.Len()+len(value) > p.cfg.MaxMessage {
				return lastID, fmt.Errorf("an event larger than %d bytes", p.cfg.MaxMessage)
			}
			data.WriteString(value)
		case field == "id":
			lastID = value
		}
	}
}
