# syntax=docker/dockerfile:1
# Worker image (renders with Chromium). Build from the repository root:
#   docker build -f docker/worker.Dockerfile -t media-render-worker .

############################ build ############################
FROM node:24-bookworm-slim AS build
WORKDIR /app
ENV NODE_ENV=development

# `npm install`, not `npm ci`: the lockfile lacks other platforms' optional packages.
COPY package.json package-lock.json* ./
RUN npm install --no-audit --no-fund

COPY tsconfig*.json openapi.jso[n] ./
COPY apps ./apps
COPY libs ./libs
# The dashboard build's last step (its assets' .br and .gz copies).
COPY scripts/compress-dashboard.mjs ./scripts/
RUN npm run build \
 && npm prune --omit=dev --no-audit --no-fund \
 && rm -f node_modules/.bin/node
# The video composition's bundle (Remotion + rspack compile libs/video/remotion and the edit-spec
# math it imports), built once here; the worker reuses it (its key file matches the sources).
RUN node -e "import('./dist/libs/video/src/index.js').then((m) => m.ensureBundle('/app/video-bundle'))"

############################ runtime ############################
FROM node:24-bookworm-slim AS runtime

# Debian's Chromium as its old headless shell (what Remotion drives; about twice the frame rate of
# the full browser, docs/benchmarks.md) plus the shipped font families (scripts/font-packages.txt:
# Latin, CJK, colour emoji, display faces) and the Debian fonts and sounds of the stock asset library
# (scripts/stock-packages.txt). CMU pocketsphinx and its US English model: the offline speech engine
# (libs/captions/src/local.ts); lame: MP3 encoding; libheif-examples: heif-convert, the decoder of
# HEIF/HEIC pictures for the media library and both engines (libs/media heif.ts). No ffmpeg: Remotion ships its own.
# libjemalloc2: the worker's allocator (LD_PRELOAD below; the worker drops it for the programs it starts):
# under glibc's, libvips' threads fragment a long-lived worker's memory (docs/benchmarks.md "Soak").
COPY scripts/font-packages.txt scripts/stock-packages.txt /tmp/
RUN apt-get update \
 && apt-get install -y --no-install-recommends chromium-headless-shell pocketsphinx pocketsphinx-en-us lame libheif-examples libjemalloc2 $(cat /tmp/font-packages.txt /tmp/stock-packages.txt) \
 && ln -s "$(ls /usr/lib/*-linux-gnu/libjemalloc.so.2 | head -n 1)" /usr/local/lib/libjemalloc.so.2 \
 && rm -rf /var/lib/apt/lists/* /tmp/font-packages.txt /tmp/stock-packages.txt

# No wrapper of the image's own: the engine writes its wrapper (libs/video/src/browser.ts
# writeBrowserWrapper) into a private folder under its work folder at start: the flags that keep the
# browser off the network (WRAPPER_FLAGS), a profile per start that the engine clears, the
# parent-death signal (setpriv, util-linux), the sandbox where the container allows it (the worker
# runs as the unprivileged `node` user either way).

WORKDIR /app
ENV NODE_ENV=production \
    APP_ENV=production \
    DATA_DIR=/data \
    VIDEO_BUNDLE_DIR=/app/video-bundle \
    LD_PRELOAD=/usr/local/lib/libjemalloc.so.2

COPY --from=build --chown=node:node /app/node_modules ./node_modules
COPY --from=build --chown=node:node /app/dist ./dist
# The template library's bundled media and previews (copied into storage at API start).
COPY --from=build --chown=node:node /app/libs/templates/seed/media ./libs/templates/seed/media
COPY --from=build --chown=node:node /app/libs/templates/seed/previews ./libs/templates/seed/previews
# The stock asset library's bundled files (libs/assets/stock/LICENCES.md).
COPY --from=build --chown=node:node /app/libs/assets/stock/files ./libs/assets/stock/files
COPY --from=build --chown=node:node /app/package.json ./
# The composition's sources and what its bundle is made of (dist/ has no *.tsx): the worker checks
# the prebuilt bundle against them, and rebuilds it from them if they ever differ.
COPY --from=build --chown=node:node /app/video-bundle ./video-bundle
COPY --from=build --chown=node:node /app/libs/video/remotion ./libs/video/remotion
COPY --from=build --chown=node:node /app/libs/video/src/props.ts ./libs/video/src/props.ts
COPY --from=build --chown=node:node /app/libs/video/src/css.ts ./libs/video/src/css.ts
COPY --from=build --chown=node:node /app/libs/edit-spec/src ./libs/edit-spec/src
COPY --from=build --chown=node:node /app/libs/core/src/errors.ts ./libs/core/src/errors.ts

RUN mkdir -p /data && chown node:node /data
VOLUME /data
USER node

# Node options: apps/worker/src/node-flags.ts WORKER_NODE_FLAGS.
CMD ["node", "--max-semi-space-size=8", "dist/apps/worker/src/main.js"]
