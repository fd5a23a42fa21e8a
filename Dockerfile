# One image for every process: CMD runs the api; docker-compose.yml runs the worker and migrations
# from the same image with another command.
FROM node:20-slim AS build
WORKDIR /app
COPY package.json package-lock.json ./
# npm ci refuses a lockfile that lacks some optional platform packages (see .ci/run); npm install then
# installs from the same lockfile.
RUN npm ci --no-audit --no-fund || npm install --no-audit --no-fund
COPY . .
RUN npm run build && npm prune --omit=dev --no-audit --no-fund

FROM node:20-slim
# User code runs in the worker: python3 (a virtualenv per deployment) and git (codehost code locations),
# isolated by bubblewrap and iptables rules (docs/security.md).
RUN apt-get update \
 && apt-get install -y --no-install-recommends python3 python3-venv git ca-certificates bubblewrap iptables \
 && rm -rf /var/lib/apt/lists/*
WORKDIR /app
ENV NODE_ENV=production \
    BLOB_DIR=/var/lib/tarmac/blobs \
    BUILD_DIR=/var/lib/tarmac/builds
COPY --from=build /app/package.json /app/package-lock.json ./
COPY --from=build /app/node_modules ./node_modules
COPY --from=build /app/dist ./dist
# Named volumes mounted here start out owned by the unprivileged user.
RUN mkdir -p /var/lib/tarmac/blobs /var/lib/tarmac/builds && chown -R node:node /var/lib/tarmac
USER node
EXPOSE 8080
CMD ["npm", "run", "api"]
