package creds

import (
	"errors"
	"net"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/mcpauth/mcpauth/flows"
)

// An expired machine token is renewed by running its grant again, and a
// renewal that fails says why with the right kind: a local file problem is
// ErrInput, an authorization server's refusal is ErrAuthRequired (log in
// again), and a server that cannot be reached stays a network error for
// the caller to classify, not a reason to log in again.
func TestMachineRenewalFailures(t *testing.T) {
	r := newRig(t, false) // a real AS on loopback; it has no machine grants
	refused := "http://127.0.0.1:1/oauth/token"
	if ln, err := net.Listen("tcp", "127.0.0.1:0"); err == nil { // a port nobody listens on
		refused = "http://" + ln.Addr().String() + "/oauth/token"
		ln.Close()
	}
	for name, tt := range map[string]struct {
		grant GrantInfo
		check func(error) bool
	}{
		"missing assertion file": {GrantInfo{Type: GrantJWTBearer, TokenEndpoint: r.srv.URL + "/oauth/token", AssertionFile: filepath.Join(t.TempDir(), "none.jwt")},
			func(err error) bool { return errors.Is(err, ErrInput) && !errors.Is(err, ErrAuthRequired) }},
		"refused by the server": {GrantInfo{Type: GrantClientCredentials, TokenEndpoint: r.srv.URL + "/oauth/token"},
			func(err error) bool {
				var oe *flows.OAuthError
				return errors.Is(err, ErrAuthRequired) && errors.As(err, &oe) && oe.Code == "unsupported_grant_type"
			}},
		"unreachable": {GrantInfo{Type: GrantClientCredentials, TokenEndpoint: refused},
			func(err error) bool {
				var ne net.Error
				return !hasKind(err) && errors.As(err, &ne)
			}},
	} {
		t.Run(name, func(t *testing.T) {
			g := tt.grant
			b := Bundle{Kind: KindOAuth, Issuer: r.srv.URL, Resource: r.server, AccessToken: "at-old", TokenType: "Bearer",
				Expiry: r.clk.Now().Add(10 * time.Second), // within RenewSkew: due for renewal
				Client: &ClientInfo{ClientID: "robot", ClientSecret: "s"}, Grant: &g}
			if err := Save(r.store(t), r.server, "", b); err != nil {
				t.Fatal(err)
			}
			_, err := r.keeper().Load(r.server)
			if err == nil || !tt.check(err) || !strings.Contains(err.Error(), "renewing the token for "+r.server) {
				t.Fatalf("renewal: %v", err)
			}
			if got := r.bundle(t); got.AccessToken != "at-old" {
				t.Errorf("a failed renewal changed the entry: %v", got)
			}
		})
	}
}
