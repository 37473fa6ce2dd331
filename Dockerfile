# Gatehouse image: one image for every role, chosen by the first argument:
#   gateway | control-plane | operator | start | sidecar
# The image runs the production build of the `gatehouse` command (operator/scripts/bundle.ts): the
# TypeScript sources and their dependencies bundled and minified into dist/, a third of the source
# text an idle process holds (docs/operations.md "Memory"). Development and the tests run the
# sources directly (Node's type stripping). The production dependencies stay in node_modules for
# the packages the build keeps outside the bundle (loaded on first use; PGlite's files).
ARG NODE_IMAGE=node:24.21.0-slim

# Manifests first, so the dependency layers are reused until a manifest or the lockfile changes.
FROM ${NODE_IMAGE} AS manifests
WORKDIR /app
COPY package.json package-lock.json ./
COPY gateway/package.json gateway/
COPY operator/package.json operator/
COPY crds/package.json crds/
COPY test/package.json test/

FROM manifests AS deps
RUN npm ci --omit=dev --no-audit --no-fund --loglevel=error \
      --workspace=@gatehouse/gateway --workspace=@gatehouse/operator --workspace=@gatehouse/crds \
 && npm cache clean --force

FROM manifests AS build
RUN npm ci --no-audit --no-fund --loglevel=error
COPY gateway/src gateway/src
COPY operator/bin operator/bin
COPY operator/src operator/src
COPY operator/scripts operator/scripts
COPY crds/src crds/src
RUN node operator/scripts/bundle.ts --out /app/dist

FROM ${NODE_IMAGE} AS runtime
ENV NODE_ENV=production
# jemalloc in every server's process: glibc's malloc kept tens of MB of freed memory resident
# under load (operator/src/cli/node-flags.ts SERVER_ALLOCATOR_PATH, docs/operations.md "Memory";
# checked by node-flags.test.ts). Linked to one path whatever the architecture's library directory.
RUN apt-get update \
 && apt-get install -y --no-install-recommends libjemalloc2 \
 && rm -rf /var/lib/apt/lists/* \
 && ln -s "$(find /usr/lib -name libjemalloc.so.2 -print -quit)" /usr/local/lib/libjemalloc.so.2 \
 && test -e /usr/local/lib/libjemalloc.so.2
ENV LD_PRELOAD=/usr/local/lib/libjemalloc.so.2
# Two arenas and freed pages given back after 500 ms (jemalloc); two arenas for glibc's malloc
# where jemalloc is not preloaded (the sidecar). node-flags.ts SERVER_ENV.
ENV MALLOC_CONF=narenas:2,dirty_decay_ms:500,muzzy_decay_ms:0
ENV MALLOC_ARENA_MAX=2
WORKDIR /app
# A fixed non-root uid/gid (the chart's runAsUser), owning nothing in the image: the root
# filesystem can be mounted read-only.
RUN groupadd --system --gid 10001 gatehouse \
 && useradd --system --uid 10001 --gid gatehouse --no-create-home --shell /usr/sbin/nologin gatehouse
COPY --from=deps /app/node_modules ./node_modules
COPY --from=build /app/dist ./dist
# V8's compile cache (each chunk compiled once, here): a sidecar then starts with its modules
# ready instead of compiling them in every pod. Warmed as the runtime uid (Node keys the cache by
# uid) by running the command, which loads the CLI and the gateway's chunks; read-only at run time
# is fine, Node only skips writing entries it lacks.
ENV NODE_COMPILE_CACHE=/app/.node-compile-cache
RUN mkdir /app/.node-compile-cache && chown 10001:10001 /app/.node-compile-cache
USER 10001:10001
# With the sidecar's V8 flags (SIDECAR_NODE_FLAGS in operator/src/webhook/inject.ts): Node keys the
# cache by them.
RUN node --liftoff-only --max-opt=2 dist/gatehouse.mjs --help
# Node keeps a cache per set of V8 flags: the entrypoint's flags below need their own (checked
# against this line by operator/src/cli/node-flags.test.ts).
RUN node --max-semi-space-size=8 --no-allocation-site-pretenuring --use-largepages=silent dist/gatehouse.mjs --help
EXPOSE 8787 8788
# V8 and Node flags of every server (operator/src/cli/node-flags.ts, docs/operations.md "Memory"). The
# webhook's sidecar command is its own (operator/src/webhook/inject.ts).
ENTRYPOINT ["node", "--max-semi-space-size=8", "--no-allocation-site-pretenuring", "--use-largepages=silent", "dist/gatehouse.mjs"]
CMD ["gateway"]
