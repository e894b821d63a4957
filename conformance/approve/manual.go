package approve

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"net/url"
	"strings"
	"sync"

	"github.com/mcpauth/mcpauth/conformance"
)

// ManualApprover asks a person to act as the test user: it prints what to do
// to Out and reads the answer (a URL, a key, or just Enter) from In. Prompts are
// serialised. Give the run a per-check timeout long enough for a human.
type ManualApprover struct {
	out   io.Writer
	lines chan string
	sem   chan struct{}

	mu  sync.Mutex
	key string
}

var _ conformance.Approver = (*ManualApprover)(nil)

// NewManualApprover reads answers from in, one per line, and prompts on out.
func NewManualApprover(in io.Reader, out io.Writer) *ManualApprover {
	if out == nil {
		out = io.Discard
	}
	m := &ManualApprover{out: out, lines: make(chan string), sem: make(chan struct{}, 1)}
	go func() {
		// One reader for the approver's lifetime, so a prompt abandoned on
		// timeout does not leave a second reader racing the next prompt.
		sc := bufio.NewScanner(in)
		for sc.Scan() {
			m.lines <- strings.TrimSpace(sc.Text())
		}
		close(m.lines)
	}()
	return m
}

func (m *ManualApprover) ask(ctx context.Context, format string, args ...any) (string, error) {
	select {
	case m.sem <- struct{}{}:
	case <-ctx.Done():
		return "", ctx.Err()
	}
	defer func() { <-m.sem }()
	fmt.Fprintf(m.out, "\n"+format+"\n> ", args...)
	select {
	case line, ok := <-m.lines:
		if !ok {
			return "", fmt.Errorf("manual approval: input closed")
		}
		return line, nil
	case <-ctx.Done():
		return "", ctx.Err()
	}
}

// ApproveConsent implements conformance.Approver.
func (m *ManualApprover) ApproveConsent(ctx context.Context, authURL string) (*url.URL, error) {
	return m.consent(ctx, authURL, "APPROVE")
}

// DenyConsent implements conformance.Approver.
func (m *ManualApprover) DenyConsent(ctx context.Context, authURL string) (*url.URL, error) {
	return m.consent(ctx, authURL, "DENY")
}

func (m *ManualApprover) consent(ctx context.Context, authURL, action string) (*url.URL, error) {
	redirect := ""
	if u, err := url.Parse(authURL); err == nil {
		redirect = u.Query().Get("redirect_uri")
	}
	line, err := m.ask(ctx, "Open this URL in a browser, log in as the test user and %s:\n  %s\n"+
		"The browser then goes to %s (nothing listens there). Paste the full URL from the address bar:",
		action, authURL, redirect)
	if err != nil {
		return nil, err
	}
	u, err := url.Parse(line)
	if err != nil || u.Scheme == "" {
		return nil, fmt.Errorf("manual approval: %q is not a URL", line)
	}
	return u, nil
}

// ApproveDevice implements conformance.Approver.
func (m *ManualApprover) ApproveDevice(ctx context.Context, verificationURI, userCode string) error {
	_, err := m.ask(ctx, "Open %s, enter the code %s and APPROVE. Press Enter when done.", verificationURI, userCode)
	return err
}

// DenyDevice implements conformance.Approver.
func (m *ManualApprover) DenyDevice(ctx context.Context, verificationURI, userCode string) error {
	_, err := m.ask(ctx, "Open %s, enter the code %s and DENY. Press Enter when done.", verificationURI, userCode)
	return err
}

// APIKey implements conformance.Approver.
func (m *ManualApprover) APIKey(ctx context.Context) (string, error) {
	m.mu.Lock()
	k := m.key
	m.mu.Unlock()
	if k != "" {
		return k, nil
	}
	k, err := m.ask(ctx, "Paste the test user's API key from Settings:")
	if err != nil {
		return "", err
	}
	m.mu.Lock()
	m.key = k
	m.mu.Unlock()
	return k, nil
}

// RegenerateAPIKey implements conformance.Approver.
func (m *ManualApprover) RegenerateAPIKey(ctx context.Context) (string, string, error) {
	old, err := m.APIKey(ctx)
	if err != nil {
		return "", "", err
	}
	next, err := m.ask(ctx, "In Settings, regenerate the API key, then paste the new key:")
	if err != nil {
		return "", "", err
	}
	m.mu.Lock()
	m.key = next
	m.mu.Unlock()
	return old, next, nil
}
