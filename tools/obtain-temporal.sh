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
  mkdir -p "$cli_dir" "$CACHE/logs"
  log="$CACHE/logs/temporal-cli-$CLI_VERSION.log"
  echo "temporal CLI: building $CLI_VERSION with go install (first time only, usually 2-5 min; log: $log)"
  started=$(date +%s)
  GOBIN="$cli_dir" GOFLAGS=-mod=mod go install -x "github.com/temporalio/cli/cmd/temporal@$CLI_VERSION" >"$log" 2>&1 &
  build=$!
  while kill -0 "$build" 2>/dev/null; do
    for _ in $(seq 30); do kill -0 "$build" 2>/dev/null && sleep 1; done
    kill -0 "$build" 2>/dev/null || break
    echo "  still building: $(grep -c '^go: downloading' "$log") modules downloaded, $(grep -c '^mkdir -p \$WORK/b[0-9]*/$' "$log") packages compiled, $(( $(date +%s) - started )) s"
  done
  if ! wait "$build" || [ ! -x "$cli_dir/temporal" ]; then
    tail -n 20 "$log" >&2
    echo "temporal CLI: go install failed (full log: $log)" >&2
    exit 1
  fi
  echo "temporal CLI: built $cli_dir/temporal in $(( $(date +%s) - started )) s"
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
  mkdir -p "$ts_dir/lib" "$CACHE/logs"
  log="$CACHE/logs/temporal-test-server-$TEST_SERVER_VERSION.log"
  echo "test server: resolving io.temporal:temporal-test-server:$TEST_SERVER_VERSION from Maven Central (first time only, about 30 s; log: $log)"
  if ! mvn -B -ntp -f "$here/test-server.pom.xml" dependency:copy-dependencies \
    -Dtemporal.test.server.version="$TEST_SERVER_VERSION" -DoutputDirectory="$ts_dir/lib" >"$log" 2>&1 \
    || ! ls "$ts_dir"/lib/temporal-test-server-*.jar >/dev/null 2>&1; then
    tail -n 20 "$log" >&2
    echo "test server: maven failed (full log: $log)" >&2
    exit 1
  fi
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
