# syntax=docker/dockerfile:1
# tokengate: one image for the service (`node dist/main.js`, the default) and the gateway emulator
# (`node dist/sandbox/main.js`, set as the container command in k8s/overlays/sandbox).
#
# Base images are pinned to an exact version. For reproducible production builds, pin the digest too
# (resolve it once with `docker buildx imagetools inspect node:20.20.2-bookworm-slim`):
#   FROM node:20.20.2-bookworm-slim@sha256:<digest> AS ...

# --- production dependencies only, installed from the lockfile --------------------------------------
FROM node:20.20.2-bookworm-slim AS prod-deps
WORKDIR /app
COPY package.json package-lock.json ./
COPY patches ./patches
# --ignore-scripts: runtime dependencies need no install scripts, and skipping them keeps the layer inert. Our
# patches to installed packages (patches/README.md) are applied by patch-package, a dev dependency pinned by
# the lockfile, so this stage installs everything, patches, then prunes to production dependencies.
RUN npm ci --ignore-scripts --no-audit --no-fund \
 && npx --no-install patch-package --error-on-fail \
 && npm prune --omit=dev --ignore-scripts --no-audit --no-fund \
 && npm cache clean --force

# --- build: dev dependencies (TypeScript), compile to dist/ -----------------------------------------
FROM node:20.20.2-bookworm-slim AS build
WORKDIR /app
COPY package.json package-lock.json ./
RUN npm ci --ignore-scripts --no-audit --no-fund
COPY tsconfig.json tsconfig.build.json ./
COPY scripts ./scripts
COPY src ./src
RUN npm run build

# --- runtime: node, production node_modules, dist/ and config/; nothing else ----------------------
FROM node:20.20.2-bookworm-slim AS runtime
# Numeric UID/GID so Kubernetes can verify runAsNonRoot without resolving names.
RUN groupadd --system --gid 10001 tokengate \
 && useradd --system --uid 10001 --gid 10001 --home-dir /tmp --no-create-home --shell /usr/sbin/nologin tokengate
WORKDIR /app
# HOME and TMPDIR point at /tmp, the only writable path under a read-only root filesystem
# (Kubernetes mounts an emptyDir there). The app itself writes nothing to disk: logs go to stdout.
ENV NODE_ENV=production \
    HOME=/tmp \
    TMPDIR=/tmp \
    NPM_CONFIG_UPDATE_NOTIFIER=false \
    PORT=8080 \
    ADMIN_PORT=9090
# Files stay owned by root and read-only to the app user: a compromised process cannot rewrite its code.
COPY --from=prod-deps /app/node_modules ./node_modules
COPY --from=build /app/dist ./dist
COPY package.json ./
COPY config ./config
USER 10001:10001
EXPOSE 8080 9090
# No HEALTHCHECK: Kubernetes probes (/healthz, /readyz on the admin port) are the real ones, and the
# same image also runs the emulator, which has no admin port.
# Exec form, node as PID 1 without npm: SIGTERM reaches the process, which drains and exits 0.
# --single-threaded-gc: the pod is limited to one core, where V8's parallel GC helper threads only compete with
# the event loop for the same quota. Measured on 2 cores shared with Redis, the sandbox and the load generator
# (bench/results/ab-cpu-single-threaded-gc.json and the open loop): CPU per sale 0.98x (95 % CI 0.93-1.01), at
# 200 sales/s the time tokengate sat runnable without a core fell by a third and p99.9 by ~6 ms. Node refuses
# the flag in NODE_OPTIONS, so it is here; `npm start`, the e2e suites and the bench read it from this line.
CMD ["node", "--single-threaded-gc", "dist/main.js"]
