#!/usr/bin/env bash
# Usage: MCPAUTH_CHROMIUM="$(scripts/install-chromium.sh)"
# Makes sure Debian's chromium is installed (apt-get, as root or through
# sudo -n, only when it is missing), proves it can render a page headless,
# and prints the binary's path on stdout. Everything else goes to stderr; any
# failure exits non-zero, so a broken browser never reaches the tests.
set -euo pipefail

fail() { echo "install-chromium: $*" >&2; exit 1; }
# shellcheck source=scripts/lib/apt.sh
. "$(dirname "${BASH_SOURCE[0]}")/lib/apt.sh"

bin="$(command -v chromium 2>/dev/null || true)"
if [ -z "$bin" ]; then
  echo "install-chromium: chromium is about 120 MB" >&2
  apt_install chromium
  bin="$(command -v chromium 2>/dev/null || true)"
  [ -n "$bin" ] || fail "chromium is not on PATH even after apt-get install"
fi

# Smoke test: render an inline page headless and look for its text in the
# DOM. The flags are the ones the tests use (no sandbox: containers lack the
# user namespaces it needs; no network chatter).
work="$(mktemp -d "${TMPDIR:-/tmp}/install-chromium.XXXXXX")"
trap 'rm -rf "$work"' EXIT
dom="$(timeout 60 "$bin" --headless --no-sandbox --disable-gpu --no-first-run --disable-quic \
  --disable-background-networking --disable-component-update --disable-sync \
  --user-data-dir="$work/profile" --dump-dom 'data:text/html,<p id=probe>mcpauth-chromium-ok</p>' \
  2>"$work/stderr")" || true
if ! grep -q 'mcpauth-chromium-ok' <<<"$dom"; then
  cat "$work/stderr" >&2 || true
  fail "$bin could not render a page headless"
fi
echo "$bin"
