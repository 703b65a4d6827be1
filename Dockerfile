# syntax=docker/dockerfile:1
# One image for every toolbus service, and the CLI that provisions the bus; the command picks:
#   docker run toolbus:local services/catalog/dist/main.js --config /etc/toolbus/toolbus.toml
#   docker run toolbus:local packages/cli/bin/toolbus.js provision --config /etc/toolbus/toolbus.toml
# Stages: manifests -> deps (full install) -> build (pnpm build); manifests -> prod-deps (runtime
# dependencies only); runtime = prod-deps' node_modules + the built dist/ folders, run as a non-root user.

ARG NODE_IMAGE=node:20-bookworm-slim

FROM ${NODE_IMAGE} AS base
ENV CI=true
# The pnpm version pinned by package.json's packageManager; any other refuses to install.
RUN npm install --global pnpm@12.4.2
WORKDIR /app

# Only the package.json files and the lockfile, so the install layers are rebuilt only when a
# dependency changes. Every workspace package must be listed (test/deploy/dockerfile.test.ts checks).
FROM base AS manifests
COPY package.json pnpm-lock.yaml pnpm-workspace.yaml ./
# The dependency patches pnpm-workspace.yaml names (patchedDependencies): installing needs them.
COPY patches/ patches/
COPY bench/package.json bench/
COPY packages/all-in-one/package.json packages/all-in-one/
COPY packages/bus/package.json packages/bus/
COPY packages/cli/package.json packages/cli/
COPY packages/config/package.json packages/config/
COPY packages/http-guard/package.json packages/http-guard/
COPY packages/policy/package.json packages/policy/
COPY packages/protocol/package.json packages/protocol/
COPY packages/testkit/package.json packages/testkit/
COPY services/approvals/package.json services/approvals/
COPY services/catalog/package.json services/catalog/
COPY services/dispatcher/package.json services/dispatcher/
COPY services/gateway/package.json services/gateway/
COPY services/memory/package.json services/memory/
COPY test/package.json test/

FROM manifests AS deps
RUN --mount=type=cache,id=pnpm-store,target=/pnpm/store \
    pnpm install --frozen-lockfile --store-dir /pnpm/store

FROM deps AS build
COPY . .
RUN pnpm build

# The services and the workspace packages they depend on, without devDependencies; and the CLI's
# own dependencies, for `toolbus provision` (its workspace packages are the services' ones; the
# all-in-one runner of `toolbus start`, which it loads only when installed, stays out of the image).
FROM manifests AS prod-deps
RUN --mount=type=cache,id=pnpm-store,target=/pnpm/store \
    pnpm install --frozen-lockfile --prod --store-dir /pnpm/store \
      --filter @toolbus/approvals... \
      --filter @toolbus/catalog... \
      --filter @toolbus/dispatcher... \
      --filter @toolbus/gateway... \
      --filter @toolbus/memory... \
      --filter @toolbus/cli

FROM ${NODE_IMAGE} AS runtime
ENV NODE_ENV=production
RUN groupadd --system --gid 10001 toolbus \
    && useradd --system --uid 10001 --gid toolbus --home-dir /app --no-create-home --shell /usr/sbin/nologin toolbus
WORKDIR /app
# package.json files and node_modules (pnpm's symlinked layout, copied as is).
COPY --from=prod-deps /app ./
COPY --from=build /app/packages/bus/dist packages/bus/dist
COPY --from=build /app/packages/config/dist packages/config/dist
COPY --from=build /app/packages/http-guard/dist packages/http-guard/dist
# The console and approvals inbox pages, read at start-up (pages.ts reads ../pages/).
COPY --from=build /app/packages/http-guard/pages packages/http-guard/pages
COPY --from=build /app/packages/policy/dist packages/policy/dist
COPY --from=build /app/packages/protocol/dist packages/protocol/dist
COPY --from=build /app/services/approvals/dist services/approvals/dist
COPY --from=build /app/services/catalog/dist services/catalog/dist
COPY --from=build /app/services/dispatcher/dist services/dispatcher/dist
COPY --from=build /app/services/gateway/dist services/gateway/dist
COPY --from=build /app/services/memory/dist services/memory/dist
# Plain SQL run at start-up (memory-service.js reads ../migrations/).
COPY --from=build /app/services/memory/migrations services/memory/migrations
# The CLI, for the provisioning step: node packages/cli/bin/toolbus.js provision (it runs dist/main.js).
COPY --from=build /app/packages/cli/dist packages/cli/dist
COPY --from=build /app/packages/cli/bin packages/cli/bin
COPY deploy/probes deploy/probes
USER 10001:10001
# Every service holds a NATS connection, so this fits all of them; compose and Kubernetes
# replace it with GET /healthz for the HTTP services.
HEALTHCHECK --interval=15s --timeout=5s --start-period=30s --retries=3 \
    CMD ["node", "deploy/probes/nats-connected.mjs"]
ENTRYPOINT ["node"]
CMD ["services/gateway/dist/main.js"]
