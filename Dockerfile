# syntax=docker/dockerfile:1
#
# The `sluice` command in a small image: `sluice serve` on port 8787, as a non-root
# user, with nothing but Node.js and the command's bundle (docs/container.md).
#
#   docker build -t sluice .
#   docker run --rm -p 8787:8787 -e SLUICE_API_TOKENS=... -e REDIS_URL=redis://... sluice
#
# `compose.yaml` beside this file runs it with a Redis server.

# The Node.js major version of both stages: an LTS line that still gets fixes.
ARG NODE_MAJOR=24
# The base images, pinned by digest when given (docs/container.md#pinning-the-base-images):
#   docker build --build-arg BUILD_DIGEST=@sha256:<digest> --build-arg RUNTIME_DIGEST=@sha256:<digest> .
# Empty (the default): the tags alone, as they stand when the image is built.
ARG BUILD_DIGEST=
ARG RUNTIME_DIGEST=

# --- build: the workspace installed from its lockfile, every package built ------------
FROM node:${NODE_MAJOR}-bookworm-slim${BUILD_DIGEST} AS build
RUN npm install --global pnpm@10.34.9
WORKDIR /src
# the build context is an allowlist (.dockerignore): manifests, lockfile, sources
COPY . .
# `pnpm install` runs the root `prepare` script, `pnpm build`: tsc for every package, then
# packages/cli/scripts/bundle.mjs, which writes the command as one bundle,
# packages/cli/dist/bin.js and the chunks it loads, packages/cli/dist/chunks/
RUN --mount=type=cache,id=sluice-pnpm-store,target=/pnpm/store \
    pnpm install --frozen-lockfile --store-dir /pnpm/store
# a smoke run of the bundle
RUN node packages/cli/dist/bin.js --version

# --- runtime: Node.js (distroless: no shell, no package manager) and the bundle --------
FROM gcr.io/distroless/nodejs${NODE_MAJOR}-debian12:nonroot${RUNTIME_DIGEST} AS runtime
LABEL org.opencontainers.image.title="sluice" \
      org.opencontainers.image.description="Sluice's turn server: LLM turns over Redis Streams, SSE, Durable Streams, the turn viewer" \
      org.opencontainers.image.licenses="MIT"
WORKDIR /app
# owned by root and read-only to the user the server runs as
COPY --from=build /src/packages/cli/package.json /app/package.json
COPY --from=build /src/packages/cli/LICENSE /app/LICENSE
COPY --from=build /src/packages/cli/dist/bin.js /app/dist/bin.js
COPY --from=build /src/packages/cli/dist/chunks /app/dist/chunks
# distroless's `nonroot` user (65532), named by number so that a runtime can check it is not root
USER 65532:65532
# every interface of the container, port 8787; pretty logs are for terminals: one JSON
# object a line for a log shipper. Give REDIS_URL (else the turns live in this process's
# memory only) and SLUICE_API_TOKENS (the server refuses to start without one) when running.
ENV NODE_ENV=production \
    SLUICE_HOST=0.0.0.0 \
    SLUICE_PORT=8787 \
    SLUICE_LOG_FORMAT=json
EXPOSE 8787
# liveness: the process serves (GET /healthz, no token). Readiness (GET /readyz: Redis
# answers) is compose.yaml's check. There is no curl here: Node's own fetch.
HEALTHCHECK --interval=30s --timeout=5s --start-period=15s --retries=3 \
  CMD ["/nodejs/bin/node", "-e", "fetch('http://127.0.0.1:'+(process.env.SLUICE_PORT||8787)+'/healthz',{signal:AbortSignal.timeout(4000)}).then(r=>process.exit(r.ok?0:1),()=>process.exit(1))"]
ENTRYPOINT ["/nodejs/bin/node", "/app/dist/bin.js"]
CMD ["serve"]
