package keyring

// Tests against the real OS keyring (Secret Service over D-Bus). They need a
// session bus with an unlocked keyring daemon:
//
//	scripts/with-keyring.sh go test -race -run SecretService ./keyring/
//
// Without one they skip, or fail when CI=true.

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/mcpauth/mcpauth/internal/testenv"
)

const ssTimeout = 5 * time.Second

func secretServiceUnavailable(t *testing.T, format string, args ...any) {
	t.Helper()
	testenv.Missing(t, testenv.SecretService, fmt.Sprintf(format, args...))
}

// secretServiceStore opens a keyring-mode store over the real OS backend,
// under a service name unique to this test so it never touches real
// mcpauth items.
func secretServiceStore(t *testing.T, dir string) (*Store, string) {
	t.Helper()
	if os.Getenv("DBUS_SESSION_BUS_ADDRESS") == "" {
		// Do not even try: with no address godbus may autolaunch a bus.
		secretServiceUnavailable(t, "DBUS_SESSION_BUS_ADDRESS is unset")
	}
	rnd := make([]byte, 6)
	rand.Read(rnd)
	svc := "mcpauth-test-" + hex.EncodeToString(rnd)
	s, err := Open(Config{Dir: dir, Storage: StorageKeyring, Backend: OSBackend{}, ServiceName: svc, Timeout: ssTimeout})
	if err != nil {
		secretServiceUnavailable(t, "probe failed: %v", err)
	}
	return s, svc
}

// cleanupItems removes test items from the real keyring whatever the test did.
func cleanupItems(t *testing.T, svc string, keys ...[2]string) {
	t.Cleanup(func() {
		for _, k := range keys {
			_ = OSBackend{}.Delete(svc+":"+k[0], k[1])
		}
	})
}

func TestSecretServiceStoreReadOverwriteDelete(t *testing.T) {
	dir := t.TempDir()
	s, svc := secretServiceStore(t, dir)
	const srv, acct = "https://ss.example/mcp", "alice"
	cleanupItems(t, svc, [2]string{srv, acct})

	b1 := oauthBundle(srv, "one", 0)
	if err := saveBundle(s, srv, acct, b1); err != nil {
		t.Fatalf("Save: %v", err)
	}
	assertBundle(t, s, srv, acct, b1)

	// The real keyring item holds just the key.
	v, err := OSBackend{}.Get(svc+":"+srv, acct)
	if err != nil {
		t.Fatalf("OSBackend.Get of the entry key: %v", err)
	}
	if _, err := decodeKey(v); err != nil || len(v) > 64 {
		t.Fatalf("keyring item is %d bytes (%v), want a short encoded 256-bit key", len(v), err)
	}
	// Cross-check from outside the process when libsecret's CLI is present.
	if path, err := exec.LookPath("secret-tool"); err == nil {
		out, err := exec.Command(path, "lookup", "service", svc+":"+srv, "username", acct).Output()
		if err != nil || strings.TrimSpace(string(out)) != v {
			t.Fatalf("secret-tool lookup: err %v, value matches: %v", err, strings.TrimSpace(string(out)) == v)
		}
	}

	// A fresh Store (the next CLI run) reads it back from the real keyring.
	s2, err := Open(Config{Dir: dir, Storage: StorageKeyring, Backend: OSBackend{}, ServiceName: svc, Timeout: ssTimeout})
	if err != nil {
		t.Fatal(err)
	}
	assertBundle(t, s2, srv, acct, b1)

	b2 := oauthBundle(srv, "two", 100)
	if err := saveBundle(s2, srv, acct, b2); err != nil {
		t.Fatalf("Save overwrite: %v", err)
	}
	assertBundle(t, s, srv, acct, b2)
	if v2, err := (OSBackend{}).Get(svc+":"+srv, acct); err != nil || v2 != v {
		t.Fatalf("key after overwrite changed or missing (err %v)", err)
	}

	if err := s.Delete(srv, acct); err != nil {
		t.Fatalf("Delete: %v", err)
	}
	if _, err := loadBundle(s, srv, acct); !errors.Is(err, ErrNotFound) {
		t.Fatalf("Load after Delete: got %v, want ErrNotFound", err)
	}
	if _, err := (OSBackend{}).Get(svc+":"+srv, acct); !errors.Is(err, ErrNotFound) {
		t.Fatalf("keyring item after Delete: got %v, want ErrNotFound", err)
	}
}

func TestSecretServiceLargeBundle(t *testing.T) {
	s, svc := secretServiceStore(t, t.TempDir())
	for _, size := range []int{8 << 10, 100 << 10} {
		srv := fmt.Sprintf("https://large-%d.example/mcp", size)
		cleanupItems(t, svc, [2]string{srv, DefaultAccount})
		b := oauthBundle(srv, "large", size)
		if err := saveBundle(s, srv, "", b); err != nil {
			t.Fatalf("Save %d B bundle: %v", size, err)
		}
		assertBundle(t, s, srv, "", b)
		if err := s.Delete(srv, ""); err != nil {
			t.Fatal(err)
		}
	}
}

func TestSecretServiceServersAndAccountsSideBySide(t *testing.T) {
	s, svc := secretServiceStore(t, t.TempDir())
	var keys [][2]string
	want := map[[2]string]testBundle{}
	for _, srv := range []string{"https://a.example/mcp", "https://b.example/mcp"} {
		for _, acct := range []string{"work", "personal"} {
			k := [2]string{srv, acct}
			keys = append(keys, k)
			want[k] = oauthBundle(srv, srv+"#"+acct, 0)
		}
	}
	cleanupItems(t, svc, keys...)
	for k, b := range want {
		if err := saveBundle(s, k[0], k[1], b); err != nil {
			t.Fatalf("Save(%v): %v", k, err)
		}
	}
	seen := map[string]bool{}
	for k, b := range want {
		assertBundle(t, s, k[0], k[1], b)
		v, err := OSBackend{}.Get(svc+":"+k[0], k[1])
		if err != nil {
			t.Fatalf("keyring item %v: %v", k, err)
		}
		if seen[v] {
			t.Fatalf("two entries share one key")
		}
		seen[v] = true
	}
	if err := s.Delete(keys[0][0], keys[0][1]); err != nil {
		t.Fatal(err)
	}
	delete(want, keys[0])
	for k, b := range want {
		assertBundle(t, s, k[0], k[1], b)
	}
	list, err := s.List()
	if err != nil || len(list) != 3 {
		t.Fatalf("List = %+v, %v; want 3 entries", list, err)
	}
}

const noBusAddress = "unix:path=/nonexistent/mcpauth-test-bus"

// With the session bus address pointing nowhere, the real OS backend must
// give ErrKeyringUnavailable within the timeout, never hang. It runs in a
// child process so the parent's environment (and godbus's process-wide
// session connection) stays untouched. It needs no Secret Service, so it
// never skips.
func TestSecretServiceNoSessionBus(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, os.Args[0], "-test.run=^$")
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "DBUS_SESSION_BUS_ADDRESS=") {
			cmd.Env = append(cmd.Env, kv)
		}
	}
	cmd.Env = append(cmd.Env, "DBUS_SESSION_BUS_ADDRESS="+noBusAddress, childModeEnv+"=nobus")
	out, err := cmd.CombinedOutput()
	t.Logf("child output:\n%s", out)
	if ctx.Err() != nil {
		t.Fatal("child hung: killed after 1 minute")
	}
	if err != nil || !strings.Contains(string(out), "nobus-child: ok") {
		t.Fatalf("child failed: %v", err)
	}
}

// childNoBus is the body of TestSecretServiceNoSessionBus, run in the child.
func childNoBus() error {
	if os.Getenv("DBUS_SESSION_BUS_ADDRESS") != noBusAddress {
		return errors.New("child started without the bogus bus address")
	}
	dir, err := os.MkdirTemp("", "mcpauth-nobus-*")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	const timeout = 2 * time.Second
	within := func(what string, fn func() error) error {
		start := time.Now()
		err := fn()
		if d := time.Since(start); d > timeout+time.Second {
			return fmt.Errorf("%s took %s, timeout is %s", what, d, timeout)
		}
		if !errors.Is(err, ErrKeyringUnavailable) {
			return fmt.Errorf("%s: got %v, want ErrKeyringUnavailable", what, err)
		}
		fmt.Printf("%s: %v\n", what, err)
		return nil
	}
	cfg := Config{Dir: dir, Backend: OSBackend{}, Timeout: timeout, ServiceName: "mcpauth-test-nobus"}

	for _, mode := range []Storage{StorageAuto, StorageKeyring} {
		c := cfg
		c.Storage = mode
		if err := within("Open "+string(mode), func() error { _, err := Open(c); return err }); err != nil {
			return err
		}
	}

	// An entry written while the keyring worked (an in-memory keyring
	// stands in for that earlier session) cannot be read now, and says so.
	mc := cfg
	mc.Storage, mc.Backend = StorageKeyring, newMemBackend()
	ms, err := Open(mc)
	if err != nil {
		return err
	}
	if err := saveBundle(ms, "https://k.example", "", oauthBundle("https://k.example", "k", 0)); err != nil {
		return err
	}

	fc := cfg
	fc.AllowFileFallback = true
	s, err := Open(fc)
	if err != nil {
		return fmt.Errorf("Open auto with fallback: %w", err)
	}
	if s.Storage() != StorageFile || !errors.Is(s.FallbackReason(), ErrKeyringUnavailable) {
		return fmt.Errorf("fallback store: storage %s, reason %v", s.Storage(), s.FallbackReason())
	}
	if err := within("Load keyring entry", func() error { _, err := loadBundle(s, "https://k.example", ""); return err }); err != nil {
		return err
	}
	if err := within("CheckKeyring", s.CheckKeyring); err != nil {
		return err
	}
	b := oauthBundle("https://f.example", "f", 0)
	if err := saveBundle(s, "https://f.example", "", b); err != nil {
		return fmt.Errorf("file Save: %w", err)
	}
	got, err := loadBundle(s, "https://f.example", "")
	if err != nil || got.AccessToken != b.AccessToken {
		return fmt.Errorf("file Load: %v", err)
	}
	return nil
}

// Issue 20 (2) against the real keyring: a registration's client secret is
// sealed under a key in the Secret Service and comes back in the next run.
func TestSecretServiceRegistrationSecret(t *testing.T) {
	dir := t.TempDir()
	s, svc := secretServiceStore(t, dir)
	t.Cleanup(func() { _ = OSBackend{}.Delete(s.registrationKeyItem()) })
	if err := s.PutRegistration(regIssuer, regResource, []byte(regDoc)); err != nil {
		t.Fatalf("PutRegistration: %v", err)
	}
	assertNoSecretOnDisk(t, dir)
	s2, err := Open(Config{Dir: dir, Storage: StorageKeyring, Backend: OSBackend{}, ServiceName: svc, Timeout: ssTimeout})
	if err != nil {
		t.Fatal(err)
	}
	got, ok := s2.GetRegistration(regIssuer, regResource)
	if !ok {
		t.Fatal("registration missing in the next run")
	}
	assertJSONEqual(t, got, regDoc)
}

// Issue 21: with DBUS_SESSION_BUS_ADDRESS unset but a bus socket at
// $XDG_RUNTIME_DIR/bus (as systemd user sessions provide), that bus is
// used. A child process, so the parent's environment and godbus's cached
// connection stay untouched.
func TestSecretServiceRuntimeDirBus(t *testing.T) {
	addr := os.Getenv("DBUS_SESSION_BUS_ADDRESS")
	if addr == "" {
		secretServiceUnavailable(t, "DBUS_SESSION_BUS_ADDRESS is unset")
	}
	sock, ok := strings.CutPrefix(addr, "unix:path=")
	if !ok {
		t.Skipf("session bus %q is not a unix:path socket", addr)
	}
	sock, _, _ = strings.Cut(sock, ",")
	runtimeDir, err := os.MkdirTemp("", "rt") // short: a socket path has a length limit
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(runtimeDir) })
	if err := os.Symlink(sock, runtimeDir+"/bus"); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, os.Args[0], "-test.run=^$")
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "DBUS_SESSION_BUS_ADDRESS=") && !strings.HasPrefix(kv, "XDG_RUNTIME_DIR=") {
			cmd.Env = append(cmd.Env, kv)
		}
	}
	cmd.Env = append(cmd.Env, "XDG_RUNTIME_DIR="+runtimeDir, childModeEnv+"=runtimebus")
	out, err := cmd.CombinedOutput()
	t.Logf("child output:\n%s", out)
	if err != nil || !strings.Contains(string(out), "runtimebus-child: ok") {
		t.Fatalf("child failed: %v", err)
	}
}

// childRuntimeBus is the body of TestSecretServiceRuntimeDirBus.
func childRuntimeBus() error {
	want := "unix:path=" + os.Getenv("XDG_RUNTIME_DIR") + "/bus" // a temp path: nothing to escape
	if os.Getenv("DBUS_SESSION_BUS_ADDRESS") != "" {
		return errors.New("child started with a bus address")
	}
	dir, err := os.MkdirTemp("", "mcpauth-rtbus-*")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	rnd := make([]byte, 6)
	rand.Read(rnd)
	svc := "mcpauth-test-" + hex.EncodeToString(rnd)
	s, err := Open(Config{Dir: dir, Storage: StorageKeyring, Backend: OSBackend{}, ServiceName: svc, Timeout: ssTimeout})
	if err != nil {
		return fmt.Errorf("Open: %w", err)
	}
	if got := os.Getenv("DBUS_SESSION_BUS_ADDRESS"); got != want {
		return fmt.Errorf("DBUS_SESSION_BUS_ADDRESS = %q, want %q", got, want)
	}
	const srv = "https://rt.example/mcp"
	b := oauthBundle(srv, "rt", 0)
	if err := saveBundle(s, srv, "", b); err != nil {
		return fmt.Errorf("Save: %w", err)
	}
	got, err := loadBundle(s, srv, "")
	if err != nil || got.AccessToken != b.AccessToken {
		return fmt.Errorf("Load: %v", err)
	}
	return s.Delete(srv, "")
}
