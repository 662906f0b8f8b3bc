# syntax=docker/dockerfile:1
# recruit-sync as an image: `worker --ops` by default (queues, schedules,
# watched folders, and /healthz for the healthcheck); any other command of the
# CLI runs the same way, e.g. `docker run IMAGE jobs validate`.
# docker-compose.yml builds it and says how each service runs it; docs/deploy.md.

ARG NODE_VERSION=20.20

# ---- dependencies: production only, from the committed lock -----------------
FROM node:${NODE_VERSION}-bookworm-slim AS deps
WORKDIR /app
COPY package.json package-lock.json ./
# npm ci runs the package's prepare script, which compiles src/ to dist/; src/
# is not here yet (so that code changes keep this layer cached): it compiles
# nothing, and the runtime stage builds dist/ once the sources are in.
COPY scripts ./scripts
# npm ci refuses a lock that lacks other platforms' optional binaries, and the
# registry the lock was written against serves only Linux ones (see
# docs/dependencies.md, "Installing in CI"). Then install from the same lock
# with npm install: the same versions, on a clean node_modules.
RUN npm ci --omit=dev --no-audit --no-fund \
  || (rm -rf node_modules && npm install --omit=dev --no-audit --no-fund) \
  && npm cache clean --force

# ---- runtime: no build tools, no dev dependencies, not root -----------------
FROM node:${NODE_VERSION}-bookworm-slim AS runtime
ENV NODE_ENV=docker \
    RECRUIT_SYNC_OPS_HOST=0.0.0.0 \
    RECRUIT_SYNC_OPS_PORT=8080
WORKDIR /app
# Owned by root and read-only to the process: the code cannot be rewritten by what it runs.
COPY --from=deps /app/node_modules ./node_modules
COPY package.json package-lock.json ./
COPY bin ./bin
COPY src ./src
COPY scripts ./scripts
# The compiled CLI: without it every start compiles the TypeScript again (bin/recruit-sync.mjs).
RUN node scripts/build-dist.mjs
COPY config ./config
COPY jobs ./jobs
COPY samples ./samples
# The data folder (reports, rejects, the watched folders, DuckDB) belongs to
# the unprivileged `node` user of the base image; volumes mounted here start
# with this ownership.
RUN mkdir -p /data/inbox /data/warehouse /data/emulator \
  && chown -R node:node /data \
  && chmod 0700 /data
USER node
EXPOSE 8080
# /healthz answers while the process runs, without credentials; /readyz (Redis
# and the warehouse) is for orchestrators that should route traffic.
HEALTHCHECK --interval=30s --timeout=5s --start-period=30s --retries=3 \
  CMD ["node", "-e", "fetch('http://127.0.0.1:' + (process.env.RECRUIT_SYNC_OPS_PORT || 8080) + '/healthz').then((r) => process.exit(r.ok ? 0 : 1), () => process.exit(1))"]
ENTRYPOINT ["node", "bin/recruit-sync.mjs"]
CMD ["worker", "--ops"]
