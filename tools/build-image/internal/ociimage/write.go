package ociimage

import (
	"archive/tar"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"time"

	"github.com/google/go-containerregistry/pkg/name"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/empty"
	"github.com/google/go-containerregistry/pkg/v1/layout"
	"github.com/google/go-containerregistry/pkg/v1/tarball"
)

// WriteOCIArchive writes idx as a tarred OCI image layout (what
// `skopeo copy oci-archive:…` and `podman load` read), its index.json
// naming it ref (e.g. mcpauth:v1.2.3).
func WriteOCIArchive(path string, idx v1.ImageIndex, ref string) error {
	dir, err := os.MkdirTemp("", "mcpauth-oci-")
	if err != nil {
		return fmt.Errorf("making a layout dir: %w", err)
	}
	defer os.RemoveAll(dir)
	lp, err := layout.Write(dir, empty.Index)
	if err != nil {
		return fmt.Errorf("writing the OCI layout: %w", err)
	}
	tag, err := name.NewTag(ref)
	if err != nil {
		return fmt.Errorf("image name %q: %w", ref, err)
	}
	// ref.name is the tag (OCI image-spec); containerd and Docker read the
	// full name from their own annotation, spelling Docker Hub docker.io
	// where go-containerregistry says index.docker.io.
	full := tag.Name()
	if tag.RegistryStr() == name.DefaultRegistry {
		full = "docker.io/" + tag.RepositoryStr() + ":" + tag.TagStr()
	}
	if err := lp.AppendIndex(idx, layout.WithAnnotations(map[string]string{
		"org.opencontainers.image.ref.name": tag.TagStr(),
		"io.containerd.image.name":          full,
	})); err != nil {
		return fmt.Errorf("writing the OCI layout: %w", err)
	}
	return tarDir(dir, path)
}

// WriteDockerArchive writes img as a `docker load` tarball tagged ref.
// That format holds one image per tag, so it takes a single platform.
func WriteDockerArchive(path string, img v1.Image, ref string) error {
	tag, err := name.NewTag(ref)
	if err != nil {
		return fmt.Errorf("image name %q: %w", ref, err)
	}
	if err := tarball.WriteToFile(path, tag, img); err != nil {
		return fmt.Errorf("writing %s: %w", path, err)
	}
	return nil
}

// tarDir tars the files under dir into path, in lexical order with fixed
// times, so the archive depends on the content only.
func tarDir(dir, path string) (err error) {
	f, err := os.Create(path)
	if err != nil {
		return fmt.Errorf("creating %s: %w", path, err)
	}
	defer func() {
		if cerr := f.Close(); err == nil && cerr != nil {
			err = fmt.Errorf("closing %s: %w", path, cerr)
		}
	}()
	tw := tar.NewWriter(f)
	err = filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || p == dir {
			return err
		}
		rel, err := filepath.Rel(dir, p)
		if err != nil {
			return err
		}
		h := &tar.Header{Name: filepath.ToSlash(rel), Mode: 0o644, ModTime: time.Unix(0, 0), Typeflag: tar.TypeReg}
		if d.IsDir() {
			h.Name, h.Mode, h.Typeflag = h.Name+"/", 0o755, tar.TypeDir
			return tw.WriteHeader(h)
		}
		src, err := os.Open(p)
		if err != nil {
			return err
		}
		defer src.Close()
		st, err := src.Stat()
		if err != nil {
			return err
		}
		h.Size = st.Size()
		if err := tw.WriteHeader(h); err != nil {
			return err
		}
		_, err = io.Copy(tw, src)
		return err
	})
	if err != nil {
		return fmt.Errorf("archiving %s: %w", dir, err)
	}
	if err := tw.Close(); err != nil {
		return fmt.Errorf("closing %s: %w", path, err)
	}
	return nil
}
