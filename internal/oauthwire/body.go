package oauthwire

import (
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
)

// MaxBody bounds every response body mcpauth reads.
const MaxBody = 1 << 20

// ErrTooLarge is a response body over MaxBody.
var ErrTooLarge = errors.New("response body exceeds 1 MiB")

// Do sends req with hc (nil: http.DefaultClient) and returns the response
// with its body read (bounded by MaxBody) and closed.
func Do(hc *http.Client, req *http.Request) (*http.Response, []byte, error) {
	if hc == nil {
		hc = http.DefaultClient
	}
	resp, err := hc.Do(req)
	if err != nil {
		return nil, nil, err
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(io.LimitReader(resp.Body, MaxBody+1))
	if err != nil {
		return resp, nil, fmt.Errorf("reading response from %s: %w", req.URL.Redacted(), err)
	}
	if len(body) > MaxBody {
		return resp, nil, fmt.Errorf("%s: %w", req.URL.Redacted(), ErrTooLarge)
	}
	return resp, body, nil
}

// Excerpt returns the start of a body for error messages, printable only.
func Excerpt(body []byte) string {
	const max = 200
	s := strings.Map(func(r rune) rune {
		if r < 0x20 || r == 0x7f {
			return ' '
		}
		return r
	}, string(body))
	r := []rune(strings.TrimSpace(s))
	if len(r) > max {
		return string(r[:max]) + "…"
	}
	return string(r)
}
