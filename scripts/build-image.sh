#!/usr/bin/env bash
# Builds the `mcpauth serve` container image for linux/amd64 and linux/arm64
# without a container engine or registry (tools/build-image): one OCI layout
# tarball holding both platforms, and a `docker load` tarball per platform.
# Prints each tarball's size and digest.
# Usage: scripts/build-image.sh OUTDIR [VERSION]   (default: git describe, else dev)
set -euo pipefail
cd "$(dirname "$0")/.."
out="${1:?usage: scripts/build-image.sh OUTDIR [VERSION]}"
version="${2:-$(git describe --tags --always --dirty 2>/dev/null || echo dev)}"
mkdir -p "$out"
go run ./tools/build-image -out "$out" -version "$version" \
  -platforms "${PLATFORMS:-linux/amd64,linux/arm64}"
