#!/usr/bin/env bash
# Checks that each helper script in scripts/ does what its header says, by
# using it for real: install-chromium.sh prints a working browser's path,
# with-keyring.sh gives CMD a Secret Service that stores and returns a
# secret (and leaves no bus behind), with-postgres.sh gives CMD a PostgreSQL
# that answers queries at MCPAUTH_TEST_POSTGRES_URL (and removes it after).
# Both wrappers must pass CMD's exit status through. .ci/run runs this before
# the Go tests; any failed check exits 1 with the reason.
set -euo pipefail
cd "$(dirname "$0")/.."

failures=0
pass() { echo "test-scripts: ok   $*"; }
flunk() { echo "test-scripts: FAIL $*" >&2; failures=$((failures + 1)); }

# passes_status WRAPPER: scripts/WRAPPER exits with its command's status.
passes_status() {
  local status=0
  "scripts/$1" bash -c 'exit 7' || status=$?
  if [ "$status" = 7 ]; then
    pass "$1 passes the exit status through"
  else
    flunk "$1 exited $status for a command that exited 7"
  fi
}

# --- install-chromium.sh ---------------------------------------------------
if out="$(scripts/install-chromium.sh)"; then
  if [ "$(printf '%s\n' "$out" | wc -l)" -ne 1 ]; then
    flunk "install-chromium.sh printed more than one line on stdout: $out"
  elif [ "${out:0:1}" != / ] || [ ! -x "$out" ]; then
    flunk "install-chromium.sh printed $out, not an absolute path to an executable"
  else
    pass "install-chromium.sh -> $out"
  fi
else
  flunk "install-chromium.sh exited non-zero"
fi

# --- with-keyring.sh -------------------------------------------------------
# dbus-x11 (dbus-launch) may be installed: .ci/run installs it last for the
# autolaunch test (TestNoDBusAutolaunch), so a second run on the same machine
# finds it. with-keyring.sh always runs a private bus, and the CLI never
# autolaunches one (keyring/sessionbus_unix.go), so it does no harm here.
# The round trip runs inside the wrapper; it reports the bus it saw on fd 3
# so we can check afterwards that the bus is gone.
# shellcheck disable=SC2016 # expanded by the inner bash, not here
keyring_check='
set -euo pipefail
[ -n "${DBUS_SESSION_BUS_ADDRESS:-}" ] || { echo "no DBUS_SESSION_BUS_ADDRESS" >&2; exit 1; }
echo "$DBUS_SESSION_BUS_ADDRESS" >&3
secret="s3cret-$RANDOM-$RANDOM"
printf %s "$secret" | secret-tool store --label="mcpauth test-scripts" service mcpauth-test-scripts account probe
got="$(secret-tool lookup service mcpauth-test-scripts account probe)"
[ "$got" = "$secret" ] || { echo "lookup returned \"$got\", want \"$secret\"" >&2; exit 1; }
secret-tool clear service mcpauth-test-scripts account probe
if secret-tool lookup service mcpauth-test-scripts account probe >/dev/null 2>&1; then
  echo "the secret is still there after clear" >&2; exit 1
fi
'
busfile="$(mktemp)"
trap 'rm -f "$busfile"' EXIT
if scripts/with-keyring.sh bash -c "$keyring_check" 3>"$busfile"; then
  pass "with-keyring.sh: secret-tool store/lookup/clear round trip"
  bus="$(cat "$busfile")"
  if [ -n "$bus" ] && [ "$bus" = "${DBUS_SESSION_BUS_ADDRESS:-}" ]; then
    flunk "with-keyring.sh reused the caller's session bus instead of a private one"
  elif dbus-send --bus="$bus" --print-reply --dest=org.freedesktop.DBus /org/freedesktop/DBus \
    org.freedesktop.DBus.Peer.Ping >/dev/null 2>&1; then
    flunk "with-keyring.sh left its session bus running ($bus)"
  else
    pass "with-keyring.sh: private bus gone after the command"
  fi
else
  flunk "with-keyring.sh: the Secret Service round trip failed"
fi
passes_status with-keyring.sh

# --- with-postgres.sh ------------------------------------------------------
# shellcheck disable=SC2016 # expanded by the inner bash, not here
postgres_check='
set -euo pipefail
url="${MCPAUTH_TEST_POSTGRES_URL:-}"
[ -n "$url" ] || { echo "MCPAUTH_TEST_POSTGRES_URL is unset" >&2; exit 1; }
case "$url" in postgres://*@127.0.0.1:*/mcpauth_test*) ;; *) echo "URL $url is not on 127.0.0.1" >&2; exit 1 ;; esac
echo "$url" >&3
pg_isready -q -d "$url" || { echo "pg_isready: not ready" >&2; exit 1; }
got="$(psql "$url" -X -q -A -t -v ON_ERROR_STOP=1 -c "CREATE TABLE probe (n int); INSERT INTO probe VALUES (41); SELECT n + 1 FROM probe;")"
[ "$got" = 42 ] || { echo "query returned \"$got\", want 42" >&2; exit 1; }
'
urlfile="$(mktemp)"
trap 'rm -f "$busfile" "$urlfile"' EXIT
if scripts/with-postgres.sh bash -c "$postgres_check" 3>"$urlfile"; then
  pass "with-postgres.sh: pg_isready and a psql query at MCPAUTH_TEST_POSTGRES_URL"
  url="$(cat "$urlfile")"
  if pg_isready -q -t 2 -d "$url" 2>/dev/null; then
    flunk "with-postgres.sh left PostgreSQL running at $url"
  else
    pass "with-postgres.sh: cluster gone after the command"
  fi
else
  flunk "with-postgres.sh: PostgreSQL did not answer"
fi
passes_status with-postgres.sh

if [ "$failures" -gt 0 ]; then
  echo "test-scripts: $failures check(s) failed" >&2
  exit 1
fi
echo "test-scripts: all checks passed"
