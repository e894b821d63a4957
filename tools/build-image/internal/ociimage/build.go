package ociimage

import (
	"context"
	"fmt"
	"os"
	"os/exec"

	v1 "github.com/google/go-containerregistry/pkg/v1"
)

// BuildBinary cross-compiles ./cmd/mcpauth of the module in moduleDir for
// plat into out, as the release builds do (.goreleaser.yaml): static,
// trimmed, stripped, with the version stamped in.
func BuildBinary(ctx context.Context, moduleDir string, plat v1.Platform, version, out string) error {
	cmd := exec.CommandContext(ctx, "go", "build", "-trimpath",
		"-ldflags", "-s -w -X main.version="+version, "-o", out, "./cmd/mcpauth")
	cmd.Dir = moduleDir
	cmd.Env = append(os.Environ(), "CGO_ENABLED=0", "GOOS="+plat.OS, "GOARCH="+plat.Architecture)
	if b, err := cmd.CombinedOutput(); err != nil {
		return fmt.Errorf("building mcpauth for %s: %w: %s", plat.String(), err, b)
	}
	return nil
}
