package approve

import (
	"bytes"
	"context"
	"io"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/mcpauth/mcpauth/conformance"
)

func TestManualApprover(t *testing.T) {
	in, feed := io.Pipe()
	var out bytes.Buffer
	m := NewManualApprover(in, &out)
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	go func() {
		_, _ = io.WriteString(feed, "http://127.0.0.1:43117/callback?code=abc&state=s\n\nmcpa_old\nmcpa_new\n")
	}()
	u, err := m.ApproveConsent(ctx, "https://svc.example/oauth/authorize?redirect_uri="+url.QueryEscape(conformance.RedirectURI))
	if err != nil || u.Query().Get("code") != "abc" {
		t.Fatalf("consent: %v %v", u, err)
	}
	if err := m.ApproveDevice(ctx, "https://svc.example/auth/device", "ABCD-1234"); err != nil {
		t.Fatal(err)
	}
	old, next, err := m.RegenerateAPIKey(ctx)
	if err != nil || old != "mcpa_old" || next != "mcpa_new" {
		t.Errorf("regenerate: %q %q %v", old, next, err)
	}
	if k, _ := m.APIKey(ctx); k != "mcpa_new" {
		t.Errorf("key after regenerate: %q", k)
	}
	for _, want := range []string{"APPROVE", conformance.RedirectURI, "ABCD-1234", "regenerate"} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("prompts do not mention %q:\n%s", want, out.String())
		}
	}
	short, cancelShort := context.WithTimeout(context.Background(), 20*time.Millisecond)
	defer cancelShort()
	if err := m.DenyDevice(short, "https://svc.example/auth/device", "ABCD-1234"); err == nil {
		t.Errorf("a prompt nobody answers should end with the context")
	}
	feed.Close()
}
