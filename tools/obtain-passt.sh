#!/usr/bin/env bash
# Obtains a newer pasta (passt's network helper of each run, src/runtime/sandbox/network.ts), pinned and cached
# outside the repo: Debian's source package of trixie's passt (upstream tarball and Debian's patches, checked
# against their pinned sha256) with our patches after Debian's (tools/passt-patches), built with make, into
# /usr/local/lib/tarmac as root (run uids execute it, and root's home is closed to them), else into the tools
# cache (src/runtime/sandbox/pasta-program.ts). It starts a run's network in ~10 ms of wall time, against ~37 ms
# for bookworm's passt of 2023, and costs ~30 ms less CPU (bench/RESULTS.md, sessions 12 and 17). The worker
# uses it when cached (SANDBOX_PASTA names another); without it, or when this fails (no compiler, no network),
# the worker uses the system's pasta (Debian's `passt` package, which tools/obtain-sandbox.sh installs).
set -euo pipefail
CACHE="${TARMAC_CACHE_DIR:-$HOME/.cache/tarmac}"
VERSION=2025_05_03.587980c                      # upstream tag; Debian's 0.0~git20250503.587980c-2+deb13u1
# Our own patches (tools/passt-patches, after Debian's): a change of them bumps BUILD, so a cached build is remade.
BUILD="$VERSION-tarmac1"                         # PASST_BUILD in src/runtime/sandbox/pasta-program.ts
DEBIAN_VERSION=0.0~git20250503.587980c
DEBIAN_REVISION=2+deb13u1
POOL=http://deb.debian.org/debian/pool/main/p/passt
ORIG_SHA256=69d5eb843f7d648c2cc60bfbca6ea7b5014c6b6f07cdee362c2a8cf490515a49
DEBIAN_SHA256=f8d9fdfc1ba89e7dde48705ae68d1dfa8a40477cb85184d41194487f2902b77d

if [ "$(id -u)" = 0 ]; then base=/usr/local/lib/tarmac; else base="$CACHE"; fi
dir="$base/passt-$BUILD"
here="$(cd "$(dirname "$0")" && pwd)"
if [ -x "$dir/pasta" ]; then
  echo "pasta: cached at $dir/pasta"
  exit 0
fi
fallback() {
  echo "pasta: $1; runs use the system's pasta instead (slower to start)" >&2
  exit 0
}
command -v make >/dev/null 2>&1 && command -v cc >/dev/null 2>&1 || fallback "no C compiler (Debian: apt-get install gcc make)"
command -v curl >/dev/null 2>&1 || fallback "no curl to fetch Debian's source package"
mkdir -p "$CACHE/logs"
log="$CACHE/logs/passt-$BUILD.log"
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
echo "pasta: building passt $BUILD from Debian's source package (first time only, about 30 s; log: $log)"
fetch() { # file sha256
  curl -fsS --retry 2 -o "$work/$1" "$POOL/$1" >>"$log" 2>&1 || fallback "could not fetch $POOL/$1"
  echo "$2  $work/$1" | sha256sum -c --status || fallback "$1 does not match its pinned sha256"
}
fetch "passt_${DEBIAN_VERSION}.orig.tar.xz" "$ORIG_SHA256"
fetch "passt_${DEBIAN_VERSION}-${DEBIAN_REVISION}.debian.tar.xz" "$DEBIAN_SHA256"
tar -xf "$work/passt_${DEBIAN_VERSION}.orig.tar.xz" -C "$work"
tar -xf "$work/passt_${DEBIAN_VERSION}-${DEBIAN_REVISION}.debian.tar.xz" -C "$work"
src="$work/passt-$VERSION"
while read -r patch; do
  [ -n "$patch" ] && patch -d "$src" -p1 <"$work/debian/patches/$patch" >>"$log" 2>&1
done <"$work/debian/patches/series"
for patch in "$here"/passt-patches/*.patch; do
  patch -d "$src" -p1 <"$patch" >>"$log" 2>&1 || fallback "$(basename "$patch") does not apply (log: $log)"
done
targets=(passt)
[ "$(uname -m)" = x86_64 ] && targets+=(passt.avx2)
# One make per target: passt.avx2's flags (-mavx2) would also apply to passt, its prerequisite, made with it.
built=true
for t in "${targets[@]}"; do make -C "$src" "$t" >>"$log" 2>&1 || { built=false; break; }; done
if ! $built; then
  tail -n 20 "$log" >&2
  fallback "the build failed (full log: $log)"
fi
# Its argv[0] selects pasta's mode: the cache holds the links the worker runs, in a directory only its owner writes.
mkdir -p -m 0755 "$base" && mkdir -p "$dir.tmp"
for t in "${targets[@]}"; do install -m 0755 "$src/$t" "$dir.tmp/$t"; ln -sf "$t" "$dir.tmp/${t/passt/pasta}"; done
chmod 0755 "$dir.tmp"
rm -rf "$dir" && mv "$dir.tmp" "$dir"
echo "pasta: built $dir/pasta"
