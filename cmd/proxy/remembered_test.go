package proxy_test

import (
	"context"
	"strings"
	"testing"
	"time"
)

// Issue 17 (1): with no --storage or MCPAUTH_STORAGE the proxy reads the
// credential where the remembered choice says, without asking.
func TestProxyE2ERememberedFileStorage(t *testing.T) {
	e := serve(t)
	e.login() // MCPAUTH_STORAGE=file: a plain-file entry
	_, want, _ := e.cli("ping")
	e.env = append(e.env, "MCPAUTH_STORAGE=") // unset: the last one wins
	// In auto mode a plain-file entry is refused (it could be planted).
	if code, _, stderr := e.cli("token"); code != 7 {
		t.Fatalf("token in auto mode: exit %d, want 7: %s", code, stderr)
	}
	if code, _, stderr := e.cli("config", "set", "storage", "file"); code != 0 {
		t.Fatal(stderr)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	var stderr logBuffer
	cs, _ := e.proxy(ctx, &stderr)
	defer cs.Close()
	if user, err := whoami(ctx, cs); err != nil || user != strings.TrimSpace(want) {
		t.Fatalf("whoami: %q %v, want %q\n%s", user, err, want, stderr.String())
	}
	if strings.Contains(stderr.String(), "[y/N]") {
		t.Fatalf("the proxy asked:\n%s", stderr.String())
	}
}
