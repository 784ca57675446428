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

COPY tsconfig*.json nest-cli.json openapi.jso[n] ./
COPY apps ./apps
COPY libs ./libs
RUN npm run build \
 && npm prune --omit=dev --no-audit --no-fund \
 && rm -f node_modules/.bin/node

############################ runtime ############################
FROM node:24-bookworm-slim AS runtime

# Debian's Chromium plus the shipped font families (scripts/font-packages.txt: Latin, CJK, colour
# emoji, display faces). No ffmpeg: Remotion ships its own.
COPY scripts/font-packages.txt /tmp/font-packages.txt
RUN apt-get update \
 && apt-get install -y --no-install-recommends chromium $(cat /tmp/font-packages.txt) \
 && rm -rf /var/lib/apt/lists/* /tmp/font-packages.txt

# Wrapper: points Chromium's component updater at a dead local port so it never phones home.
RUN printf '%s\n' \
      '#!/bin/sh' \
      'exec /usr/bin/chromium "$@" --component-updater=url-source=http://127.0.0.1:9/' \
      > /usr/local/bin/chromium-wrapper \
 && chmod 0755 /usr/local/bin/chromium-wrapper

WORKDIR /app
ENV NODE_ENV=production \
    APP_ENV=production \
    DATA_DIR=/data \
    BROWSER_EXECUTABLE=/usr/local/bin/chromium-wrapper

COPY --from=build --chown=node:node /app/node_modules ./node_modules
COPY --from=build --chown=node:node /app/dist ./dist
# The template library's bundled media and previews (copied into storage at API start).
COPY --from=build --chown=node:node /app/libs/templates/seed/media ./libs/templates/seed/media
COPY --from=build --chown=node:node /app/libs/templates/seed/previews ./libs/templates/seed/previews
COPY --from=build --chown=node:node /app/package.json ./

RUN mkdir -p /data && chown node:node /data
VOLUME /data
USER node

CMD ["node", "dist/apps/worker/src/main.js"]
