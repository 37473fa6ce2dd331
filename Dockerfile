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
USER 10001:10001
EXPOSE 8787 8788
ENTRYPOINT ["node", "operator/bin/gatehouse.js"]
CMD ["gateway"]
