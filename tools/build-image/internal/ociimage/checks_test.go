package ociimage_test

import (
	"archive/tar"
	"bufio"
	"bytes"
	"debug/elf"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	v1 "github.com/google/go-containerregistry/pkg/v1"
)

func checkConfig(t *testing.T, img v1.Image, plat v1.Platform) {
	t.Helper()
	cf, err := img.ConfigFile()
	if err != nil {
		t.Fatal(err)
	}
	c := cf.Config
	if cf.OS != plat.OS || cf.Architecture != plat.Architecture {
		t.Errorf("platform %s/%s, want %s", cf.OS, cf.Architecture, plat.String())
	}
	if c.User != "65532:65532" {
		t.Errorf("User = %q, want non-root 65532:65532", c.User)
	}
	if !slices.Equal(c.Entrypoint, []string{"/mcpauth"}) || !slices.Equal(c.Cmd, []string{"serve", "--addr", "0.0.0.0:8080"}) {
		t.Errorf("Entrypoint %q Cmd %q", c.Entrypoint, c.Cmd)
	}
	if _, ok := c.ExposedPorts["8080/tcp"]; !ok || len(c.ExposedPorts) != 1 {
		t.Errorf("ExposedPorts = %v", c.ExposedPorts)
	}
	if !slices.Contains(c.Env, "MCPAUTH_DB=/data/mcpauth.db") {
		t.Errorf("Env = %q, want the database on /data", c.Env)
	}
	if c.Labels["org.opencontainers.image.version"] != testVersion || c.Labels["org.opencontainers.image.source"] != "https://example.com/mcpauth" {
		t.Errorf("Labels = %v", c.Labels)
	}
}

type file struct {
	hdr  *tar.Header
	data []byte
}

// layerFiles reads the image's only layer.
func layerFiles(t *testing.T, img v1.Image) map[string]file {
	t.Helper()
	layers, err := img.Layers()
	if err != nil || len(layers) != 1 {
		t.Fatalf("layers: %d, %v", len(layers), err)
	}
	rc, err := layers[0].Uncompressed()
	if err != nil {
		t.Fatal(err)
	}
	defer rc.Close()
	files := map[string]file{}
	tr := tar.NewReader(rc)
	for {
		h, err := tr.Next()
		if errors.Is(err, io.EOF) {
			return files
		}
		if err != nil {
			t.Fatal(err)
		}
		b, err := io.ReadAll(tr)
		if err != nil {
			t.Fatal(err)
		}
		files[h.Name] = file{h, b}
	}
}

func checkFiles(t *testing.T, files map[string]file, certs []byte) {
	t.Helper()
	if f := files["mcpauth"]; f.hdr == nil || f.hdr.Mode != 0o755 || f.hdr.Uid != 0 {
		t.Errorf("/mcpauth: %+v", f.hdr)
	}
	if f := files["data/"]; f.hdr == nil || f.hdr.Typeflag != tar.TypeDir || f.hdr.Uid != 65532 || f.hdr.Gid != 65532 {
		t.Errorf("/data must be a directory the user owns: %+v", f.hdr)
	}
	if !bytes.Contains(files["etc/passwd"].data, []byte("nonroot:x:65532:65532:")) || !bytes.Contains(files["etc/group"].data, []byte("nonroot:x:65532:")) {
		t.Errorf("passwd %q group %q", files["etc/passwd"].data, files["etc/group"].data)
	}
	if !bytes.Equal(files["etc/ssl/certs/ca-certificates.crt"].data, certs) {
		t.Error("CA bundle missing or changed")
	}
}

// checkStatic fails unless exe is a static ELF: no interpreter, nothing to
// link at run time (the image has no libc).
func checkStatic(t *testing.T, exe string) {
	t.Helper()
	ef, err := elf.Open(exe)
	if err != nil {
		t.Fatal(err)
	}
	defer ef.Close()
	for _, p := range ef.Progs {
		if p.Type == elf.PT_INTERP || p.Type == elf.PT_DYNAMIC {
			t.Errorf("/mcpauth has a %v program header: not static", p.Type)
		}
	}
	if ef.Section(".dynamic") != nil || ef.Section(".interp") != nil {
		t.Error("/mcpauth has a dynamic section: not static")
	}
}

// checkHealthz runs exe as `serve` on a free loopback port, learns the port
// from its banner, and expects /healthz to answer ok.
func checkHealthz(t *testing.T, exe, data string) {
	t.Helper()
	if err := os.Mkdir(data, 0o755); err != nil { // the image's /data
		t.Fatal(err)
	}
	cmd := exec.CommandContext(t.Context(), exe, "serve", "--addr", "127.0.0.1:0", "--db", filepath.Join(data, "mcpauth.db"), "--log-level", "error")
	cmd.Env = append(os.Environ(), "XDG_DATA_HOME="+data)
	stderr, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { _ = cmd.Process.Signal(os.Interrupt); _ = cmd.Wait() }()
	var base string
	sc := bufio.NewScanner(stderr)
	var out strings.Builder
	for base == "" && sc.Scan() { // ends with the process's stderr
		out.WriteString(sc.Text() + "\n")
		if b, ok := strings.CutPrefix(sc.Text(), "mcpauth reference server on "); ok {
			base = b
		}
	}
	go func() { _, _ = io.Copy(io.Discard, stderr) }()
	if base == "" {
		t.Fatalf("serve exited without its banner:\n%s", out.String())
	}
	c := &http.Client{Timeout: 30 * time.Second}
	resp, err := c.Get(base + "/healthz")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var body struct{ Status string }
	if err := json.NewDecoder(resp.Body).Decode(&body); err != nil || resp.StatusCode != 200 || body.Status != "ok" {
		t.Errorf("/healthz: %d %+v %v", resp.StatusCode, body, err)
	}
}
