package keyring

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"sync"
	"testing"
	"time"
)

// Two Stores on one directory contend through the OS lock exactly like two
// processes (flock is per open file description).
func TestConcurrentStores(t *testing.T) {
	dir := t.TempDir()
	mb := newMemBackend()
	var stores [2]*Store
	for i := range stores {
		s, err := Open(Config{Dir: dir, Storage: StorageKeyring, Backend: mb})
		if err != nil {
			t.Fatal(err)
		}
		stores[i] = s
	}
	const perStore = 10
	const shared = "https://shared.example"
	var wg sync.WaitGroup
	errs := make(chan error, 2*perStore*2)
	for i, s := range stores {
		for j := range perStore {
			wg.Add(1)
			go func() {
				defer wg.Done()
				srv := fmt.Sprintf("https://s%d-%d.example", i, j)
				if err := saveBundle(s, srv, "", oauthBundle(srv, srv, 0)); err != nil {
					errs <- err
				}
				if err := saveBundle(s, shared, "", oauthBundle(shared, srv, 0)); err != nil {
					errs <- err
				}
			}()
		}
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Errorf("concurrent Save: %v", err)
	}
	list, err := stores[0].List()
	if err != nil {
		t.Fatal(err)
	}
	if len(list) != 2*perStore+1 {
		t.Fatalf("List has %d entries, want %d", len(list), 2*perStore+1)
	}
	for _, e := range list {
		b, err := loadBundle(stores[1], e.Server, e.Account)
		if err != nil {
			t.Fatalf("Load(%s): %v", e.Server, err)
		}
		if e.Server != shared && b.Resource != e.Server {
			t.Fatalf("Load(%s) returned bundle for %s", e.Server, b.Resource)
		}
	}
}

// childWriter saves entries into the directory the parent names. It runs in
// a separate process (see TestConcurrentProcesses) with file storage, since
// an in-memory keyring cannot be shared across processes.
func childWriter() error {
	dir, prefix := os.Getenv("MCPAUTH_TEST_DIR"), os.Getenv("MCPAUTH_TEST_PREFIX")
	n, err := strconv.Atoi(os.Getenv("MCPAUTH_TEST_COUNT"))
	if dir == "" || prefix == "" || err != nil {
		return errors.New("missing MCPAUTH_TEST_DIR, _PREFIX or _COUNT")
	}
	s, err := Open(Config{Dir: dir, Storage: StorageFile})
	if err != nil {
		return err
	}
	for i := range n {
		srv := fmt.Sprintf("https://%s-%d.example", prefix, i)
		if err := saveBundle(s, srv, "", oauthBundle(srv, prefix, 0)); err != nil {
			return err
		}
		if err := saveBundle(s, "https://shared.example", "", oauthBundle("https://shared.example", prefix, 0)); err != nil {
			return err
		}
		if err := s.PutRegistration("https://as.example", srv, []byte(`{"client_id":"`+prefix+`"}`)); err != nil {
			return err
		}
	}
	return nil
}

func TestConcurrentProcesses(t *testing.T) {
	dir := t.TempDir()
	const n = 15
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	var cmds []*exec.Cmd
	for _, prefix := range []string{"p1", "p2"} {
		cmd := exec.CommandContext(ctx, os.Args[0], "-test.run=^$")
		cmd.Env = append(os.Environ(), childModeEnv+"=writer", "MCPAUTH_TEST_DIR="+dir,
			"MCPAUTH_TEST_PREFIX="+prefix, "MCPAUTH_TEST_COUNT="+strconv.Itoa(n))
		cmd.Stdout, cmd.Stderr = os.Stderr, os.Stderr
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		cmds = append(cmds, cmd)
	}
	for _, cmd := range cmds {
		if err := cmd.Wait(); err != nil {
			t.Fatalf("writer process: %v", err)
		}
	}
	s, err := Open(Config{Dir: dir, Storage: StorageFile})
	if err != nil {
		t.Fatal(err)
	}
	list, err := s.List()
	if err != nil {
		t.Fatal(err)
	}
	if len(list) != 2*n+1 {
		t.Fatalf("List has %d entries after two concurrent writers, want %d", len(list), 2*n+1)
	}
	for _, e := range list {
		if _, err := loadBundle(s, e.Server, e.Account); err != nil {
			t.Fatalf("Load(%s): %v", e.Server, err)
		}
	}
	for _, prefix := range []string{"p1", "p2"} {
		for i := range n {
			if _, ok := s.GetRegistration("https://as.example", fmt.Sprintf("https://%s-%d.example", prefix, i)); !ok {
				t.Fatalf("registration %s-%d lost under concurrent writes", prefix, i)
			}
		}
	}
}

func TestLockEntry(t *testing.T) {
	s, _, _ := openMem(t)
	unlock, err := s.LockEntry("https://a.example", "", 0)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.LockEntry("https://a.example", "default", 100*time.Millisecond); !errors.Is(err, ErrLocked) {
		t.Fatalf("second LockEntry: got %v, want ErrLocked", err)
	}
	other, err := s.LockEntry("https://b.example", "", 100*time.Millisecond)
	if err != nil {
		t.Fatalf("LockEntry of another entry: %v", err)
	}
	other()
	// The entry lock does not block the store's own operations.
	if err := saveBundle(s, "https://a.example", "", oauthBundle("https://a.example", "l", 0)); err != nil {
		t.Fatalf("Save while entry locked: %v", err)
	}
	if err := unlock(); err != nil {
		t.Fatal(err)
	}
	again, err := s.LockEntry("https://a.example", "", 100*time.Millisecond)
	if err != nil {
		t.Fatalf("LockEntry after unlock: %v", err)
	}
	again()
}

func TestStoreLockTimeout(t *testing.T) {
	dir := t.TempDir()
	s, err := Open(Config{Dir: dir, Storage: StorageFile, LockTimeout: 100 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	held, err := lockFile(filepath.Join(dir, ".lock"), time.Second) // another "process" mid-write
	if err != nil {
		t.Fatal(err)
	}
	defer held()
	if err := saveBundle(s, "https://a.example", "", oauthBundle("https://a.example", "x", 0)); !errors.Is(err, ErrLocked) {
		t.Fatalf("Save with store locked: got %v, want ErrLocked", err)
	}
}
