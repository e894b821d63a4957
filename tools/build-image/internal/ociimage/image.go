// Package ociimage builds the container image of `mcpauth serve` without a
// container engine or a registry: a static binary on an empty base, put
// together with go-containerregistry (the library ko is built on).
package ociimage

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"fmt"
	"io"
	"time"

	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/empty"
	"github.com/google/go-containerregistry/pkg/v1/mutate"
	"github.com/google/go-containerregistry/pkg/v1/tarball"
	"github.com/google/go-containerregistry/pkg/v1/types"
)

// The image runs as this non-root user (distroless's "nonroot" numbers).
const (
	UID      = 65532
	DataDir  = "/data"
	Port     = "8080/tcp"
	BinPath  = "/mcpauth"
	CertPath = "/etc/ssl/certs/ca-certificates.crt"
)

// Config is what an image says about itself besides the binary.
type Config struct {
	Version string    // org.opencontainers.image.version
	Source  string    // org.opencontainers.image.source
	CACerts []byte    // CA bundle for an external OIDC issuer; nil leaves it out
	Created time.Time // image and file times; fixed, so equal inputs give equal digests
}

// Image makes the image of binary (a static mcpauth for plat).
func Image(binary []byte, plat v1.Platform, c Config) (v1.Image, error) {
	if c.Created.IsZero() {
		c.Created = time.Unix(0, 0).UTC() // year 1 does not fit a tar header
	}
	rootfs, err := rootFS(binary, c)
	if err != nil {
		return nil, err
	}
	// Compressed once here: given plain bytes, the layer would compress
	// them again on every read (digest, each archive written).
	var gz bytes.Buffer
	zw := gzip.NewWriter(&gz)
	if _, err := zw.Write(rootfs); err != nil {
		return nil, fmt.Errorf("compressing the layer: %w", err)
	}
	if err := zw.Close(); err != nil {
		return nil, fmt.Errorf("compressing the layer: %w", err)
	}
	layer, err := tarball.LayerFromOpener(func() (io.ReadCloser, error) {
		return io.NopCloser(bytes.NewReader(gz.Bytes())), nil
	}, tarball.WithMediaType(types.OCILayer))
	if err != nil {
		return nil, fmt.Errorf("making the layer: %w", err)
	}
	base := mutate.ConfigMediaType(mutate.MediaType(empty.Image, types.OCIManifestSchema1), types.OCIConfigJSON)
	img, err := mutate.Append(base, mutate.Addendum{Layer: layer, History: v1.History{
		Created: v1.Time{Time: c.Created}, CreatedBy: "ociimage: mcpauth " + c.Version,
	}})
	if err != nil {
		return nil, fmt.Errorf("adding the layer: %w", err)
	}
	cf, err := img.ConfigFile()
	if err != nil {
		return nil, fmt.Errorf("reading the config: %w", err)
	}
	cf = cf.DeepCopy()
	cf.OS, cf.Architecture, cf.Variant = plat.OS, plat.Architecture, plat.Variant
	cf.Created = v1.Time{Time: c.Created}
	cf.Config = v1.Config{
		User:         fmt.Sprintf("%d:%d", UID, UID),
		Entrypoint:   []string{BinPath},
		Cmd:          []string{"serve", "--addr", "0.0.0.0:8080"},
		ExposedPorts: map[string]struct{}{Port: {}},
		// MCPAUTH_DB is serve's --db: SQLite on the volume unless a
		// postgres:// URL replaces it. HOME for anything else that looks.
		Env:        []string{"MCPAUTH_DB=" + DataDir + "/mcpauth.db", "HOME=" + DataDir},
		WorkingDir: DataDir,
		Labels: map[string]string{
			"org.opencontainers.image.source":  c.Source,
			"org.opencontainers.image.version": c.Version,
			"org.opencontainers.image.title":   "mcpauth",
		},
	}
	img, err = mutate.ConfigFile(img, cf)
	if err != nil {
		return nil, fmt.Errorf("setting the config: %w", err)
	}
	return img, nil
}

// rootFS is the layer's tar: the binary, a passwd and group naming the
// non-root user, the CA bundle, a /data it owns and a /tmp.
func rootFS(binary []byte, c Config) ([]byte, error) {
	passwd := fmt.Sprintf("root:x:0:0:root:/root:/sbin/nologin\nnonroot:x:%d:%d:nonroot:%s:/sbin/nologin\n", UID, UID, DataDir)
	group := fmt.Sprintf("root:x:0:\nnonroot:x:%d:\n", UID)
	type entry struct {
		name     string
		mode     int64
		uid      int
		data     []byte
		dir      bool
		optional bool // left out when data is nil
	}
	entries := []entry{
		{name: "data/", mode: 0o755, uid: UID, dir: true},
		{name: "etc/", mode: 0o755, dir: true},
		{name: "etc/group", mode: 0o644, data: []byte(group)},
		{name: "etc/passwd", mode: 0o644, data: []byte(passwd)},
		{name: "etc/ssl/", mode: 0o755, dir: true},
		{name: "etc/ssl/certs/", mode: 0o755, dir: true},
		{name: CertPath[1:], mode: 0o644, data: c.CACerts, optional: true},
		{name: BinPath[1:], mode: 0o755, data: binary},
		{name: "tmp/", mode: 0o1777, dir: true},
	}
	var buf bytes.Buffer
	tw := tar.NewWriter(&buf)
	for _, e := range entries {
		if e.optional && e.data == nil {
			continue
		}
		h := &tar.Header{Name: e.name, Mode: e.mode, Uid: e.uid, Gid: e.uid, ModTime: c.Created, Typeflag: tar.TypeReg, Size: int64(len(e.data))}
		if e.dir {
			h.Typeflag, h.Size = tar.TypeDir, 0
		}
		if err := tw.WriteHeader(h); err != nil {
			return nil, fmt.Errorf("writing %s to the layer: %w", e.name, err)
		}
		if _, err := tw.Write(e.data); err != nil {
			return nil, fmt.Errorf("writing %s to the layer: %w", e.name, err)
		}
	}
	if err := tw.Close(); err != nil {
		return nil, fmt.Errorf("closing the layer: %w", err)
	}
	return buf.Bytes(), nil
}

// Index makes the multi-platform index of images (one per platform).
func Index(images []v1.Image) (v1.ImageIndex, error) {
	adds := make([]mutate.IndexAddendum, 0, len(images))
	for _, img := range images {
		cf, err := img.ConfigFile()
		if err != nil {
			return nil, fmt.Errorf("reading an image config: %w", err)
		}
		adds = append(adds, mutate.IndexAddendum{Add: img, Descriptor: v1.Descriptor{Platform: cf.Platform()}})
	}
	return mutate.AppendManifests(mutate.IndexMediaType(empty.Index, types.OCIImageIndex), adds...), nil
}
