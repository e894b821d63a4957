// Package golden compares a test's output with a file kept in the
// repository (a golden file), so that a change of output shows up in
// review as a diff of that file. Each test package declares its own
// -update flag (flags are per test binary) and passes its value.
//
// Only test code imports this package.
package golden

import (
	"bytes"
	"os"
	"testing"
)

// Check fails tb when got differs from the file at path; with update it
// rewrites the file instead.
func Check(tb testing.TB, path string, got []byte, update bool) {
	tb.Helper()
	if update {
		if err := os.WriteFile(path, got, 0o644); err != nil {
			tb.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		tb.Fatalf("%v (run go test -update to create it)", err)
	}
	if !bytes.Equal(got, want) {
		tb.Errorf("%s differs from the golden file (go test -update rewrites it):\n%s", path, got)
	}
}
