package login_test

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/sha256"
	"crypto/x509"
	"encoding/pem"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/mcpauth/mcpauth/cmd/internal/clitest"
	"github.com/mcpauth/mcpauth/server"
	"github.com/mcpauth/mcpauth/server/clock"
	"github.com/mcpauth/mcpauth/server/servertest"
)

const serveMachineSecret = "8d3c0f6a2b7e4c1d9a5f0e3b6c8d2a4f-ci"

// serverClock lets the CLI read the reference server's fake clock, so its
// assertions and proofs are fresh to the server.
type serverClock struct{ *clock.Fake }

func (serverClock) After(d time.Duration) <-chan time.Time { return time.After(d) }

// serveMachineEnv is the reference server with a secret client (ci-bot)
// and a key client (ci-key, whose PEM private key is returned).
func serveMachineEnv(t *testing.T, dpop bool) (*servertest.Env, string) {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	der, err := x509.MarshalPKCS8PrivateKey(key)
	if err != nil {
		t.Fatal(err)
	}
	keyFile := filepath.Join(t.TempDir(), "ci-key.pem")
	if err := os.WriteFile(keyFile, pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: der}), 0o600); err != nil {
		t.Fatal(err)
	}
	sum := sha256.Sum256([]byte(serveMachineSecret))
	env := servertest.New(t, servertest.Options{DPoP: dpop, MachineClients: []server.MachineClient{
		{ID: "ci-bot", SecretHash: sum[:]}, {ID: "ci-key", PublicKey: key.Public()},
	}})
	return env, keyFile
}

// TestCIMachineLoginAgainstServe is a CI job against `mcpauth serve`: a
// client credentials login with a secret, then with a private key, each
// followed by ping and token --header; a wrong secret exits 1 naming
// invalid_client without printing the secret.
func TestCIMachineLoginAgainstServe(t *testing.T) {
	testCIMachineLogin(t, false, "Authorization: Bearer ")
}

// TestCIMachineLoginAgainstServeWithDPoP: with serve --dpop the resource
// says it takes DPoP, so the same logins bind their tokens to a key.
func TestCIMachineLoginAgainstServeWithDPoP(t *testing.T) {
	testCIMachineLogin(t, true, "Authorization: DPoP ")
}

func testCIMachineLogin(t *testing.T, dpop bool, header string) {
	env, keyFile := serveMachineEnv(t, dpop)
	for _, c := range []struct {
		name, client string
		args         []string
		vars         map[string]string
	}{
		{"secret", "ci-bot", nil, map[string]string{"MCPAUTH_CLIENT_SECRET": serveMachineSecret}},
		{"private key", "ci-key", []string{"--private-key-file", keyFile}, nil},
	} {
		t.Run(c.name, func(t *testing.T) {
			cli := clitest.New(t, env)
			cli.Clock = serverClock{env.Clock}
			for k, v := range c.vars {
				cli.Vars[k] = v
			}
			args := append([]string{"login", env.URL + "/mcp", "--client-credentials", "--client-id", c.client}, c.args...)
			if code, out, errOut := cli.Run(args...); code != 0 {
				t.Fatalf("login: exit %d:\n%s%s", code, out, errOut)
			}
			code, out, errOut := cli.Run("ping")
			if code != 0 || !strings.Contains(out+errOut, c.client) {
				t.Errorf("ping: exit %d, want 0 naming %s:\n%s%s", code, c.client, out, errOut)
			}
			code, out, errOut = cli.Run("token", "--header", env.URL+"/mcp")
			if code != 0 || !strings.HasPrefix(out, header) || dpop != strings.Contains(out, "\nDPoP: ") {
				t.Errorf("token --header: exit %d:\n%s%s", code, out, errOut)
			}
		})
	}

	cli := clitest.New(t, env)
	cli.Clock = serverClock{env.Clock}
	cli.Vars["MCPAUTH_CLIENT_SECRET"] = serveMachineSecret + "-wrong"
	code, out, errOut := cli.Run("login", env.URL+"/mcp", "--client-credentials", "--client-id", "ci-bot")
	if code != 1 || !strings.Contains(errOut, "invalid_client") || strings.Contains(out+errOut, serveMachineSecret) {
		t.Errorf("wrong secret: exit %d, want 1 naming invalid_client without the secret:\n%s%s", code, out, errOut)
	}
}
