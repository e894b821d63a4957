package keyring

import (
	"cmp"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mcpauth/mcpauth/internal/testenv"
)

// childModeEnv makes the test binary act as a helper process (see
// runChild) instead of running tests. Helper processes give real
// cross-process lock contention and an environment we may change without
// touching the parent's.
const childModeEnv = "MCPAUTH_KEYRING_TEST_CHILD"

func TestMain(m *testing.M) {
	if mode := os.Getenv(childModeEnv); mode != "" {
		os.Exit(runChild(mode))
	}
	os.Exit(testenv.Main(m))
}

func runChild(mode string) int {
	var err error
	switch mode {
	case "writer":
		err = childWriter()
	case "nobus":
		err = childNoBus()
	case "runtimebus":
		err = childRuntimeBus()
	default:
		err = fmt.Errorf("unknown child mode %q", mode)
	}
	if err != nil {
		fmt.Fprintf(os.Stderr, "%s-child: FAIL: %v\n", mode, err)
		return 1
	}
	fmt.Printf("%s-child: ok\n", mode)
	return 0
}

// memBackend is an in-memory Backend. It is a fake on purpose: unit tests
// must run on machines without a D-Bus session. The real Secret Service is
// exercised by keyring_secretservice_test.go under with-keyring.sh.
// maxValue, when set, rejects larger values the way Windows Credential
// Manager rejects secrets over 2560 bytes.
type memBackend struct {
	mu       sync.Mutex
	items    map[[2]string]string
	maxValue int
}

func newMemBackend() *memBackend { return &memBackend{items: map[[2]string]string{}} }

func (m *memBackend) Get(service, user string) (string, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	v, ok := m.items[[2]string{service, user}]
	if !ok {
		return "", ErrNotFound
	}
	return v, nil
}

func (m *memBackend) Set(service, user, secret string) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.maxValue > 0 && len(secret) > m.maxValue {
		return errors.New("data passed to Set was too big")
	}
	m.items[[2]string{service, user}] = secret
	return nil
}

func (m *memBackend) Delete(service, user string) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	k := [2]string{service, user}
	if _, ok := m.items[k]; !ok {
		return ErrNotFound
	}
	delete(m.items, k)
	return nil
}

func (m *memBackend) snapshot() map[[2]string]string {
	m.mu.Lock()
	defer m.mu.Unlock()
	out := make(map[[2]string]string, len(m.items))
	for k, v := range m.items {
		out[k] = v
	}
	return out
}

// hangingBackend never answers until released: a legitimate fake for a
// locked Secret Service waiting on an unlock prompt nobody sees
// (proton-drive-sync#3), which cannot be staged reliably with a real daemon.
type hangingBackend struct{ release chan struct{} }

func newHangingBackend(t *testing.T) *hangingBackend {
	h := &hangingBackend{release: make(chan struct{})}
	t.Cleanup(func() { close(h.release) }) // let the abandoned goroutines end
	return h
}

func (h *hangingBackend) Get(string, string) (string, error) { <-h.release; return "", ErrNotFound }
func (h *hangingBackend) Set(string, string, string) error   { <-h.release; return nil }
func (h *hangingBackend) Delete(string, string) error        { <-h.release; return nil }

// failingBackend answers every call with err, like go-keyring does when
// D-Bus has no Secret Service ("The name org.freedesktop.secrets was not
// provided by any .service files"). A fake for the same reason as
// memBackend; the real failure is covered by TestSecretServiceNoSessionBus.
type failingBackend struct{ err error }

func (f failingBackend) Get(string, string) (string, error) { return "", f.err }
func (f failingBackend) Set(string, string, string) error   { return f.err }
func (f failingBackend) Delete(string, string) error        { return f.err }

type fakeClock struct {
	mu  sync.Mutex
	now time.Time
}

func (c *fakeClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

func (c *fakeClock) Advance(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.now = c.now.Add(d)
}

var t0 = time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)

// openMem opens a keyring-mode store over a fresh memBackend in a temp dir.
func openMem(t *testing.T) (*Store, *memBackend, *fakeClock) {
	t.Helper()
	mb := newMemBackend()
	clk := &fakeClock{now: t0}
	s, err := Open(Config{Dir: t.TempDir(), Storage: StorageKeyring, Backend: mb, Clock: clk})
	if err != nil {
		t.Fatalf("Open: %v", err)
	}
	return s, mb, clk
}

// testBundle stands for what a caller stores: the store sees only its
// JSON bytes and the metadata saveBundle derives from it.
type testBundle struct {
	Kind         string    `json:"kind,omitempty"`
	Issuer       string    `json:"issuer,omitempty"`
	Resource     string    `json:"resource,omitempty"`
	AccessToken  string    `json:"access_token,omitempty"`
	TokenType    string    `json:"token_type,omitempty"`
	RefreshToken string    `json:"refresh_token,omitempty"`
	Expiry       time.Time `json:"expiry,omitzero"`
	Scope        string    `json:"scope,omitempty"`
	APIKey       string    `json:"api_key,omitempty"`
	ClientID     string    `json:"client_id,omitempty"`
}

// testMeta is the metadata saveBundle lists for a testBundle.
type testMeta struct {
	Kind   string    `json:"kind"`
	Expiry time.Time `json:"expiry,omitzero"`
}

func saveBundle(s *Store, server, account string, b testBundle) error {
	data, err := json.Marshal(b)
	if err != nil {
		return err
	}
	meta, err := json.Marshal(testMeta{Kind: cmp.Or(b.Kind, "oauth"), Expiry: b.Expiry})
	if err != nil {
		return err
	}
	return s.Save(server, account, data, meta)
}

func loadBundle(s *Store, server, account string) (testBundle, error) {
	data, err := s.Load(server, account)
	if err != nil {
		return testBundle{}, err
	}
	var b testBundle
	if err := json.Unmarshal(data, &b); err != nil {
		return testBundle{}, fmt.Errorf("stored bytes do not decode: %w", err)
	}
	return b, nil
}

func oauthBundle(server, marker string, extra int) testBundle {
	return testBundle{
		Issuer:       "https://as.example/" + marker,
		Resource:     server,
		AccessToken:  "at-" + marker + "-" + strings.Repeat("x", extra),
		TokenType:    "Bearer",
		RefreshToken: "rt-" + marker,
		Expiry:       t0.Add(time.Hour),
		Scope:        "mcp",
		ClientID:     "client-" + marker,
	}
}
