# syntax=docker/dockerfile:1
# API image. Build from the repository root:
#   docker build -f docker/api.Dockerfile -t media-render-api .

############################ build ############################
FROM node:24-bookworm-slim AS build
WORKDIR /app
ENV NODE_ENV=development

# Dependencies first, so source edits reuse this layer.
# `npm install`, not `npm ci`: the lockfile lacks other platforms' optional packages.
COPY package.json package-lock.json* ./
RUN npm install --no-audit --no-fund

# Sources. `openapi.jso[n]` copies openapi.json when it exists and nothing otherwise.
COPY tsconfig*.json openapi.jso[n] ./
COPY apps ./apps
COPY libs ./libs
# The dashboard build's last step (its assets' .br and .gz copies).
COPY scripts/compress-dashboard.mjs ./scripts/
RUN npm run build \
 && npm prune --omit=dev --no-audit --no-fund \
 && rm -f node_modules/.bin/node

############################ runtime ############################
FROM node:24-bookworm-slim AS runtime

# The Debian fonts and sounds the stock asset library lists (scripts/stock-packages.txt; seeded into
# storage at API start with the files under libs/assets/stock/files). libheif-examples: heif-convert,
# the decoder of HEIF/HEIC pictures (libs/media heif.ts; sharp's libvips decodes AVIF only).
COPY scripts/stock-packages.txt /tmp/stock-packages.txt
RUN apt-get update \
 && apt-get install -y --no-install-recommends libheif-examples $(cat /tmp/stock-packages.txt) \
 && rm -rf /var/lib/apt/lists/* /tmp/stock-packages.txt

WORKDIR /app
ENV NODE_ENV=production \
    APP_ENV=production \
    HOST=0.0.0.0 \
    PORT=3000 \
    DATA_DIR=/data

COPY --from=build --chown=node:node /app/node_modules ./node_modules
COPY --from=build --chown=node:node /app/dist ./dist
# The template library's bundled media and previews (copied into storage at API start).
COPY --from=build --chown=node:node /app/libs/templates/seed/media ./libs/templates/seed/media
COPY --from=build --chown=node:node /app/libs/templates/seed/previews ./libs/templates/seed/previews
# The stock asset library's bundled files (libs/assets/stock/LICENCES.md).
COPY --from=build --chown=node:node /app/libs/assets/stock/files ./libs/assets/stock/files
COPY --from=build --chown=node:node /app/package.json /app/openapi.jso[n] ./
# The web dashboard served at / (built from apps/dashboard by `npm run build`).
COPY --from=build --chown=node:node /app/apps/dashboard/dist ./apps/dashboard/dist

RUN mkdir -p /data && chown node:node /data
VOLUME /data
USER node
EXPOSE 3000

HEALTHCHECK --interval=30s --timeout=5s --start-period=20s --retries=3 \
  CMD ["node", "-e", "fetch('http://127.0.0.1:3000/api/health').then(r=>process.exit(r.ok?0:1),()=>process.exit(1))"]

CMD ["node", "dist/apps/api/src/main.js"]
