package interop

import (
	"bytes"
	"crypto/rand"
	"debug/buildinfo"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/mcpauth/mcpauth/internal/syncbuf"
	"github.com/mcpauth/mcpauth/internal/tsserver"
)

// hydraModule is the Go module the lab builds Ory Hydra from.
const hydraModule = "github.com/ory/hydra/v2"

// Ory Hydra (`hydra serve all --dev`, DSN=memory, built by
// interop/testdata/hydra/build.sh at the version its go.mod pins), with the
// login and consent app it delegates to (hydraApp): dynamic registration
// switched on, JWT access tokens, only OpenID Connect discovery, no device
// flow, no DPoP; the audience of a token comes from Hydra's own audience
// parameter, not RFC 8707 resource.
func labHydra(t *testing.T, bin string, g *grid) {
	hydra, version := requireHydra(t)
	rsLn := loopback(t)
	public, admin := "http://127.0.0.1:"+freePort(t), "http://127.0.0.1:"+freePort(t)
	rs := startResourceServer(t, rsLn, resourceConfig{Issuer: public, JWKSURL: public + "/.well-known/jwks.json", Audience: urlOf(rsLn) + "/mcp", Scopes: []string{"mcp"}})
	p := startHydra(t, hydra, public, admin)
	r := g.row("Ory Hydra", version)
	c := newCLI(t, bin)
	serverFlowsWith(t, g, r, c, rs.MCPURL, public, p, map[string]func(t *testing.T) outcome{
		"discover": func(t *testing.T) outcome {
			out, _ := c.must("discover", rs.MCPURL, "-o", "json")
			if !strings.Contains(out, public+"/oauth2/register") {
				t.Fatalf("discover names no registration endpoint:\n%s", out)
			}
			return pass("only OpenID Connect discovery (no RFC 8414 document). Hydra registers clients (`oidc.dynamic_client_registration.enabled`) but names its `registration_endpoint` only when configured to (`webfinger.oidc_discovery.client_registration_url`), as the lab does")
		},
		"token accepted": func(t *testing.T) outcome {
			tok := c.token(rs.MCPURL)
			if status := initializeStatus(t, rs.MCPURL, tok); status != 200 {
				t.Fatalf("the MCP server answered %d to mcpauth token's token", status)
			}
			if status := initializeStatus(t, rs.MCPURL, tok+"x"); status != 401 {
				t.Fatalf("the MCP server answered %d to a forged token, want 401", status)
			}
			return pass("Hydra puts in `aud` only what its own `audience` parameter asked for and the consent granted; the login and consent app (interop/hydraapp_test.go) grants the request's RFC 8707 `resource`, which mcpauth sends, as the audience")
		},
		"conformance": func(t *testing.T) outcome {
			// One check at a time: Hydra's in-memory SQLite refuses
			// concurrent writes ("Unable to serialize access due to a
			// concurrent update"), which would make the verdicts vary.
			return driverConformance(t, newCLI(t, bin), rs.MCPURL, "the sign-in and consent pages of the lab's login and consent app, one check at a time (`--parallel 1`: the in-memory SQLite of `DSN=memory` refuses concurrent writes)", "--parallel", "1")
		},
		"refresh": func(t *testing.T) outcome {
			concurrentRefresh(t, c, rs.MCPURL, p, labAccessTTL)
			return pass("refresh tokens rotate. Hydra checks a refreshed grant's audience against the client's registered audiences, not the consent's, so the login and consent app also adds the granted resource to the client's audiences (admin API); without that Hydra refuses the refresh (`invalid_request`: \"Requested audience … has not been whitelisted by the OAuth 2.0 Client\")")
		},
		"device": func(t *testing.T) outcome {
			return na("no `device_authorization_endpoint` (Hydra 2.3 has no device flow)")
		},
		"DPoP":    func(t *testing.T) outcome { return na("the AS does not advertise DPoP") },
		"machine": func(t *testing.T) outcome { return hydraMachine(t, newCLI(t, bin), admin, rs.MCPURL) },
	})
}

// hydraMachine is the machine cell: a client the admin API creates for the
// client credentials grant, allowed the MCP URL as audience. The token
// comes, but for no audience: Hydra takes the audience of a client
// credentials token from its audience parameter only, and mcpauth sends
// RFC 8707 resource.
func hydraMachine(t *testing.T, m *cli, admin, mcpURL string) outcome {
	body, _ := json.Marshal(map[string]any{
		"client_name": "interop-machine", "grant_types": []string{"client_credentials"}, "scope": "mcp",
		"token_endpoint_auth_method": "client_secret_basic", "audience": []string{mcpURL},
	})
	resp, err := http.Post(admin+"/admin/clients", "application/json", bytes.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var client struct {
		ID     string `json:"client_id"`
		Secret string `json:"client_secret"`
	}
	if b, _ := io.ReadAll(io.LimitReader(resp.Body, 1<<20)); resp.StatusCode != http.StatusCreated || json.Unmarshal(b, &client) != nil || client.Secret == "" {
		t.Fatalf("creating the machine client: %s: %s", resp.Status, snippet(b))
	}
	m.must("login", mcpURL, "--client-credentials", "--client-id", client.ID, "--client-secret", client.Secret, "--scope", "mcp")
	status := initializeStatus(t, mcpURL, m.token(mcpURL))
	if status == 200 {
		t.Errorf("the MCP server takes Hydra's client credentials token now: make this cell a pass")
		return pass("")
	}
	if status != 401 {
		t.Fatalf("the MCP server answered %d to the client credentials token, want 401 (no audience)", status)
	}
	return known("the client credentials token has no `aud`: Hydra takes a token's audience only from its own `audience` parameter (checked against the client's registered audiences) and ignores RFC 8707 `resource`, which mcpauth sends; with no user there is no consent to grant it (as the login and consent app does for the other flows), so the MCP server refuses the token (401). Known limitation")
}

// startHydra runs `hydra serve all --dev` on the two loopback URLs with an
// in-memory database and the login and consent app, until the test ends,
// and returns the app's log of refresh grants.
func startHydra(t *testing.T, hydra, public, admin string) grantLog {
	t.Helper()
	secret := make([]byte, 32)
	_, _ = rand.Read(secret)
	grants := grantLog{&syncbuf.Buffer{}}
	app := startHydraApp(t, admin, grants.Buffer)
	port := func(u string) string { return u[strings.LastIndex(u, ":")+1:] }
	config := fmt.Sprintf(`dsn: memory
serve:
  public: {host: 127.0.0.1, port: %s}
  admin: {host: 127.0.0.1, port: %s}
urls:
  self: {issuer: %s}
  login: %s/login
  consent: %s/consent
secrets: {system: [%s]}
strategies: {access_token: jwt}
ttl: {access_token: %s}
oidc:
  dynamic_client_registration:
    enabled: true
    default_scope: [openid, offline_access, offline, mcp]
webfinger:
  oidc_discovery:
    supported_scope: [mcp]
    client_registration_url: %s/oauth2/register
oauth2:
  token_hook: %s/token-hook
`, port(public), port(admin), public, app, app, hex.EncodeToString(secret), labAccessTTL, public, app)
	file := filepath.Join(t.TempDir(), "hydra.yml")
	if err := os.WriteFile(file, []byte(config), 0o600); err != nil {
		t.Fatal(err)
	}
	startProgram(t, "hydra", hydra, t.TempDir(), []string{"serve", "all", "--dev", "--sqa-opt-out", "--config", file},
		[]string{"SQA_OPT_OUT=true"}, nil, admin+"/health/ready")
	return grants
}

// grantLog is the login and consent app's log of the refresh grants Hydra
// answered (through its token hook).
type grantLog struct{ *syncbuf.Buffer }

func (g grantLog) count(s string) int { return strings.Count(g.String(), s) }

// requireHydra returns the lab's Hydra binary and its version, or skips
// (fails with CI=true) naming the build script when it is missing or not
// the version go.mod pins.
func requireHydra(t *testing.T) (bin, version string) {
	t.Helper()
	if testing.Short() {
		t.Skip("Ory Hydra test: skipped with -short")
	}
	const build = "interop/testdata/hydra/build.sh"
	mod, err := os.ReadFile(filepath.Join("testdata", "hydra", "go.mod"))
	if err != nil {
		t.Fatal(err)
	}
	m := regexp.MustCompile(`(?m)^require ` + regexp.QuoteMeta(hydraModule) + ` (\S+)$`).FindSubmatch(mod)
	if m == nil {
		t.Fatalf("interop/testdata/hydra/go.mod pins no %s", hydraModule)
	}
	want := string(m[1])
	bin, _ = filepath.Abs(filepath.Join("testdata", "hydra", "hydra"))
	info, err := buildinfo.ReadFile(bin)
	switch {
	case errors.Is(err, os.ErrNotExist):
		tsserver.Unavailable(t, "Ory Hydra", "not built", build)
	case err != nil:
		t.Fatalf("reading %s: %v", bin, err)
	}
	for _, d := range info.Deps {
		if d.Path == hydraModule && d.Version == want {
			return bin, want
		}
	}
	tsserver.Unavailable(t, "Ory Hydra", fmt.Sprintf("%s is not %s %s", bin, hydraModule, want), build)
	return "", ""
}
