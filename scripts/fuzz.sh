#!/usr/bin/env bash
# Runs every fuzz target for FUZZTIME each (default 15s) and fails on the
# first crasher; go test writes the failing input to the package's
# testdata/fuzz/<Target>/, where it stays as a regression test.
# Longer run: FUZZTIME=10m scripts/fuzz.sh
set -euo pipefail
cd "$(dirname "$0")/.."
fuzztime="${FUZZTIME:-15s}"
targets=(
  "./server FuzzJWTVerify"
  "./server FuzzAPIKeyParse"
  "./server FuzzRedirectURI"
  "./server FuzzUserCode"
  "./server FuzzEndpoints"
  "./pkce FuzzPKCE"
  "./flows FuzzWWWAuthenticate"
  "./flows FuzzTokenResponse"
  "./flows FuzzLoopbackCallback"
  "./flows FuzzDiscoveryDocuments"
)
for t in "${targets[@]}"; do
  set -- $t
  echo "fuzz: $2 ($1) for $fuzztime"
  go test -run '^$' -fuzz "^$2\$" -fuzztime "$fuzztime" "$1"
done
echo "fuzz: ${#targets[@]} targets, no crashers"
