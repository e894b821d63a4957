#!/usr/bin/env bash
# Builds Ory Hydra for mcpauth's interop lab (interop/hydra_test.go) into
# interop/testdata/hydra/hydra, exactly at the versions go.mod and go.sum
# pin, from the Go module proxy. cgo and the sqlite tags are Hydra's own
# build (its Makefile): DSN=memory is an in-memory SQLite. The first build
# takes minutes; the Go build cache makes the next ones take seconds.
set -euo pipefail
cd "$(dirname "$0")"
version="$(go list -m -f '{{.Version}}' github.com/ory/hydra/v2)"
CGO_ENABLED=1 go build -trimpath -tags sqlite,sqlite_omit_load_extension \
  -ldflags "-X github.com/ory/hydra/v2/driver/config.Version=$version" -o hydra .
