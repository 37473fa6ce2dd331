# Gatehouse image: one image for every role, chosen by the first argument:
#   gateway | control-plane | operator | start
# Node 24 runs the TypeScript sources directly (type stripping), so there is no build step: the
# first stage only installs the production dependencies of the runtime workspaces.
ARG NODE_IMAGE=node:24.21.0-slim

FROM ${NODE_IMAGE} AS deps
WORKDIR /app
# Manifests first, so the dependency layer is reused until a manifest or the lockfile changes.
COPY package.json package-lock.json ./
COPY gateway/package.json gateway/
COPY operator/package.json operator/
COPY crds/package.json crds/
COPY test/package.json test/
RUN npm ci --omit=dev --no-audit --no-fund --loglevel=error \
      --workspace=@gatehouse/gateway --workspace=@gatehouse/operator --workspace=@gatehouse/crds \
 && npm cache clean --force

FROM ${NODE_IMAGE} AS runtime
ENV NODE_ENV=production
# Two malloc arenas instead of up to 8 per core: freed memory in a thread's arena stays resident
# (operator/src/cli/node-flags.ts SERVER_ENV, docs/operations.md "Memory"; checked by node-flags.test.ts).
ENV MALLOC_ARENA_MAX=2
WORKDIR /app
# A fixed non-root uid/gid (the chart's runAsUser), owning nothing in the image: the root
# filesystem can be mounted read-only.
RUN groupadd --system --gid 10001 gatehouse \
 && useradd --system --uid 10001 --gid gatehouse --no-create-home --shell /usr/sbin/nologin gatehouse
COPY --from=deps /app/node_modules ./node_modules
COPY package.json ./
COPY gateway/package.json gateway/
COPY gateway/src gateway/src
COPY operator/package.json operator/
COPY operator/bin operator/bin
COPY operator/src operator/src
COPY crds/package.json crds/
COPY crds/src crds/src
COPY crds/generated crds/generated
# V8's compile cache (TypeScript stripped and compiled once, here): a sidecar then starts with its
# modules ready instead of compiling them in every pod. Warmed as the runtime uid (Node keys the
# cache by uid) by loading the CLI and the sidecar's module graph; read-only at run time is fine,
# Node only skips writing entries it lacks.
ENV NODE_COMPILE_CACHE=/app/.node-compile-cache
RUN mkdir /app/.node-compile-cache && chown 10001:10001 /app/.node-compile-cache
USER 10001:10001
# With the sidecar's V8 flags (SIDECAR_NODE_FLAGS in operator/src/webhook/inject.ts): Node keys the
# cache by them.
RUN node --liftoff-only --max-opt=2 --input-type=module -e "await import('/app/operator/src/cli/main.ts'); await import('/app/gateway/src/sidecar-main.ts')"
# Node keeps a cache per set of V8 flags: the entrypoint's flags below need their own (checked
# against this line by operator/src/cli/node-flags.test.ts).
RUN node --max-semi-space-size=4 --input-type=module -e "await import('/app/operator/src/cli/main.ts')"
EXPOSE 8787 8788
# V8 flags of every server (operator/src/cli/node-flags.ts, docs/operations.md "Memory"). The
# webhook's sidecar command is its own (operator/src/webhook/inject.ts).
ENTRYPOINT ["node", "--max-semi-space-size=4", "operator/bin/gatehouse.js"]
CMD ["gateway"]
