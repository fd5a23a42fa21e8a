#!/usr/bin/env bash
# Obtains the browser of the console's end-to-end test (test/console/, docs/console.md): Chromium from
# Debian's packages, installed when missing and this runs as root; no browser is downloaded from elsewhere
# (playwright-core drives it by its path, /usr/bin/chromium or CONSOLE_TEST_CHROMIUM).
set -euo pipefail
browser="${CONSOLE_TEST_CHROMIUM:-/usr/bin/chromium}"
if [ -x "$browser" ]; then
  echo "browser: $("$browser" --version 2>/dev/null || echo "$browser") present"
  exit 0
fi
if [ "$(id -u)" = "0" ] && command -v apt-get >/dev/null 2>&1; then
  echo "browser: installing chromium from Debian's packages (first time only, about a minute)..."
  log="$(mktemp)"
  if ! { apt-get install -y --no-install-recommends chromium || { apt-get update && apt-get install -y --no-install-recommends chromium; }; } >"$log" 2>&1; then
    tail -n 20 "$log" >&2
    echo "browser: could not install chromium (full log: $log)" >&2
    exit 1
  fi
  rm -f "$log"
  echo "browser: installed $(chromium --version)"
else
  echo "browser: $browser is missing: install it (Debian: apt-get install chromium) or set CONSOLE_TEST_CHROMIUM; the console test fails without it" >&2
fi
