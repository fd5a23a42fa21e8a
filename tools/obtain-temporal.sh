#!/usr/bin/env bash
# Obtains the two Temporal servers this project runs against, pinned and cached outside the repo:
#   - the Temporal CLI (dev server + Web UI), built from source with the Go module proxy;
#   - the Java time-skipping test server, resolved from Maven Central, behind a wrapper that execs java.
# Reused across runs. TEMPORAL_CLI_PATH / TEMPORAL_TEST_SERVER_PATH skip the build of that part.
# Machines without Go or Maven need nothing from here: the SDK then downloads its own binaries at run time.
# `--cli-only` (used by `npm start`) obtains only the CLI: the test server is for the test suite.
set -euo pipefail
cli_only=false
[ "${1:-}" = "--cli-only" ] && cli_only=true

CACHE="${TARMAC_CACHE_DIR:-$HOME/.cache/tarmac}"
CLI_VERSION=v1.5.1              # newest tag whose go.mod has no `replace` (so `go install` works)
TEST_SERVER_VERSION=1.38.0      # io.temporal:temporal-test-server
here="$(cd "$(dirname "$0")" && pwd)"

cli_dir="$CACHE/temporal-cli-$CLI_VERSION"
if [ -n "${TEMPORAL_CLI_PATH:-}" ]; then
  echo "temporal CLI: using TEMPORAL_CLI_PATH=$TEMPORAL_CLI_PATH"
elif [ -x "$cli_dir/temporal" ]; then
  echo "temporal CLI: cached at $cli_dir/temporal"
elif command -v go >/dev/null 2>&1; then
  echo "temporal CLI: building $CLI_VERSION with go install (first time only, a few minutes)..."
  mkdir -p "$cli_dir"
  GOBIN="$cli_dir" GOFLAGS=-mod=mod go install -x "github.com/temporalio/cli/cmd/temporal@$CLI_VERSION" 2>&1 \
    | grep --line-buffered -E '^(go: downloading|# |mkdir -p \$WORK/b[0-9]+/$)' \
    | awk '/^mkdir/ { n++; if (n % 50 == 0) { print "  compiled " n " packages..."; fflush() } next } { print "  " $0; fflush() }'
  [ -x "$cli_dir/temporal" ] || { echo "temporal CLI: go install failed" >&2; exit 1; }
  echo "temporal CLI: built $cli_dir/temporal"
else
  echo "temporal CLI: no Go toolchain; the SDK will download the CLI on first use (needs internet)"
fi

ts_dir="$CACHE/temporal-test-server-$TEST_SERVER_VERSION"
if $cli_only; then
  :
elif [ -n "${TEMPORAL_TEST_SERVER_PATH:-}" ]; then
  echo "test server: using TEMPORAL_TEST_SERVER_PATH=$TEMPORAL_TEST_SERVER_PATH"
elif [ -x "$ts_dir/temporal-test-server" ]; then
  echo "test server: cached at $ts_dir/temporal-test-server"
elif command -v mvn >/dev/null 2>&1 && command -v java >/dev/null 2>&1; then
  echo "test server: resolving io.temporal:temporal-test-server:$TEST_SERVER_VERSION from Maven Central..."
  mkdir -p "$ts_dir/lib"
  mvn -B -ntp -f "$here/test-server.pom.xml" dependency:copy-dependencies \
    -Dtemporal.test.server.version="$TEST_SERVER_VERSION" -DoutputDirectory="$ts_dir/lib" \
    | grep --line-buffered -E 'Copying|BUILD|ERROR' | sed -u 's/^/  /' || true
  ls "$ts_dir"/lib/temporal-test-server-*.jar >/dev/null 2>&1 || { echo "test server: maven failed" >&2; exit 1; }
  cat > "$ts_dir/temporal-test-server" <<WRAP
#!/bin/sh
# Wrapper for @temporalio/testing's existing-path executable: argument is the port.
exec java -XX:+UseSerialGC -XX:TieredStopAtLevel=1 -Xshare:auto -cp "$ts_dir/lib/*" io.temporal.testserver.TestServer "\$@"
WRAP
  chmod +x "$ts_dir/temporal-test-server"
  echo "test server: ready at $ts_dir/temporal-test-server"
else
  echo "test server: no java/mvn; the SDK will download the test server on first use (needs internet)"
fi
