#!/usr/bin/env bash
# Usage: scripts/with-postgres.sh CMD [ARGS...]
# Runs CMD beside a throwaway PostgreSQL cluster listening on a free port of
# 127.0.0.1, with its URL in MCPAUTH_TEST_POSTGRES_URL (database
# mcpauth_test, user postgres, trust auth); exits with CMD's status. The
# cluster lives in a temporary directory that is removed afterwards. Installs
# Debian's postgresql with apt-get (as root or through sudo -n) when it is
# missing.
set -euo pipefail

fail() { echo "with-postgres: $*" >&2; exit 1; }
# shellcheck source=scripts/lib/apt.sh
. "$(dirname "${BASH_SOURCE[0]}")/lib/apt.sh"
[ "$#" -gt 0 ] || fail "usage: scripts/with-postgres.sh CMD [ARGS...]"

# pg_bindir prints the newest installed server's bin directory, if any.
pg_bindir() {
  local d
  for d in /usr/lib/postgresql/*/bin; do [ -x "$d/initdb" ] && echo "$d"; done | sort -V | tail -n 1
}
bin="$(pg_bindir || true)"
if [ -z "$bin" ]; then
  apt_install postgresql
  bin="$(pg_bindir || true)"
  [ -n "$bin" ] || fail "no initdb even after apt-get install postgresql"
fi

# initdb refuses to run as root, so root runs the cluster as user postgres.
as_pg=()
if [ "$(id -u)" = 0 ]; then
  id postgres >/dev/null 2>&1 || useradd --system --no-create-home postgres
  as_pg=(runuser -u postgres --)
fi

dir="$(mktemp -d "${TMPDIR:-/tmp}/with-postgres.XXXXXX")"
chmod 755 "$dir"
if [ "$(id -u)" = 0 ]; then chown postgres "$dir"; fi
# shellcheck disable=SC2317 # called by the trap
cleanup() {
  "${as_pg[@]}" "$bin/pg_ctl" -D "$dir/data" -m immediate stop >/dev/null 2>&1 || true
  rm -rf "$dir"
}
trap cleanup EXIT

"${as_pg[@]}" "$bin/initdb" -D "$dir/data" -U postgres --auth=trust -E UTF8 >"$dir/initdb.log" 2>&1 \
  || { cat "$dir/initdb.log" >&2; fail "initdb failed"; }

# A free port: pick one at random that nothing answers on, and let PostgreSQL
# bind it; if someone else took it meanwhile the start fails and we try
# another (no helper language needed to ask the kernel for a port).
port_busy() { (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null; }
port=""
for attempt in 1 2 3 4 5; do
  candidate=$((20000 + RANDOM % 40000))
  port_busy "$candidate" && continue
  if "${as_pg[@]}" "$bin/pg_ctl" -D "$dir/data" -l "$dir/server.log" -w -t 30 \
    -o "-c listen_addresses=127.0.0.1 -c port=$candidate -c unix_socket_directories=$dir" start >/dev/null; then
    port="$candidate"
    break
  fi
  echo "with-postgres: could not start on port $candidate (attempt $attempt)" >&2
done
[ -n "$port" ] || { cat "$dir/server.log" >&2; fail "PostgreSQL did not start"; }

"${as_pg[@]}" "$bin/createdb" -h 127.0.0.1 -p "$port" -U postgres mcpauth_test || fail "createdb mcpauth_test failed"
export MCPAUTH_TEST_POSTGRES_URL="postgres://postgres@127.0.0.1:$port/mcpauth_test?sslmode=disable"
status=0
"$@" || status=$?
exit "$status"
