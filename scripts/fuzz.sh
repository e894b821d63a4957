#!/usr/bin/env bash
# Runs every fuzz target for FUZZTIME each (default 15s) and fails on any
# crasher; go test writes the failing input to the package's
# testdata/fuzz/<Target>/, where it stays as a regression test.
# Longer run: FUZZTIME=10m scripts/fuzz.sh
#
# Go 1.26's fuzz coordinator can fail a run with a bare "context deadline
# exceeded" at the end of -fuzztime when its worker is starved of CPU
# (golang/go#75804, fixed in Go 1.27). Such a run wrote no input; it counts
# as a failure only if replaying the target's corpus then fails too.
set -euo pipefail
cd "$(dirname "$0")/.."
fuzztime="${FUZZTIME:-15s}"
targets=(
  "./server FuzzJWTVerify"
  "./server FuzzJWTClaims"
  "./server FuzzAPIKeyParse"
  "./server FuzzRedirectURI"
  "./server FuzzUserCode"
  "./server FuzzEndpoints"
  "./server FuzzReturnTo"
  "./server FuzzMetadataDocument"
  "./server FuzzRefreshGrant"
  "./server FuzzRevoke"
  "./server FuzzParseFormParams"
  "./pkce FuzzPKCE"
  "./internal/oauthwire FuzzWWWAuthenticate"
  "./flows FuzzTokenResponse"
  "./flows FuzzLoopbackCallback"
  "./flows FuzzDiscoveryDocuments"
  "./flows FuzzOrigin"
  "./internal/redact FuzzClean"
  "./conformance FuzzReportRedaction"
)
log="$(mktemp)"
trap 'rm -f "$log"' EXIT
flakes=0
for t in "${targets[@]}"; do
  read -r pkg name <<<"$t"
  corpus="$pkg/testdata/fuzz/$name"
  before="$( (ls "$corpus" 2>/dev/null || true) | wc -l)"
  echo "fuzz: $name ($pkg) for $fuzztime"
  if go test -run '^$' -fuzz "^$name\$" -fuzztime "$fuzztime" "$pkg" 2>&1 | tee "$log"; then
    continue
  fi
  after="$( (ls "$corpus" 2>/dev/null || true) | wc -l)"
  if [ "$after" = "$before" ] && grep -qx '    context deadline exceeded' "$log" && ! grep -q 'Failing input written' "$log"; then
    echo "fuzz: $name stopped with Go's coordinator deadline race (golang/go#75804); replaying its corpus"
    go test -count=1 -run "^$name\$" "$pkg"
    flakes=$((flakes + 1))
    continue
  fi
  echo "fuzz: $name failed; a crasher is in $corpus/" >&2
  exit 1
done
echo "fuzz: ${#targets[@]} targets, no crashers ($flakes coordinator deadline races replayed clean)"
