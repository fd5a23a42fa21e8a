#!/usr/bin/env bash
# Obtains the production Temporal engine, pinned and cached outside the repo (src/cli/cluster/temporal-cluster.ts runs it):
#   - the Temporal server v1.29.1 (the version the pinned CLI v1.5.1 embeds) and its temporal-sql-tool, built from
#     go.temporal.io/server with the Go module proxy, with the PostgreSQL schema directories the sql tool applies;
#   - the Temporal UI server v2.42.1 (the UI that CLI v1.5.1 embeds: github.com/temporalio/ui-server/v2 in its go.mod).
# Reused across runs. A machine without Go gets nothing: the cluster tests then skip, saying so.
set -euo pipefail

CACHE="${TARMAC_CACHE_DIR:-$HOME/.cache/tarmac}"
SERVER_VERSION=v1.29.1
UI_SERVER_VERSION=v2.42.1
server_dir="$CACHE/temporal-server-$SERVER_VERSION"
ui_dir="$CACHE/ui-server-$UI_SERVER_VERSION"

if ! command -v go >/dev/null 2>&1; then
  echo "temporal server: no Go toolchain; the Temporal cluster (and its tests) is unavailable on this machine"
  exit 0
fi

# go_install LABEL LOG GOBIN PACKAGE@VERSION...: `go install` in the background with a progress line every 30 s.
go_install() {
  local label="$1" log="$2" gobin="$3"
  shift 3
  mkdir -p "$gobin" "$CACHE/logs"
  echo "$label: building with go install (first time only, usually 2-6 min; log: $log)"
  local started build
  started=$(date +%s)
  GOBIN="$gobin" GOFLAGS=-mod=mod go install -x "$@" >"$log" 2>&1 &
  build=$!
  while kill -0 "$build" 2>/dev/null; do
    for _ in $(seq 30); do kill -0 "$build" 2>/dev/null && sleep 1; done
    kill -0 "$build" 2>/dev/null || break
    echo "  still building: $(grep -c '^go: downloading' "$log") modules downloaded, $(grep -c '^mkdir -p \$WORK/b[0-9]*/$' "$log") packages compiled, $(( $(date +%s) - started )) s"
  done
  if ! wait "$build"; then
    tail -n 20 "$log" >&2
    echo "$label: go install failed (full log: $log)" >&2
    exit 1
  fi
  echo "$label: built in $(( $(date +%s) - started )) s"
}

if [ -x "$server_dir/temporal-server" ] && [ -x "$server_dir/temporal-sql-tool" ] \
  && [ -f "$server_dir/schema/postgresql/v12/visibility/schema.sql" ]; then
  echo "temporal server: cached at $server_dir"
else
  go_install "temporal server $SERVER_VERSION" "$CACHE/logs/temporal-server-$SERVER_VERSION.log" "$server_dir/.bin" \
    "go.temporal.io/server/cmd/server@$SERVER_VERSION" "go.temporal.io/server/cmd/tools/sql@$SERVER_VERSION"
  # The module's source (in the module cache since the install) holds the schemas the sql tool applies.
  module_dir=$(go mod download -json "go.temporal.io/server@$SERVER_VERSION" | sed -n 's/^\t"Dir": "\(.*\)",$/\1/p')
  if [ ! -d "$module_dir/schema/postgresql/v12/temporal" ]; then
    echo "temporal server: no schema/postgresql/v12 in the module's source ($module_dir)" >&2
    exit 1
  fi
  rm -rf "$server_dir/schema"
  mkdir -p "$server_dir/schema/postgresql/v12"
  cp -R "$module_dir/schema/postgresql/v12/temporal" "$module_dir/schema/postgresql/v12/visibility" \
    "$server_dir/schema/postgresql/v12/"
  chmod -R u+w "$server_dir/schema"
  mv "$server_dir/.bin/sql" "$server_dir/temporal-sql-tool"
  mv "$server_dir/.bin/server" "$server_dir/temporal-server" # last: its presence marks the cache complete
  rmdir "$server_dir/.bin"
  echo "temporal server: ready at $server_dir"
fi

if [ -x "$ui_dir/ui-server" ]; then
  echo "temporal UI server: cached at $ui_dir/ui-server"
else
  go_install "temporal UI server $UI_SERVER_VERSION" "$CACHE/logs/ui-server-$UI_SERVER_VERSION.log" "$ui_dir/.bin" \
    "github.com/temporalio/ui-server/v2/cmd/server@$UI_SERVER_VERSION"
  mv "$ui_dir/.bin/server" "$ui_dir/ui-server"
  rmdir "$ui_dir/.bin"
  echo "temporal UI server: ready at $ui_dir/ui-server"
fi
