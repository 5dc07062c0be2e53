# syntax=docker/dockerfile:1
# The operator image: TypeScript compiled with the pinned Node, run on distroless Node 24 as a
# non-root user with production dependencies only.
#   docker build -t basic-operator:dev .
# The base images are build arguments, so a machine with no registry can build on local images of
# the same contents (e2e/providers/kind/images/node-bases.ts builds those):
#   docker build --build-arg BUILD_IMAGE=... --build-arg RUNTIME_IMAGE=... -t basic-operator:dev .
# A release pins their defaults by digest first, where a registry answers:
#   node scripts/pin-base-images.ts          (docker buildx imagetools inspect; writes ...@sha256:...)
#   node scripts/pin-base-images.ts --check  (fails while one is a tag only)

# Keep in step with the `node` devDependency in package.json.
ARG NODE_VERSION=24.21.0
# Node and npm on Debian bookworm, for the two build stages.
ARG BUILD_IMAGE=node:${NODE_VERSION}-bookworm-slim
# The runtime: node at /nodejs/bin/node, glibc, CA certificates, time zones, user 65532; no shell.
ARG RUNTIME_IMAGE=gcr.io/distroless/nodejs24-debian12:nonroot

# Compile src/ to dist/ (tsc rewrites the .ts import specifiers to .js). `npm ci` installs exactly
# what package-lock.json pins (it lists every platform's optional native packages, which npm ci
# needs: test/unit/packaging/image.test.ts). No install scripts: the only one among the
# dependencies is the `node` devDependency's, which would download a second Node this image has.
FROM ${BUILD_IMAGE} AS build
WORKDIR /app
COPY package.json package-lock.json ./
RUN npm ci --ignore-scripts --no-audit --no-fund
COPY tsconfig.json tsconfig.build.json ./
COPY src ./src
RUN npm run build

# Production dependencies only. No install scripts: none of them needs one.
FROM ${BUILD_IMAGE} AS prod-deps
WORKDIR /app
COPY package.json package-lock.json ./
RUN npm ci --omit=dev --ignore-scripts --no-audit --no-fund

# No shell, no package manager; the nonroot user (65532) is numeric, so runAsNonRoot can verify it.
FROM ${RUNTIME_IMAGE}
WORKDIR /app
ENV NODE_ENV=production
# package.json carries "type": "module", which dist/*.js needs.
COPY package.json ./
COPY --from=prod-deps /app/node_modules ./node_modules
COPY --from=build /app/dist ./dist
USER 65532:65532
EXPOSE 8080 8081
# node is PID 1 and the operator handles SIGTERM itself (graceful shutdown, lease release). The
# entrypoint is the full command so `args:` in a pod spec (or `docker run IMAGE --help`) become flags.
# Memory (docs/memory.md): the heap is sized from the container's memory limit, 60% of it for the old
# space, the rest for code and buffers. The young generation is set to 4 MiB semi-spaces: inside a
# limit V8 scales it down with the old space, to semi-spaces so small that collecting them took a
# quarter of the operator's CPU at 10,000 pods.
# `npm run bench` starts the operator with these same flags.
ENTRYPOINT ["/nodejs/bin/node", "--enable-source-maps", "--max-old-space-size-percentage=60", "--max-semi-space-size=4", "dist/main.js"]
CMD []
