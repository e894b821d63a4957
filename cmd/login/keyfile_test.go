package login_test

import (
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/mcpauth/mcpauth/cmd/internal/clierr"
	"github.com/mcpauth/mcpauth/cmd/internal/clitest"
)

func skipWithoutModes(t *testing.T) {
	if runtime.GOOS == "windows" {
		t.Skip("Windows has no POSIX mode bits: the key file check does not apply")
	}
}

// A private key, client secret, assertion or ID token file that group or
// others may access is refused before any request (exit 2, naming chmod 600), as ssh
// refuses such a key; at 0600 it is used, and --allow-insecure-key-file
// uses it anyway.
func TestMachineLoginRefusesExposedFiles(t *testing.T) {
	skipWithoutModes(t)
	m := newMachineServer(t, false)
	keyFile, pub := ecPEMKey(t)
	m.mu.Lock()
	m.clientKey = pub
	m.mu.Unlock()
	dir := t.TempDir()
	secretFile, assertionFile := filepath.Join(dir, "secret"), filepath.Join(dir, "oidc.jwt")
	idTokenFile := filepath.Join(dir, "id.jwt")
	for file, content := range map[string]string{secretFile: "s3cret\n", idTokenFile: "h.alice.s\n"} {
		if err := os.WriteFile(file, []byte(content), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	n := 0 // a fresh assertion for each login: the server takes each once
	freshAssertion := func() {
		n++
		a := fmt.Sprintf("h.job%d.s", n)
		m.mu.Lock()
		m.assertions[a] = true
		m.mu.Unlock()
		if err := os.WriteFile(assertionFile, []byte(a), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	for _, tc := range []struct {
		name, file, what string
		args             []string
		env              map[string]string
	}{
		{"private key", keyFile, "private key file", []string{"--client-credentials", "--client-id", "bot", "--key-id", "k1", "--private-key-file", keyFile}, nil},
		{"client secret", secretFile, "--client-secret-file", []string{"--client-credentials", "--client-id", "bot", "--client-secret-file", secretFile}, nil},
		{"client secret from env", secretFile, "MCPAUTH_CLIENT_SECRET_FILE", []string{"--client-credentials", "--client-id", "bot"}, map[string]string{"MCPAUTH_CLIENT_SECRET_FILE": secretFile}},
		{"assertion", assertionFile, "JWT bearer assertion file", []string{"--jwt-bearer-assertion-file", assertionFile}, nil},
		{"ID token", idTokenFile, "ID token file", []string{"--id-token-file", idTokenFile, "--idp-token-endpoint", m.srv.URL + "/idp/token", "--idp-client-id", "idp-client"},
			map[string]string{"MCPAUTH_IDP_CLIENT_SECRET": "idp-secret"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			login := func(c *clitest.CLI, mode os.FileMode, extra ...string) (int, string) {
				t.Helper()
				freshAssertion()
				if err := os.Chmod(tc.file, mode); err != nil {
					t.Fatal(err)
				}
				code, _, stderr := c.Run(append(append([]string{"login", m.srv.URL + "/mcp"}, tc.args...), extra...)...)
				return code, stderr
			}
			c, _ := machineCLI(t)
			delete(c.Vars, "MCPAUTH_CLIENT_SECRET")
			for k, v := range tc.env {
				c.Vars[k] = v
			}
			m.mu.Lock()
			issued := m.n
			m.mu.Unlock()
			for _, mode := range []os.FileMode{0o644, 0o640, 0o604} {
				code, stderr := login(c, mode)
				if code != clierr.ExitUsage || !strings.Contains(stderr, tc.what+" "+tc.file) ||
					!strings.Contains(stderr, "chmod 600 "+tc.file) || !strings.Contains(stderr, "--allow-insecure-key-file") {
					t.Fatalf("mode %04o: exit %d: %s", mode, code, stderr)
				}
			}
			m.mu.Lock()
			if m.n != issued {
				t.Errorf("a refused file still reached the token endpoint: %d tokens issued", m.n-issued)
			}
			m.mu.Unlock()
			if code, stdout, _ := c.Run("token"); code != clierr.ExitAuthRequired || stdout != "" {
				t.Fatalf("something was stored: token exit %d %q", code, stdout)
			}
			if code, stderr := login(c, 0o600); code != 0 {
				t.Fatalf("0600: exit %d: %s", code, stderr)
			}
			c2, _ := machineCLI(t)
			delete(c2.Vars, "MCPAUTH_CLIENT_SECRET")
			for k, v := range tc.env {
				c2.Vars[k] = v
			}
			if code, stderr := login(c2, 0o644, "--allow-insecure-key-file"); code != 0 {
				t.Fatalf("0644 with --allow-insecure-key-file: exit %d: %s", code, stderr)
			}
			if code, stdout, _ := c2.Run("token"); code != 0 || !strings.HasPrefix(stdout, "at-") {
				t.Fatalf("token after the allowed login: exit %d %q", code, stdout)
			}
		})
	}
}

// Renewals read the key file again, so they check it again: a key loosened
// after login is refused (exit 2, chmod hint), unless the login allowed it.
func TestMachineRenewalRefusesExposedKey(t *testing.T) {
	skipWithoutModes(t)
	m := newMachineServer(t, false)
	keyFile, pub := ecPEMKey(t)
	c, clk := machineCLI(t)
	delete(c.Vars, "MCPAUTH_CLIENT_SECRET")
	m.mu.Lock()
	m.clientKey, m.now = pub, clk.Now
	m.mu.Unlock()
	args := []string{"login", m.srv.URL + "/mcp", "--client-credentials", "--client-id", "bot", "--key-id", "k1", "--private-key-file", keyFile}
	if code, _, stderr := c.Run(args...); code != 0 {
		t.Fatalf("login: exit %d %s", code, stderr)
	}
	if err := os.Chmod(keyFile, 0o644); err != nil {
		t.Fatal(err)
	}
	clk.move(2 * time.Minute)
	code, stdout, stderr := c.Run("token")
	if code != clierr.ExitUsage || stdout != "" || !strings.Contains(stderr, "chmod 600 "+keyFile) {
		t.Fatalf("renewal with a 0644 key: exit %d %q %s", code, stdout, stderr)
	}
	if code, _, stderr := c.Run(append(args, "--allow-insecure-key-file")...); code != 0 {
		t.Fatalf("login --allow-insecure-key-file: exit %d %s", code, stderr)
	}
	clk.move(2 * time.Minute)
	if code, stdout, stderr := c.Run("token"); code != 0 || stdout != "at-3\n" {
		t.Fatalf("renewal the login allowed: exit %d %q %s", code, stdout, stderr)
	}
}
