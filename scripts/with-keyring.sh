#!/usr/bin/env bash
# Usage: scripts/with-keyring.sh CMD [ARGS...]
# Runs CMD inside a private D-Bus session bus where an unlocked gnome-keyring
# serves the Secret Service API; exits with CMD's status. The keyring's files
# live in a temporary directory (never ~/.local/share/keyrings) that is
# removed afterwards, and the bus and daemon end with CMD. Installs dbus,
# gnome-keyring and libsecret-tools with apt-get when a tool is missing.
#
# dbus-x11 is deliberately NOT installed: its dbus-launch lets go-keyring
# (godbus) autolaunch a stray dbus-daemon whenever no session bus is set,
# which outlives the tests.
set -euo pipefail

fail() { echo "with-keyring: $*" >&2; exit 1; }
# shellcheck source=scripts/lib/apt.sh
. "$(dirname "${BASH_SOURCE[0]}")/lib/apt.sh"

if [ "${MCPAUTH_WITH_KEYRING_STAGE:-}" != inner ]; then
  [ "$#" -gt 0 ] || fail "usage: scripts/with-keyring.sh CMD [ARGS...]"

  need=()
  command -v dbus-run-session >/dev/null 2>&1 || need+=(dbus)
  command -v dbus-send >/dev/null 2>&1 || need+=(dbus)
  command -v gnome-keyring-daemon >/dev/null 2>&1 || need+=(gnome-keyring)
  command -v secret-tool >/dev/null 2>&1 || need+=(libsecret-tools)
  if [ "${#need[@]}" -gt 0 ]; then
    apt_install "${need[@]}"
    for tool in dbus-run-session dbus-send gnome-keyring-daemon secret-tool; do
      command -v "$tool" >/dev/null 2>&1 || fail "$tool is still missing after apt-get install"
    done
  fi

  # Run this same script again as the session's only client: dbus-run-session
  # starts a fresh bus, and the bus daemon exits when the script returns.
  home="$(mktemp -d "${TMPDIR:-/tmp}/with-keyring.XXXXXX")"
  trap 'rm -rf "$home"' EXIT
  mkdir -m 700 "$home/data" "$home/run"
  status=0
  MCPAUTH_WITH_KEYRING_STAGE=inner MCPAUTH_WITH_KEYRING_HOME="$home" \
    dbus-run-session -- bash "${BASH_SOURCE[0]}" "$@" || status=$?
  exit "$status"
fi

# Inside the private session bus.
home="${MCPAUTH_WITH_KEYRING_HOME:?}"
unset MCPAUTH_WITH_KEYRING_STAGE MCPAUTH_WITH_KEYRING_HOME
[ -n "${DBUS_SESSION_BUS_ADDRESS:-}" ] || fail "dbus-run-session set no DBUS_SESSION_BUS_ADDRESS"

# The daemon alone gets the temporary XDG dirs, so its keyring files and
# control socket stay in $home while CMD keeps the caller's environment.
# --unlock reads the new keyring's password from stdin.
printf '%s' "${WITH_KEYRING_PASSWORD:-mcpauth-test-keyring}" |
  XDG_DATA_HOME="$home/data" XDG_RUNTIME_DIR="$home/run" \
    gnome-keyring-daemon --foreground --unlock --components=secrets >"$home/daemon.log" 2>&1 &
daemon=$!
# shellcheck disable=SC2317 # called by the trap
stop_daemon() { kill "$daemon" 2>/dev/null || true; wait "$daemon" 2>/dev/null || true; }
trap stop_daemon EXIT

# Wait until our unlocked daemon owns org.freedesktop.secrets: a client that
# came earlier would make D-Bus auto-activate a second, locked daemon, and
# then fail with "failed to unlock correct collection" (about 1 run in 10).
secrets_owned() {
  dbus-send --session --print-reply --dest=org.freedesktop.DBus /org/freedesktop/DBus \
    org.freedesktop.DBus.NameHasOwner string:org.freedesktop.secrets 2>/dev/null | grep -q 'boolean true'
}
for ((tries = 0; ; tries++)); do
  secrets_owned && break
  if ! kill -0 "$daemon" 2>/dev/null; then
    cat "$home/daemon.log" >&2
    fail "gnome-keyring-daemon exited before owning org.freedesktop.secrets"
  fi
  if [ "$tries" -ge 200 ]; then
    cat "$home/daemon.log" >&2
    fail "org.freedesktop.secrets has no owner after 10 s"
  fi
  sleep 0.05
done

status=0
"$@" || status=$?
exit "$status"
