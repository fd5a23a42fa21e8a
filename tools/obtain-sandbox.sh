#!/usr/bin/env bash
# Obtains what isolating user code needs (src/runtime/sandbox, docs/security.md): bubblewrap for the
# namespaces, iptables for the run-uid firewall, util-linux's setpriv and prlimit. Installed from Debian's
# packages when missing and this runs as root; otherwise it says what is missing and the worker refuses
# to run user code (unless SANDBOX=off). Nothing to do with SANDBOX=off.
set -euo pipefail
if [ "${SANDBOX:-on}" = "off" ]; then
  echo "sandbox: SANDBOX=off, nothing to obtain (user code runs unisolated: single-tenant development only)"
  exit 0
fi
missing=()
for tool in bwrap:bubblewrap iptables:iptables setpriv:util-linux prlimit:util-linux; do
  command -v "${tool%%:*}" >/dev/null 2>&1 || [ -x "/usr/sbin/${tool%%:*}" ] || missing+=("${tool#*:}")
done
if [ ${#missing[@]} -eq 0 ]; then
  echo "sandbox: bubblewrap, iptables, setpriv and prlimit present"
  exit 0
fi
packages="$(printf '%s\n' "${missing[@]}" | sort -u | tr '\n' ' ')"
if [ "$(id -u)" = "0" ] && command -v apt-get >/dev/null 2>&1; then
  echo "sandbox: installing ${packages}from Debian's packages (first time only, about 20 s)..."
  log="$(mktemp)"
  if ! { apt-get install -y --no-install-recommends $packages || { apt-get update && apt-get install -y --no-install-recommends $packages; }; } >"$log" 2>&1; then
    tail -n 20 "$log" >&2
    echo "sandbox: could not install ${packages}(full log: $log)" >&2
    exit 1
  fi
  rm -f "$log"
  echo "sandbox: installed ${packages}"
else
  echo "sandbox: missing ${packages}: install them (Debian: apt-get install ${packages}), or the worker refuses to run user code" >&2
fi
