#!/usr/bin/env bash
# Obtains the production Temporal engine, pinned and cached outside the repo (src/cli/cluster/temporal-cluster.ts runs it):
#   - the Temporal server v1.29.1 (go.temporal.io/server, the version the pinned CLI v1.5.1 embeds) and its
#     temporal-sql-tool, with the PostgreSQL schema directories the sql tool applies;
#   - the Temporal UI server v2.42.1 (github.com/temporalio/ui-server/v2, the UI that CLI v1.5.1 embeds).
# All three are built with the Go module proxy inside the CLI's own module graph (a build module whose go.mod and
# go.sum are the CLI v1.5.1's): the server runs with exactly the dependency versions of the dev server the
# platform is tested on, and after tools/obtain-temporal.sh has built the CLI, Go's build cache already holds
# almost every package (43 s measured on a clean Go cache after the CLI; alone, about as long as the CLI).
# Reused across runs. A machine without Go gets nothing: the cluster tests then skip, saying so.
set -euo pipefail

CACHE="${TARMAC_CACHE_DIR:-$HOME/.cache/tarmac}"
SERVER_VERSION=v1.29.1
UI_SERVER_VERSION=v2.42.1
CLI_VERSION=v1.5.1            # tools/obtain-temporal.sh; its go.mod requires the two above
server_dir="$CACHE/temporal-server-$SERVER_VERSION"
ui_dir="$CACHE/ui-server-$UI_SERVER_VERSION"

if [ -x "$server_dir/temporal-server" ] && [ -x "$server_dir/temporal-sql-tool" ] \
  && [ -f "$server_dir/schema/postgresql/v12/visibility/schema.sql" ] && [ -x "$ui_dir/ui-server" ]; then
  echo "temporal server: cached at $server_dir, UI server at $ui_dir"
  exit 0
fi
if ! command -v go >/dev/null 2>&1; then
  echo "temporal server: no Go toolchain; the Temporal cluster (and its tests) is unavailable on this machine"
  exit 0
fi

mkdir -p "$CACHE/logs"
log="$CACHE/logs/temporal-server-$SERVER_VERSION.log"
: >"$log"
fail() {
  tail -n 20 "$log" >&2
  echo "temporal server: $1 (full log: $log)" >&2
  exit 1
}
# module_dir MODULE@VERSION: the module's source in the module cache (downloaded if absent).
module_dir() {
  go mod download -json "$1" 2>>"$log" | sed -n 's/^\t"Dir": "\(.*\)",$/\1/p'
}

started=$(date +%s)
echo "temporal server: building $SERVER_VERSION, temporal-sql-tool and the UI server $UI_SERVER_VERSION (first time only; log: $log)"
cli_src=$(module_dir "github.com/temporalio/cli@$CLI_VERSION")
server_src=$(module_dir "go.temporal.io/server@$SERVER_VERSION")
[ -f "$cli_src/go.mod" ] || fail "could not download github.com/temporalio/cli@$CLI_VERSION"
[ -d "$server_src/schema/postgresql/v12/temporal" ] || fail "no schema/postgresql/v12 in go.temporal.io/server@$SERVER_VERSION"
build="$(mktemp -d "$CACHE/.temporal-server-build.XXXXXX")"
trap 'rm -rf "$build"' EXIT
sed '1s#^module .*#module tarmac.local/temporal-engine#' "$cli_src/go.mod" >"$build/go.mod"
cp "$cli_src/go.sum" "$build/go.sum"
grep -q "go.temporal.io/server $SERVER_VERSION\$" "$build/go.mod" \
  && grep -q "github.com/temporalio/ui-server/v2 $UI_SERVER_VERSION\$" "$build/go.mod" \
  || fail "CLI $CLI_VERSION's go.mod does not require server $SERVER_VERSION and UI server $UI_SERVER_VERSION"

# go build in the background, with a progress line every 30 s.
(
  cd "$build"
  for target in "temporal-server=go.temporal.io/server/cmd/server" "temporal-sql-tool=go.temporal.io/server/cmd/tools/sql" \
    "ui-server=github.com/temporalio/ui-server/v2/cmd/server"; do
    GOFLAGS=-mod=mod go build -x -o "$build/out/${target%%=*}" "${target#*=}"
  done
) >>"$log" 2>&1 &
pid=$!
while kill -0 "$pid" 2>/dev/null; do
  for _ in $(seq 30); do kill -0 "$pid" 2>/dev/null && sleep 1; done
  kill -0 "$pid" 2>/dev/null || break
  echo "  still building: $(grep -c '^go: downloading' "$log") modules downloaded, $(grep -c '^mkdir -p \$WORK/b[0-9]*/$' "$log") packages compiled, $(( $(date +%s) - started )) s"
done
wait "$pid" || fail "go build failed"

rm -rf "$server_dir/schema"
mkdir -p "$server_dir/schema/postgresql/v12" "$ui_dir"
cp -R "$server_src/schema/postgresql/v12/temporal" "$server_src/schema/postgresql/v12/visibility" "$server_dir/schema/postgresql/v12/"
chmod -R u+w "$server_dir/schema"
mv "$build/out/temporal-sql-tool" "$server_dir/temporal-sql-tool"
mv "$build/out/ui-server" "$ui_dir/ui-server"
mv "$build/out/temporal-server" "$server_dir/temporal-server"
echo "temporal server: built in $(( $(date +%s) - started )) s: $server_dir (server, temporal-sql-tool, schemas), $ui_dir/ui-server"
