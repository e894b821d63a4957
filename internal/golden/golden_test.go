package golden

import (
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"testing"
)

// recorder is a testing.TB that keeps the failures it is told of; Fatalf
// ends the goroutine, as it does for a test.
type recorder struct {
	testing.TB
	failures []string
}

func (r *recorder) Helper() {}

func (r *recorder) Errorf(format string, args ...any) {
	r.failures = append(r.failures, fmt.Sprintf(format, args...))
}

func (r *recorder) Fatalf(format string, args ...any) {
	r.Errorf(format, args...)
	runtime.Goexit()
}

// check runs Check on its own goroutine and returns its failures.
func check(t *testing.T, path string, got []byte, update bool) []string {
	r := &recorder{TB: t}
	done := make(chan struct{})
	go func() {
		defer close(done)
		Check(r, path, got, update)
	}()
	<-done
	return r.failures
}

func TestCheck(t *testing.T) {
	path := filepath.Join(t.TempDir(), "out.txt")
	if f := check(t, path, []byte("one\n"), false); len(f) != 1 {
		t.Fatalf("a missing golden file: failures %q, want one", f)
	}
	if f := check(t, path, []byte("one\n"), true); len(f) > 0 {
		t.Fatalf("-update failed: %q", f)
	}
	if b, err := os.ReadFile(path); err != nil || string(b) != "one\n" {
		t.Fatalf("-update wrote %q (%v)", b, err)
	}
	if f := check(t, path, []byte("one\n"), false); len(f) > 0 {
		t.Errorf("the same output failed: %q", f)
	}
	if f := check(t, path, []byte("two\n"), false); len(f) != 1 {
		t.Errorf("other output: failures %q, want one", f)
	}
}
