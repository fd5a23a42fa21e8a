#!/usr/bin/env bash
# Obtains HAProxy, the load balancer of the production shape on one machine (`npm run cluster`,
# src/cli/cluster/load-balancer.ts): HTTP in front of the api processes, TCP (gRPC) in front of the Temporal
# frontends. Installed from Debian's packages when missing and this runs as root; otherwise it says what is
# missing and fails. Progress goes to stderr; the binary's path is the last line on stdout.
# HAPROXY_BINARY (an HAProxy >= 2.2 of your own) skips all this.
set -euo pipefail

found() {
  if [ -n "${HAPROXY_BINARY:-}" ]; then
    [ -x "$HAPROXY_BINARY" ] && echo "$HAPROXY_BINARY"
  elif command -v haproxy >/dev/null 2>&1; then
    command -v haproxy
  elif [ -x /usr/sbin/haproxy ]; then
    echo /usr/sbin/haproxy
  else
    return 1
  fi
}

if [ -n "${HAPROXY_BINARY:-}" ] && ! found >/dev/null; then
  echo "haproxy: HAPROXY_BINARY=$HAPROXY_BINARY is not an executable" >&2
  exit 1
fi
if ! found >/dev/null; then
  if [ "$(id -u)" = "0" ] && command -v apt-get >/dev/null 2>&1; then
    echo "haproxy: installing haproxy from Debian's packages (first time only, about 10 s)..." >&2
    log="$(mktemp "${TMPDIR:-/tmp}/tarmac-obtain-haproxy.XXXXXX.log")"
    # The package's own service is never started here (no init system in containers; the cluster runs its own).
    if ! { apt-get install -y --no-install-recommends haproxy \
      || { apt-get update && apt-get install -y --no-install-recommends haproxy; }; } >"$log" 2>&1; then
      tail -n 20 "$log" | sed 's/^/  | /' >&2
      echo "haproxy: could not install haproxy (full log: $log)" >&2
      exit 1
    fi
    rm -f "$log"
  else
    echo "haproxy: missing: install it (Debian: apt-get install haproxy), or set HAPROXY_BINARY to an HAProxy >= 2.2" >&2
    exit 1
  fi
fi
bin="$(found)"
echo "haproxy: $("$bin" -v | head -n 1) at $bin" >&2
echo "$bin"
