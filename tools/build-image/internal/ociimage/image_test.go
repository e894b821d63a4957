package ociimage_test

import (
	"archive/tar"
	"errors"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/layout"
	"github.com/google/go-containerregistry/pkg/v1/tarball"

	"github.com/mcpauth/mcpauth/tools/build-image/internal/ociimage"
)

const testVersion = "v0.0.0-imagetest"

// TestServeImage builds the image for this machine's architecture, writes
// both tarballs, reads them back, checks the config and the files, and runs
// the binary it holds: `version`, then `serve` answering /healthz.
func TestServeImage(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("the image's binary runs on linux only")
	}
	if testing.Short() {
		// It rebuilds the whole binary: minutes from a cold cache.
		t.Skip("builds the release binary: skipped with -short")
	}
	dir := t.TempDir()
	plat := v1.Platform{OS: "linux", Architecture: runtime.GOARCH}
	bin := filepath.Join(dir, "mcpauth-build")
	if err := ociimage.BuildBinary(t.Context(), "../../../..", plat, testVersion, bin); err != nil {
		t.Fatal(err)
	}
	binary, err := os.ReadFile(bin)
	if err != nil {
		t.Fatal(err)
	}
	certs := []byte("-----BEGIN CERTIFICATE-----\ntest\n-----END CERTIFICATE-----\n")
	cfg := ociimage.Config{Version: testVersion, Source: "https://example.com/mcpauth", CACerts: certs}
	img, err := ociimage.Image(binary, plat, cfg)
	if err != nil {
		t.Fatal(err)
	}
	again, err := ociimage.Image(binary, plat, cfg)
	if err != nil {
		t.Fatal(err)
	}
	if d1, d2 := digest(t, img), digest(t, again); d1 != d2 {
		t.Errorf("same inputs, different digests: %s, %s", d1, d2)
	}
	idx, err := ociimage.Index([]v1.Image{img})
	if err != nil {
		t.Fatal(err)
	}
	ociPath, dockerPath := filepath.Join(dir, "image.oci.tar"), filepath.Join(dir, "image.docker.tar")
	if err := ociimage.WriteOCIArchive(ociPath, idx, "mcpauth:"+testVersion); err != nil {
		t.Fatal(err)
	}
	if err := ociimage.WriteDockerArchive(dockerPath, img, "mcpauth:"+testVersion); err != nil {
		t.Fatal(err)
	}
	fromDocker, err := tarball.ImageFromPath(dockerPath, nil)
	if err != nil {
		t.Fatal(err)
	}
	fromOCI := imageFromOCIArchive(t, ociPath, plat)
	if digest(t, fromOCI) != digest(t, img) {
		t.Errorf("OCI archive holds %s, built %s", digest(t, fromOCI), digest(t, img))
	}
	// docker load's format has its own manifest; the config is the same.
	if c1, c2 := configName(t, fromDocker), configName(t, img); c1 != c2 {
		t.Errorf("docker archive's config %s, built %s", c1, c2)
	}
	checkConfig(t, fromOCI, plat)
	files := layerFiles(t, fromOCI)
	checkFiles(t, files, certs)
	exe := filepath.Join(dir, "mcpauth")
	if err := os.WriteFile(exe, files["mcpauth"].data, 0o755); err != nil {
		t.Fatal(err)
	}
	checkStatic(t, exe)
	out, err := exec.CommandContext(t.Context(), exe, "version").Output()
	if err != nil || !strings.HasPrefix(string(out), "mcpauth "+testVersion+" ") {
		t.Errorf("version: %q, %v", out, err)
	}
	checkHealthz(t, exe, filepath.Join(dir, "data"))
}

func configName(t *testing.T, img v1.Image) v1.Hash {
	t.Helper()
	h, err := img.ConfigName()
	if err != nil {
		t.Fatal(err)
	}
	return h
}

func digest(t *testing.T, img v1.Image) v1.Hash {
	t.Helper()
	h, err := img.Digest()
	if err != nil {
		t.Fatal(err)
	}
	return h
}

// imageFromOCIArchive unpacks the OCI layout and returns the image for plat
// from the index index.json names.
func imageFromOCIArchive(t *testing.T, path string, plat v1.Platform) v1.Image {
	t.Helper()
	dir := t.TempDir()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	tr := tar.NewReader(f)
	for {
		h, err := tr.Next()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		p := filepath.Join(dir, filepath.FromSlash(h.Name))
		if h.Typeflag == tar.TypeDir {
			err = os.MkdirAll(p, 0o755)
		} else if b, rerr := io.ReadAll(tr); rerr != nil {
			err = rerr
		} else {
			err = os.WriteFile(p, b, 0o644)
		}
		if err != nil {
			t.Fatal(err)
		}
	}
	root, err := layout.ImageIndexFromPath(dir)
	if err != nil {
		t.Fatal(err)
	}
	rm, err := root.IndexManifest()
	if err != nil || len(rm.Manifests) != 1 {
		t.Fatalf("index.json: %v, %+v", err, rm)
	}
	a := rm.Manifests[0].Annotations
	if a["org.opencontainers.image.ref.name"] != testVersion || a["io.containerd.image.name"] != "docker.io/library/mcpauth:"+testVersion {
		t.Errorf("index.json annotations %v, want the tag and the name Docker uses", a)
	}
	idx, err := root.ImageIndex(rm.Manifests[0].Digest)
	if err != nil {
		t.Fatal(err)
	}
	im, err := idx.IndexManifest()
	if err != nil || len(im.Manifests) != 1 || im.Manifests[0].Platform == nil || !im.Manifests[0].Platform.Equals(plat) {
		t.Fatalf("platform index: %v, %+v", err, im)
	}
	img, err := idx.Image(im.Manifests[0].Digest)
	if err != nil {
		t.Fatal(err)
	}
	return img
}
