#!/usr/bin/env bash
# Builds the image from the Dockerfile with podman or buildah (Debian's packages), in
# the Docker image format so that its HEALTHCHECK is kept, and runs its bundle once
# (docs/container.md#podman-and-buildah).
#
# It skips, exit 0 with the reason printed, when it cannot try: no podman or buildah
# (and none can be installed), or the base images cannot be had (no network to their
# registries). Once the base images are at hand, a build that fails, an image without
# its HEALTHCHECK or a bundle that does not run fails it, exit 1.
#
#   scripts/containerCheck.sh            # from the repository's root, or anywhere
#   SLUICE_CONTAINER_ENGINE=buildah scripts/containerCheck.sh
set -euo pipefail
cd "$(dirname "$0")/.."

skip() {
  echo "containerCheck: skipped: $*" >&2
  exit 0
}
fail() {
  echo "containerCheck: FAILED: $*" >&2
  exit 1
}

node_major=$(sed -n 's/^ARG NODE_MAJOR=\([0-9][0-9]*\)$/\1/p' Dockerfile)
[ -n "$node_major" ] || fail "the Dockerfile has no ARG NODE_MAJOR=<n>"
bases=("docker.io/library/node:${node_major}-bookworm-slim" "gcr.io/distroless/nodejs${node_major}-debian12:nonroot")
tag="localhost/sluice:container-check"

engine="${SLUICE_CONTAINER_ENGINE:-}"
if [ -z "$engine" ]; then
  for candidate in podman buildah; do
    if command -v "$candidate" >/dev/null 2>&1; then
      engine=$candidate
      break
    fi
  done
fi
if [ -z "$engine" ] && [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then
  # Debian's podman; a machine without a reachable mirror skips below
  if DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends podman >/dev/null 2>&1; then
    engine=podman
  fi
fi
[ -n "$engine" ] || skip "neither podman nor buildah is installed (apt-get install podman)"
command -v "$engine" >/dev/null 2>&1 || skip "$engine is not installed"

have_image() {
  if [ "$engine" = podman ]; then podman image exists "$1"; else buildah inspect --type image "$1" >/dev/null 2>&1; fi
}

# the base images: present already, or pulled; not to be had is a skip, not a failure
for base in "${bases[@]}"; do
  if have_image "$base"; then continue; fi
  if ! out=$(timeout 300 "$engine" pull -q "$base" 2>&1); then
    skip "the base image $base cannot be had ($(printf '%s' "$out" | tail -n 1))"
  fi
done

echo "containerCheck: building $tag with $engine (--format docker)" >&2
if [ "$engine" = podman ]; then
  podman build --format docker --pull=never -t "$tag" . || fail "podman build failed"
  healthcheck=$(podman image inspect --format '{{json .Config.Healthcheck}}' "$tag")
  version=$(podman run --rm --network=none "$tag" --version) || fail "the image's bundle does not run"
  podman image rm -f "$tag" >/dev/null 2>&1 || true
else
  buildah bud --format docker --pull-never -t "$tag" . || fail "buildah bud failed"
  healthcheck=$(buildah inspect --type image --format '{{json .Docker.Config.Healthcheck}}' "$tag")
  # buildah runs no container without a runtime set up: the bundle's smoke run in the
  # build stage (`node packages/cli/dist/bin.js --version`) stands for it
  version="not run (buildah)"
  buildah rmi -f "$tag" >/dev/null 2>&1 || true
fi
case "$healthcheck" in
  *healthz*) ;;
  *) fail "the image lost its HEALTHCHECK (got ${healthcheck:-nothing}): build with --format docker" ;;
esac
echo "containerCheck: ok ($engine; HEALTHCHECK kept; sluice --version: $version)" >&2
