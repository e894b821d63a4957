// Package mcpproxy bridges an MCP host that speaks stdio to a remote MCP
// server over Streamable HTTP (or the legacy HTTP+SSE transport), with the
// modelcontextprotocol/go-sdk transports on both sides: an IOTransport
// connection for stdin/stdout and a StreamableClientTransport or
// SSEClientTransport connection whose HTTP client adds the credential.
// Messages are forwarded as they are; the proxy is not an MCP client and
// never initializes a session of its own.
package mcpproxy

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcpauth/mcpauth/flows"
)

// Transport modes.
const (
	Auto       = "auto"
	Streamable = "streamable"
	SSE        = "sse"
)

// DefaultMaxMessage bounds one message from the host or one JSON answer.
const DefaultMaxMessage = 4 << 20

// Config is what Run needs.
type Config struct {
	URL       string // the MCP endpoint
	Transport string // auto (default), streamable or sse
	// HTTP sends the requests (nil: http.DefaultTransport). It must not
	// have a timeout of its own beyond connecting: answers may stream.
	HTTP http.RoundTripper
	// Auth gives the credential every request carries, renewed after a
	// refusal (nil: none), through a flows.Transport.
	Auth flows.CredentialSource
	// Headers are added to every request.
	Headers http.Header
	In      io.Reader // the host's messages
	Out     io.Writer // to the host: protocol messages only
	// Log gets one line per event (never on Out).
	Log func(format string, args ...any)
	// MaxMessage bounds a message from the host and a JSON answer
	// (0: DefaultMaxMessage).
	MaxMessage int
	// AuthHint, given a 401 that refused the credential, returns what is
	// appended to the error the host gets, e.g. "; run: mcpauth login URL".
	AuthHint func(*http.Response) string
	// ScopeHint, given the scope a 403 insufficient_scope asks for, returns
	// what is appended to the error the host gets, e.g. "; run: mcpauth
	// login URL --scope …".
	ScopeHint func(scope string) string
	// Backoff are the pauses before sending again a request whose
	// connection was refused (nil: DefaultBackoff); Sleep waits them out
	// (nil: a timer), for tests.
	Backoff []time.Duration
	Sleep   func(ctx context.Context, d time.Duration) error
	// Grace is how long requests in flight may still be answered after the
	// host closed stdin (0: 800 ms).
	Grace time.Duration
}

// RemoteError is the remote connection ending while the host was still
// there.
type RemoteError struct{ Err error }

func (e *RemoteError) Error() string {
	return "the connection to the MCP server ended: " + e.Err.Error()
}
func (e *RemoteError) Unwrap() error { return e.Err }

type proxy struct {
	ctx    context.Context // Run's: ends with it
	cfg    Config
	host   mcp.Connection
	remote mcp.Connection
	mode   string
	guard  *guardTransport
	client *http.Client // with the credential, for SSE

	decided  bool
	readerUp chan struct{}
	readErr  chan error
	fatal    chan error // a failure no later message can escape: Run ends
	sem      chan struct{}

	mu      sync.Mutex
	pending map[jsonrpc.ID]bool
	initIDs map[jsonrpc.ID]bool
	idle    chan struct{} // closed and replaced when pending empties
	// closing is set when Run is about to close the host's connection;
	// answering counts the error answers being written until then.
	closing   bool
	answering sync.WaitGroup
}

// Run forwards until the host closes stdin (nil), the remote connection
// ends (*RemoteError) or ctx is done.
func Run(ctx context.Context, cfg Config) error {
	if cfg.MaxMessage <= 0 {
		cfg.MaxMessage = DefaultMaxMessage
	}
	if cfg.Grace <= 0 {
		cfg.Grace = 800 * time.Millisecond
	}
	if cfg.Log == nil {
		cfg.Log = func(string, ...any) {}
	}
	if cfg.HTTP == nil {
		cfg.HTTP = http.DefaultTransport
	}
	if cfg.Transport == "" {
		cfg.Transport = Auto
	}
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()

	if cfg.Backoff == nil {
		cfg.Backoff = DefaultBackoff
	}
	if cfg.Sleep == nil {
		cfg.Sleep = sleep
	}
	// Every request carries the credential, so every request, redirect and
	// legacy SSE message endpoint stays on the MCP server's origin.
	origin, err := flows.OriginOf(cfg.URL)
	if err != nil {
		return fmt.Errorf("MCP server: %w", err)
	}
	redial := &redialTransport{next: cfg.HTTP, backoff: cfg.Backoff, sleep: cfg.Sleep, log: cfg.Log}
	auth := &headerTransport{next: credentialed(redial, origin, cfg), headers: cfg.Headers}
	p := &proxy{ctx: ctx, cfg: cfg, mode: cfg.Transport, client: flows.Confine(&http.Client{Transport: auth}, origin),
		guard:    &guardTransport{next: auth, max: int64(cfg.MaxMessage), url: cfg.URL, authHint: cfg.AuthHint, scopeHint: cfg.ScopeHint, log: cfg.Log},
		readerUp: make(chan struct{}), readErr: make(chan error, 1), fatal: make(chan error, 1), sem: make(chan struct{}, 64),
		pending: map[jsonrpc.ID]bool{}, initIDs: map[jsonrpc.ID]bool{}, idle: make(chan struct{})}

	switch cfg.Transport {
	case SSE:
		c, err := (&mcp.SSEClientTransport{Endpoint: cfg.URL, HTTPClient: p.client}).Connect(ctx)
		if err != nil {
			return &RemoteError{fmt.Errorf("connecting to the SSE endpoint %s: %w", cfg.URL, err)}
		}
		p.remote, p.decided = c, true
	case Streamable, Auto:
		c, err := (&mcp.StreamableClientTransport{Endpoint: cfg.URL, HTTPClient: flows.Confine(&http.Client{Transport: p.guard}, origin),
			MaxRetries: 2, DisableStandaloneSSE: true}).Connect(ctx)
		if err != nil {
			return err
		}
		p.remote, p.decided = c, cfg.Transport == Streamable
	default:
		return fmt.Errorf("transport %q: want auto, streamable or sse", cfg.Transport)
	}

	pr, pw := io.Pipe()
	host, err := (&mcp.IOTransport{Reader: pr, Writer: nopCloser{cfg.Out}, MaxLineLength: -1}).Connect(ctx)
	if err != nil {
		return err
	}
	p.host = host
	go filterInput(cfg.In, pw, cfg.MaxMessage, func(id jsonrpc.ID, reason string) {
		cfg.Log("%s", reason)
		if id.IsValid() {
			p.reply(ctx, id, jsonrpc.CodeInvalidRequest, "mcpauth proxy: "+reason)
		}
	})
	if p.decided {
		p.startReader(ctx)
	}

	hostDone := make(chan error, 1)
	go func() { hostDone <- p.fromHost(ctx) }()
	defer p.closeRemote()
	defer host.Close()
	select {
	case err := <-hostDone:
		if err != nil {
			return err
		}
		// stdin closed: answers already on their way still reach the host.
		p.mu.Lock()
		idle := p.idle
		n := len(p.pending)
		p.mu.Unlock()
		if n > 0 {
			select {
			case <-idle:
			case <-time.After(cfg.Grace):
				cfg.Log("stdin closed with %d request(s) unanswered", n)
			case <-p.readErr:
			}
		}
		p.drainAnswers()
		if redial.neverReached() {
			// Every call failed: the host's session never existed (exit 6).
			return &RemoteError{fmt.Errorf("%s was never reachable (connection refused)", cfg.URL)}
		}
		return nil
	case err := <-p.fatal:
		p.answerPending(ctx, err)
		return &RemoteError{err}
	case err := <-p.readErr:
		// The host would wait for ever for what is still unanswered.
		p.answerPending(ctx, err)
		return err
	case <-ctx.Done():
		return ctx.Err()
	}
}

// answerPending answers every call still unanswered with err: the host
// would otherwise wait for ever.
func (p *proxy) answerPending(ctx context.Context, err error) {
	p.mu.Lock()
	ids := make([]jsonrpc.ID, 0, len(p.pending))
	for id := range p.pending {
		ids = append(ids, id)
	}
	p.mu.Unlock()
	for _, id := range ids {
		p.answer(ctx, id, jsonrpc.CodeInternalError, fmt.Sprintf("mcpauth proxy: %v", err))
	}
	p.drainAnswers()
}

type nopCloser struct{ io.Writer }

func (nopCloser) Close() error { return nil }

// closeRemote ends the remote session (the SDK sends DELETE for a session
// with an id) without holding the exit up for long.
func (p *proxy) closeRemote() {
	done := make(chan struct{})
	go func() { _ = p.remote.Close(); close(done) }()
	select {
	case <-done:
	case <-time.After(500 * time.Millisecond):
	}
}

// fromHost reads the host's messages and sends them on: calls concurrently
// (an answer may take long, and a cancellation must get past it),
// notifications and responses in order.
func (p *proxy) fromHost(ctx context.Context) error {
	for {
		msg, err := p.host.Read(ctx)
		if err != nil {
			if errors.Is(err, io.EOF) || errors.Is(err, io.ErrClosedPipe) || errors.Is(err, mcp.ErrConnectionClosed) || ctx.Err() != nil {
				return nil
			}
			// A batch the SDK refused: the connection itself goes on.
			p.cfg.Log("a message from the host was refused: %v", err)
			continue
		}
		req, isCall := msg.(*jsonrpc.Request)
		if !isCall || !req.IsCall() {
			p.send(ctx, msg)
			continue
		}
		p.mu.Lock()
		p.pending[req.ID] = true
		if req.Method == "initialize" {
			p.initIDs[req.ID] = true
		}
		p.mu.Unlock()
		if !p.decided {
			p.probe(ctx, req)
			continue
		}
		select {
		case p.sem <- struct{}{}:
		case <-ctx.Done():
			return nil
		}
		go func() {
			defer func() { <-p.sem }()
			p.send(ctx, req)
		}()
	}
}

func (p *proxy) send(ctx context.Context, msg jsonrpc.Message) {
	err := p.remote.Write(ctx, msg)
	if err == nil {
		return
	}
	p.failed(ctx, msg, err)
}

func (p *proxy) failed(ctx context.Context, msg jsonrpc.Message, err error) {
	if errors.Is(err, flows.ErrCrossOrigin) {
		// A legacy SSE endpoint event naming another origin, or a redirect
		// there: every message would go there, so none is sent and the
		// proxy stops, once this call is answered.
		if re := (*flows.RedirectError)(nil); !errors.As(err, &re) {
			err = fmt.Errorf("the server named a message endpoint on another origin, which does not get the credential (the MCP transport spec has clients refuse it): %w", err)
		}
		defer func() {
			select {
			case p.fatal <- err:
			default:
			}
		}()
	}
	if req, ok := msg.(*jsonrpc.Request); ok && req.IsCall() {
		p.cfg.Log("%s %s: %v", p.cfg.URL, req.Method, err)
		p.answer(ctx, req.ID, jsonrpc.CodeInternalError, fmt.Sprintf("mcpauth proxy: %s: %v", p.cfg.URL, err))
		return
	}
	p.cfg.Log("%s: a message from the host could not be sent: %v", p.cfg.URL, err)
}

// probe sends the first call in auto mode: a 4xx that is not a JSON-RPC
// answer means there is no Streamable HTTP endpoint, so the proxy opens the
// legacy SSE transport's stream and sends the call there (the MCP spec's
// backwards compatibility rule).
func (p *proxy) probe(ctx context.Context, req *jsonrpc.Request) {
	pr := &probe{}
	err := p.remote.Write(context.WithValue(ctx, probeKey{}, pr), req)
	if err != nil && pr.status >= 400 && pr.status < 500 && pr.status != 401 && pr.status != 403 {
		p.cfg.Log("%s answered the first POST with HTTP %d: trying the legacy HTTP+SSE transport", p.cfg.URL, pr.status)
		c, serr := (&mcp.SSEClientTransport{Endpoint: p.cfg.URL, HTTPClient: p.client}).Connect(ctx)
		if serr == nil {
			p.closeRemote()
			p.remote, p.mode = c, SSE
			err = c.Write(ctx, req)
		} else {
			err = fmt.Errorf("no Streamable HTTP endpoint (HTTP %d to POST) and no SSE endpoint (%v)", pr.status, serr)
		}
	}
	if err != nil {
		p.failed(ctx, req, err)
	}
	p.decided = true
	p.startReader(ctx)
}

func (p *proxy) startReader(ctx context.Context) {
	go func() { p.readErr <- p.fromRemote(ctx) }()
}

// fromRemote passes the server's messages to the host.
func (p *proxy) fromRemote(ctx context.Context) error {
	for {
		msg, err := p.remote.Read(ctx)
		if err != nil {
			if ctx.Err() != nil {
				return nil
			}
			if p.mode == SSE && !errors.Is(err, io.EOF) && !errors.Is(err, mcp.ErrConnectionClosed) {
				p.cfg.Log("%s sent a message that is not JSON-RPC: %v", p.cfg.URL, err)
				continue
			}
			p.cfg.Log("%s: %v", p.cfg.URL, err)
			return &RemoteError{err}
		}
		resp, isResp := msg.(*jsonrpc.Response)
		if isResp {
			p.noteResponse(resp)
		}
		if err := p.host.Write(ctx, msg); err != nil {
			return fmt.Errorf("writing to the host: %w", err)
		}
		if isResp {
			p.claim(resp.ID)
		}
	}
}

// noteResponse keeps the protocol version an initialize negotiated: the
// SDK's connection learns it only from a ClientSession, which a proxy has
// not got, and would otherwise send no MCP-Protocol-Version header.
func (p *proxy) noteResponse(resp *jsonrpc.Response) {
	p.mu.Lock()
	isInit := p.initIDs[resp.ID]
	delete(p.initIDs, resp.ID)
	p.mu.Unlock()
	if !isInit || resp.Error != nil {
		return
	}
	var r struct {
		ProtocolVersion string `json:"protocolVersion"`
	}
	if json.Unmarshal(resp.Result, &r) == nil && r.ProtocolVersion != "" {
		p.guard.setVersion(r.ProtocolVersion)
		if p.mode == Streamable && r.ProtocolVersion < standaloneBefore {
			go p.standalone(p.ctx, r.ProtocolVersion, p.guard.sessionID())
		}
	}
}

// claim takes id off the pending calls, reporting whether it was there:
// whoever claims a call answers it, so no call is answered twice.
func (p *proxy) claim(id jsonrpc.ID) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	if !p.pending[id] {
		return false
	}
	delete(p.pending, id)
	if len(p.pending) == 0 {
		close(p.idle)
		p.idle = make(chan struct{})
	}
	return true
}

// answer claims call id and answers it with an error, unless it was
// answered already. Run waits for answers being written before it closes
// the host's connection (drainAnswers), so none is cut off.
func (p *proxy) answer(ctx context.Context, id jsonrpc.ID, code int64, msg string) {
	p.mu.Lock()
	if p.closing {
		p.mu.Unlock()
		return
	}
	p.answering.Add(1)
	p.mu.Unlock()
	defer p.answering.Done()
	if p.claim(id) {
		p.reply(ctx, id, code, msg)
	}
}

// drainAnswers lets the answers being written finish, and no new ones start.
func (p *proxy) drainAnswers() {
	p.mu.Lock()
	p.closing = true
	p.mu.Unlock()
	p.answering.Wait()
}

// reply answers the host's call id with an error.
func (p *proxy) reply(ctx context.Context, id jsonrpc.ID, code int64, msg string) {
	if err := p.host.Write(ctx, &jsonrpc.Response{ID: id, Error: &jsonrpc.Error{Code: code, Message: msg}}); err != nil {
		p.cfg.Log("writing to the host: %v", err)
	}
}
