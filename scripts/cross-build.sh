#!/usr/bin/env bash
# Cross-compiles mcpauth for every release target (.goreleaser.yaml) and
# vets the code for the operating systems CI does not run on, so a
# build-tagged file that breaks darwin or windows fails here, not at release,
# and generates the archives' man pages and completion files.
# Usage: scripts/cross-build.sh [OUTDIR]   (default: a temp dir, removed after)
set -euo pipefail
cd "$(dirname "$0")/.."
out="${1:-}"
if [ -z "$out" ]; then
  out="$(mktemp -d)"
  trap 'rm -rf "$out"' EXIT
fi
for target in linux/amd64 linux/arm64 darwin/amd64 darwin/arm64 windows/amd64 windows/arm64; do
  os="${target%/*}" arch="${target#*/}"
  ext=""; [ "$os" = windows ] && ext=".exe"
  echo "cross-build: $target"
  CGO_ENABLED=0 GOOS="$os" GOARCH="$arch" go build -trimpath -ldflags "-s -w" -o "$out/mcpauth_${os}_${arch}${ext}" ./cmd/mcpauth
done
for os in darwin windows; do
  echo "cross-build: go vet for $os"
  CGO_ENABLED=0 GOOS="$os" GOARCH=amd64 go vet ./...
done
# The man pages and completion files the release archives carry
# (.goreleaser.yaml's before hook): every one written and non-empty.
go run ./tools/gendocs -man "$out/man" -completions "$out/completions"
for f in "$out"/man/mcpauth.1 "$out"/completions/mcpauth.{bash,zsh,fish}; do
  [ -s "$f" ] || { echo "cross-build: $f missing or empty" >&2; exit 1; }
done
echo "cross-build: $(ls "$out" | grep -c '^mcpauth_') binaries, $(ls "$out/man" | wc -l) man pages, $(ls "$out/completions" | wc -l) completion files"
