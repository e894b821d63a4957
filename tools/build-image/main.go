// Command build-image, a release tool, builds the `mcpauth serve` image for
// several platforms into tarballs, without a container engine or registry
// access (scripts/build-image.sh runs it from the module root, which it
// builds ./cmd/mcpauth of). It lives under tools/ so that no user's mcpauth
// binary links it.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	v1 "github.com/google/go-containerregistry/pkg/v1"

	"github.com/mcpauth/mcpauth/tools/build-image/internal/ociimage"
)

func main() {
	err := run(context.Background(), os.Args[1:], os.Stdout)
	if errors.Is(err, flag.ErrHelp) {
		return // -h: the flag package has printed the usage
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "build-image:", err)
		os.Exit(1)
	}
}

func run(ctx context.Context, args []string, out io.Writer) error {
	fl := flag.NewFlagSet("build-image", flag.ContinueOnError)
	outDir := fl.String("out", ".", "directory for the tarballs")
	platforms := fl.String("platforms", "linux/amd64,linux/arm64", "comma-separated os/arch")
	version := fl.String("version", "dev", "version stamped into the binary and the labels")
	source := fl.String("source", "https://github.com/mcpauth/mcpauth", "org.opencontainers.image.source label")
	repo := fl.String("name", "mcpauth", "image name; the tag is the version")
	certs := fl.String("ca-certs", ociimage.CertPath, "CA bundle to include (skipped with a warning when missing)")
	if err := fl.Parse(args); err != nil {
		return err
	}
	cfg := ociimage.Config{Version: *version, Source: *source, Created: time.Unix(0, 0).UTC()}
	// SOURCE_DATE_EPOCH: the reproducible-builds convention for a fixed time.
	if s := os.Getenv("SOURCE_DATE_EPOCH"); s != "" {
		sec, err := strconv.ParseInt(s, 10, 64)
		if err != nil {
			return fmt.Errorf("SOURCE_DATE_EPOCH: %w", err)
		}
		cfg.Created = time.Unix(sec, 0).UTC()
	}
	b, err := os.ReadFile(*certs)
	switch {
	case errors.Is(err, os.ErrNotExist):
		fmt.Fprintf(out, "warning: no %s: the image cannot verify TLS to an external OIDC issuer\n", *certs)
	case err != nil:
		return fmt.Errorf("reading the CA bundle: %w", err)
	default:
		cfg.CACerts = b
	}
	ref := *repo + ":" + strings.ReplaceAll(*version, "+", "_") // tags allow no '+'
	tmp, err := os.MkdirTemp("", "mcpauth-build-image-")
	if err != nil {
		return fmt.Errorf("making a build dir: %w", err)
	}
	defer os.RemoveAll(tmp)
	var images []v1.Image
	for _, p := range strings.Split(*platforms, ",") {
		plat, err := v1.ParsePlatform(p)
		if err != nil {
			return fmt.Errorf("platform %q: %w", p, err)
		}
		img, err := buildOne(ctx, *plat, cfg, tmp)
		if err != nil {
			return err
		}
		images = append(images, img)
		docker := filepath.Join(*outDir, fmt.Sprintf("mcpauth-%s-%s-%s.docker.tar", *version, plat.OS, plat.Architecture))
		if err := ociimage.WriteDockerArchive(docker, img, ref); err != nil {
			return err
		}
		if err := report(out, docker, img); err != nil {
			return err
		}
	}
	idx, err := ociimage.Index(images)
	if err != nil {
		return err
	}
	oci := filepath.Join(*outDir, "mcpauth-"+*version+".oci.tar")
	if err := ociimage.WriteOCIArchive(oci, idx, ref); err != nil {
		return err
	}
	return report(out, oci, idx)
}

// buildOne cross-compiles the binary for plat and makes its image.
func buildOne(ctx context.Context, plat v1.Platform, cfg ociimage.Config, tmp string) (v1.Image, error) {
	bin := filepath.Join(tmp, "mcpauth-"+plat.OS+"-"+plat.Architecture)
	if err := ociimage.BuildBinary(ctx, ".", plat, cfg.Version, bin); err != nil {
		return nil, err
	}
	b, err := os.ReadFile(bin)
	if err != nil {
		return nil, fmt.Errorf("reading the binary: %w", err)
	}
	return ociimage.Image(b, plat, cfg)
}

// report prints a tarball's size and the digest of what it holds.
func report(out io.Writer, path string, d interface{ Digest() (v1.Hash, error) }) error {
	h, err := d.Digest()
	if err != nil {
		return fmt.Errorf("digest of %s: %w", path, err)
	}
	st, err := os.Stat(path)
	if err != nil {
		return fmt.Errorf("stat %s: %w", path, err)
	}
	_, err = fmt.Fprintf(out, "%s  %.1f MiB  %s\n", filepath.Base(path), float64(st.Size())/(1<<20), h)
	return err
}
