package root_test

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/mcpauth/mcpauth/cmd/internal/clierr"
	"github.com/mcpauth/mcpauth/cmd/internal/clitest"
	"github.com/mcpauth/mcpauth/keyring"
	"github.com/mcpauth/mcpauth/keyring/keyringtest"
	"github.com/mcpauth/mcpauth/server/servertest"
)

// The OS keyring cannot run in these tests (keyring/ has the real Secret
// Service tests, cmd/mcpauth/e2e_test.go the real one end to end), so its
// three behaviours are fakes: it works (keyringtest.Memory), it hangs, it
// is absent (below).

// hangingBackend never answers until the test ends, like a Secret Service
// waiting on an unlock prompt nobody sees.
type hangingBackend struct{ release chan struct{} }

func newHangingBackend(t *testing.T) hangingBackend {
	b := hangingBackend{release: make(chan struct{})}
	t.Cleanup(func() { close(b.release) })
	return b
}

func (b hangingBackend) Get(string, string) (string, error) {
	<-b.release
	return "", errors.New("released")
}

func (b hangingBackend) Set(string, string, string) error { <-b.release; return errors.New("released") }

func (b hangingBackend) Delete(string, string) error { <-b.release; return errors.New("released") }

// absentBackend fails at once, as go-keyring does without a D-Bus session.
type absentBackend struct{}

var errNoBus = errors.New("dbus: no session bus (DBUS_SESSION_BUS_ADDRESS unset)")

func (absentBackend) Get(string, string) (string, error) { return "", errNoBus }
func (absentBackend) Set(string, string, string) error   { return errNoBus }
func (absentBackend) Delete(string, string) error        { return errNoBus }

func TestKeyringBackendStoresOnlyCiphertext(t *testing.T) {
	env := servertest.New(t, servertest.Options{})
	c := clitest.New(t, env)
	c.Vars["MCPAUTH_STORAGE"] = "auto"
	c.Backend = &keyringtest.Memory{}
	c.Open = clitest.ApprovingBrowser(t, env, "kim", "approve")
	if code, _, stderr := c.Run("login", env.URL+"/mcp"); code != 0 || !strings.Contains(stderr, "Stored in the OS keyring") {
		t.Fatalf("login: exit %d %s", code, stderr)
	}
	code, tok, _ := c.Run("token")
	tok = strings.TrimSpace(tok)
	if code != 0 || tok == "" {
		t.Fatalf("token: exit %d", code)
	}
	code, stdout, _ := c.Run("status", "-o", "json")
	var entries []struct {
		Backend   string `json:"backend"`
		Protected bool   `json:"protected_by_keyring"`
	}
	if code != 0 || json.Unmarshal([]byte(stdout), &entries) != nil || len(entries) != 1 || entries[0].Backend != "keyring" || !entries[0].Protected {
		t.Fatalf("status: %d %s", code, stdout)
	}
	// The token is on disk only encrypted, under a key in the keyring.
	files, _ := filepath.Glob(filepath.Join(c.Vars["MCPAUTH_CONFIG_DIR"], "*"))
	for _, f := range files {
		data, _ := os.ReadFile(f)
		if strings.Contains(string(data), tok) {
			t.Fatalf("%s holds the access token in clear", f)
		}
	}
	if code, _, stderr := c.Run("logout"); code != 0 {
		t.Fatal(stderr)
	}
	if code, _, _ := c.Run("token"); code != clierr.ExitAuthRequired {
		t.Fatalf("token after logout: %d", code)
	}
}

func TestKeyringHangsOrIsAbsent(t *testing.T) {
	env := servertest.New(t, servertest.Options{})
	tests := []struct {
		name    string
		storage string
		backend func(t *testing.T) keyring.Backend
		want    string
	}{
		{"hangs, auto", "auto", func(t *testing.T) keyring.Backend { return newHangingBackend(t) }, "--storage=file"},
		{"hangs, keyring required", "keyring", func(t *testing.T) keyring.Backend { return newHangingBackend(t) }, "timed out"},
		{"absent, auto", "auto", func(*testing.T) keyring.Backend { return absentBackend{} }, "no session bus"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := clitest.New(t, env)
			c.Vars["MCPAUTH_STORAGE"] = tt.storage
			c.Backend, c.KeyringTimeout = tt.backend(t), 200*time.Millisecond
			within := func(args ...string) (int, string, string) {
				t.Helper()
				start := time.Now()
				code, stdout, stderr := c.Run(args...)
				if d := time.Since(start); d > 5*time.Second {
					t.Fatalf("%v took %s: the keyring timeout did not bound the call", args, d)
				}
				return code, stdout, stderr
			}
			// A command that stores refuses: no silent plain file.
			c.Stdin = "mcpa_key\n"
			code, _, stderr := within("apikey", "set", env.URL)
			if code != clierr.ExitStorage || !strings.Contains(stderr, tt.want) {
				t.Fatalf("apikey set: exit %d, want %d and %q: %s", code, clierr.ExitStorage, tt.want, stderr)
			}
			// Commands that only read answer as usual in auto mode (status 0,
			// token 3 with nothing stored) and say the keyring is missing;
			// --storage=keyring still requires it.
			wantStatus, wantToken := 0, clierr.ExitAuthRequired
			if tt.storage == "keyring" {
				wantStatus, wantToken = clierr.ExitStorage, clierr.ExitStorage
			}
			if code, stdout, stderr := within("status", "-o", "json"); code != wantStatus || !strings.Contains(stderr, tt.want) {
				t.Fatalf("status: exit %d, want %d and %q: %s %s", code, wantStatus, tt.want, stdout, stderr)
			}
			if code, _, stderr := within("token"); code != wantToken {
				t.Fatalf("token: exit %d, want %d: %s", code, wantToken, stderr)
			}
			// The explicit opt-in never touches the keyring.
			if code, _, stderr := c.Run("status", "--storage=file"); code != 0 {
				t.Fatalf("--storage=file: exit %d %s", code, stderr)
			}
		})
	}
}

func TestNoKeyringPromptsOnATerminal(t *testing.T) {
	env := servertest.New(t, servertest.Options{})

	c := clitest.New(t, env)
	c.Vars["MCPAUTH_STORAGE"] = "auto"
	c.Backend, c.TTY = absentBackend{}, true
	c.Open = clitest.ApprovingBrowser(t, env, "lee", "approve")
	c.Stdin = "n\n"
	code, _, stderr := c.Run("login", env.URL+"/mcp")
	if code != clierr.ExitStorage || !strings.Contains(stderr, "Store tokens in a file readable only by you, without keyring protection? [y/N]") {
		t.Fatalf("declined: exit %d %s", code, stderr)
	}

	c.Stdin = "y\n"
	code, _, stderr = c.Run("login", env.URL+"/mcp")
	if code != 0 {
		t.Fatalf("accepted: exit %d %s", code, stderr)
	}
	// The warning comes before the write, not after it (cli/cli#13920).
	warn, done := strings.Index(stderr, "without keyring protection in "), strings.Index(stderr, "Logged in to")
	if warn < 0 || done < 0 || warn > done {
		t.Fatalf("no warning before the write:\n%s", stderr)
	}
	c.TTY, c.Stdin = false, ""
	code, stdout, _ := c.Run("status", "--storage=file")
	if code != 0 || !strings.Contains(stdout, "file (no keyring!)") {
		t.Fatalf("status does not flag the plaintext entry: %s", stdout)
	}
}

// Issue 20 (1): a plain-file entry is used only when file storage is
// chosen: anyone who can write the tokens folder could have planted it.
func TestPlainEntryRefusedWhileUsingTheKeyring(t *testing.T) {
	env := servertest.New(t, servertest.Options{})
	c := clitest.New(t, env)
	// apikey set checks the key with the server first: use a real one.
	planted, err := env.Browser("planter").APIKey(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	c.Stdin = planted + "\n"
	if code, _, stderr := c.Run("apikey", "set", env.URL, "--storage=file"); code != 0 {
		t.Fatalf("apikey set --storage=file: exit %d %s", code, stderr)
	}
	files, _ := filepath.Glob(filepath.Join(c.Vars["MCPAUTH_CONFIG_DIR"], "tok-*.json"))
	if len(files) != 1 {
		t.Fatalf("entry files: %v", files)
	}
	c.Backend = &keyringtest.Memory{}
	for _, storage := range []string{"keyring", "auto"} {
		c.Vars["MCPAUTH_STORAGE"] = storage
		code, stdout, stderr := c.Run("token")
		if code != clierr.ExitStorage || stdout != "" || !strings.Contains(stderr, files[0]) || !strings.Contains(stderr, "--storage=file") {
			t.Fatalf("%s: token: exit %d, stdout %q; want %d naming %s and --storage=file: %s", storage, code, stdout, clierr.ExitStorage, files[0], stderr)
		}
		// status still lists it, marked.
		if code, stdout, _ := c.Run("status"); code != 0 || !strings.Contains(stdout, "file (no keyring!)") {
			t.Fatalf("%s: status: exit %d %s", storage, code, stdout)
		}
	}
	if code, stdout, stderr := c.Run("token", "--storage=file"); code != 0 || strings.TrimSpace(stdout) != planted {
		t.Fatalf("token --storage=file: exit %d %q %s", code, stdout, stderr)
	}
}
