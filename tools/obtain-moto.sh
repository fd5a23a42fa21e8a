#!/usr/bin/env bash
# Obtains moto's S3-compatible server, the object store of the production shape on one machine
# (src/cli/cluster/object-store.ts): `moto[server]` from PyPI, pinned (the version test/harness/s3-server.ts
# pins too), installed once into a venv cached outside the repo and reused across runs. Progress goes to
# stderr; the venv's python is the last line on stdout (run it as `python -m moto.server`).
# TARMAC_PYTHON chooses the interpreter (default python3; moto wants >= 3.9).
set -euo pipefail

VERSION=5.2.5 # src/cli/cluster/object-store.ts names the same (test/unit/cli/cluster/object-store.test.ts checks)
CACHE="${TARMAC_CACHE_DIR:-$HOME/.cache/tarmac}"
venv="$CACHE/venvs/moto-server-$VERSION"
python="${TARMAC_PYTHON:-python3}"

if [ -f "$venv/.complete" ]; then
  echo "moto: moto[server] $VERSION cached at $venv" >&2
  echo "$venv/bin/python"
  exit 0
fi
command -v "$python" >/dev/null 2>&1 || { echo "moto: $python is needed (Debian: apt-get install python3-venv)" >&2; exit 1; }
"$python" -c 'import venv, ensurepip' 2>/dev/null \
  || { echo "moto: $python cannot make a venv (Debian: apt-get install python3-venv)" >&2; exit 1; }

mkdir -p "$CACHE/venvs"
log="$(mktemp "${TMPDIR:-/tmp}/tarmac-obtain-moto.XXXXXX.log")"
# Built beside and renamed into place: an interrupted install never leaves a half venv that looks complete.
# Only `python -m` is used, so the scripts in bin/ (whose shebangs name the staging path) do not matter.
staging="$venv.building-$$"
trap 'rm -rf "$staging"' EXIT
fail() {
  tail -n 15 "$log" | sed 's/^/  | /' >&2
  echo "moto: $1 (full log: $log)" >&2
  exit 1
}

started=$(date +%s)
echo "moto: installing moto[server]==$VERSION from PyPI into $venv (first time only, about a minute)..." >&2
"$python" -m venv "$staging" >>"$log" 2>&1 || fail "$python -m venv failed"
"$staging/bin/python" -m pip install --disable-pip-version-check "moto[server]==$VERSION" >>"$log" 2>&1 \
  || fail "pip could not install moto[server]==$VERSION"
"$staging/bin/python" -c 'import moto.server' >>"$log" 2>&1 || fail "moto.server does not import"
echo "$("$python" --version 2>&1) moto[server]==$VERSION" >"$staging/.complete"
rm -rf "$venv"
mv "$staging" "$venv"
rm -f "$log"
echo "moto: installed in $(( $(date +%s) - started )) s" >&2
echo "$venv/bin/python"
