# Sourced by tools/obtain-embedding-model.sh and tools/embedding-model/obtain-bge-small.sh: the venv of the
# pinned `onnx` package (and numpy) under the cache that builds or wraps the ONNX graphs, made once.
# Needs CACHE, log and a fail function from the sourcing script; sets ONNX_PYTHON.
ONNX_BUILD_REQUIREMENTS=(onnx==1.23.2 numpy==2.4.6)
onnx_venv="$CACHE/venvs/onnx-build-1.23.2"
if [ ! -f "$onnx_venv/.complete" ]; then
  echo "embedding model: installing ${ONNX_BUILD_REQUIREMENTS[*]} into $onnx_venv (first time only)..."
  mkdir -p "$CACHE/venvs"
  rm -rf "$onnx_venv"
  python3 -m venv "$onnx_venv" >>"$log" 2>&1 || fail "could not create a venv (Debian: apt-get install python3-venv)"
  "$onnx_venv/bin/pip" install --only-binary=:all: "${ONNX_BUILD_REQUIREMENTS[@]}" >>"$log" 2>&1 \
    || fail "pip could not install ${ONNX_BUILD_REQUIREMENTS[*]}"
  touch "$onnx_venv/.complete"
fi
ONNX_PYTHON="$onnx_venv/bin/python"
