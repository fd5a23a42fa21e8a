#!/usr/bin/env bash
# Obtains what isolating user code needs (src/runtime/sandbox, docs/security.md): bubblewrap for the
# namespaces, passt's pasta for each run's network namespace (and a /dev/net/tun that run uids may open, as
# udev makes it on most hosts), iptables for the run-uid firewall, util-linux's setpriv and prlimit, bash
# for the network launcher. Installed from Debian's
# packages when missing and this runs as root; otherwise it says what is missing and the worker refuses
# to run user code (unless SANDBOX=off). Nothing to do with SANDBOX=off.
# `--tests` (npm test) adds strace: a test holds bubblewrap's syscalls back with it to replay a start-up race.
set -euo pipefail
tools=(bwrap:bubblewrap pasta:passt bash:bash iptables:iptables iptables-restore:iptables setpriv:util-linux prlimit:util-linux nsenter:util-linux)
[ "${1:-}" = "--tests" ] && tools+=(strace:strace)
if [ "${SANDBOX:-on}" = "off" ]; then
  echo "sandbox: SANDBOX=off, nothing to obtain (user code runs unisolated: single-tenant development only)"
  exit 0
fi
missing=()
# pasta opens /dev/net/tun inside each run's namespace as the run's uid. Opening it grants nothing by itself
# (creating an interface needs CAP_NET_ADMIN over a network namespace); hosts without udev leave it 0600.
tun_usable() {
  [ -c /dev/net/tun ] && [ "$(( 0$(stat -c %a /dev/net/tun) & 06 ))" = 6 ]
}
if ! tun_usable && [ "$(id -u)" = "0" ]; then
  if [ ! -e /dev/net/tun ]; then mkdir -p /dev/net && mknod -m 0666 /dev/net/tun c 10 200; else chmod 0666 /dev/net/tun; fi
  echo "sandbox: /dev/net/tun made usable by run uids (mode 0666, as udev makes it)"
fi
tun_usable || echo "sandbox: /dev/net/tun is not usable by run uids: run this as root, or chmod 0666 /dev/net/tun" >&2
missing=()
# (nsenter and iptables-restore: the rootless mode loads each run's packet filter into its own namespace.)
for tool in "${tools[@]}"; do
  command -v "${tool%%:*}" >/dev/null 2>&1 || [ -x "/usr/sbin/${tool%%:*}" ] || missing+=("${tool#*:}")
done
# A newer pasta than the system's, pinned (it falls back to the system's when it cannot be built).
here="$(cd "$(dirname "$0")" && pwd)"
trap 'bash "$here/obtain-passt.sh"' EXIT
if [ ${#missing[@]} -eq 0 ]; then
  echo "sandbox: bubblewrap, pasta, iptables, setpriv and prlimit present"
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
