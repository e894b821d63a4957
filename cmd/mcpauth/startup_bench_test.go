package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"testing"
)

// BenchmarkStartup compares the whole `mcpauth version` process with a plain
// Go hello world built the same way, run back to back in one benchmark run
// so the ratio is fair on a noisy machine. Both are built as releases are
// (.goreleaser.yaml, scripts/build-image.sh): a plain `go build` with cgo
// available links mcpauth dynamically (net and os/user use cgo), and loading
// libc then costs 0.7 to 1.2 ms that no shipped binary pays, while the hello
// world stays static:
//
//	go test -run '^$' -bench Startup ./cmd/mcpauth/
//
// The ratio of the two ns/op is what BENCHMARKS.md reports.
func BenchmarkStartup(b *testing.B) {
	dir := b.TempDir()
	hello := filepath.Join(dir, "hello.go")
	if err := os.WriteFile(hello, []byte("package main\n\nimport \"fmt\"\n\nfunc main() { fmt.Println(\"hello\") }\n"), 0o644); err != nil {
		b.Fatal(err)
	}
	bins := map[string][]string{}
	for name, src := range map[string]string{"hello": hello, "mcpauth": "."} {
		bin := filepath.Join(dir, name)
		build := exec.Command("go", "build", "-trimpath", "-ldflags=-s -w", "-o", bin, src)
		build.Env = append(os.Environ(), "CGO_ENABLED=0")
		if out, err := build.CombinedOutput(); err != nil {
			b.Fatalf("building %s: %v\n%s", name, err, out)
		}
		bins[name] = []string{bin}
	}
	bins["mcpauth"] = append(bins["mcpauth"], "version")
	for _, name := range []string{"hello", "mcpauth"} {
		b.Run(name, func(b *testing.B) {
			for b.Loop() {
				if out, err := exec.Command(bins[name][0], bins[name][1:]...).Output(); err != nil || len(out) == 0 {
					b.Fatalf("%s: %v", name, err)
				}
			}
		})
	}
}
