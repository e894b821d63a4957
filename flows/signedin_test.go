package flows_test

import (
	"context"
	"strings"
	"testing"

	"github.com/mcpauth/mcpauth/flows"
	"github.com/mcpauth/mcpauth/flows/flowstest"
)

// The browser's last page waits for the code exchange: it names the server
// and the account when the login worked, and says it failed when the
// exchange did (it used to say "Signed in" before the exchange was tried).
func TestAuthCodePageNamesServerAndAccount(t *testing.T) {
	for _, tt := range []struct {
		name   string
		reject bool
		want   []string
		not    []string
	}{
		{"signed in", false, []string{"Signed in", `id="server">`, `id="account">mona@example.com<`}, []string{"Sign-in failed"}},
		{"exchange refused", true, []string{"Sign-in failed", `id="error-code">invalid_client<`}, []string{"Signed in", `id="account"`}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			as := newFakeAS(t)
			as.rejectClient = func(string) bool { return tt.reject }
			disc := as.disc(nil)
			seen := make(chan browserResult, 1)
			_, err := flows.AuthCode(context.Background(), flows.AuthCodeConfig{
				Clock: flowstest.NewFakeClock(t0), Discovery: disc,
				Client:      flows.Client{ID: "cli", AuthMethod: flows.AuthMethodNone},
				OpenBrowser: browser(t, seen),
				Account:     func(context.Context, *flows.Token) string { return "mona@example.com" },
			})
			if (err != nil) != tt.reject {
				t.Fatalf("AuthCode: %v", err)
			}
			page := <-seen
			want := append(tt.want, `id="server">`+disc.Resource+`<`)
			if tt.reject {
				want = tt.want
			}
			for _, w := range want {
				if !strings.Contains(page.body, w) {
					t.Errorf("page lacks %q:\n%s", w, page.body)
				}
			}
			for _, n := range tt.not {
				if strings.Contains(page.body, n) {
					t.Errorf("page has %q:\n%s", n, page.body)
				}
			}
		})
	}
}
