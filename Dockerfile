# Trellis server image: the API, sync endpoint and web app on one port.
FROM node:20-bookworm-slim

WORKDIR /app
ENV HOST=0.0.0.0 \
    PORT=3000 \
    DATA_DIR=/data \
    AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED=true

# Dependencies first so source edits reuse this layer. The full install is
# kept: the build runs TypeScript through tsx and esbuild, and optional
# dependencies carry the native binaries (esbuild, sharp).
COPY package.json package-lock.json .npmrc ./
RUN npm ci --no-audit --no-fund && npm cache clean --force

COPY . .
# The web app, the compiled server (dist/server) and the embedded database's
# template (dist/pglite-template, copied into a fresh /data at first start).
RUN npm run build
RUN mkdir -p /data && chown node:node /data

USER node
VOLUME ["/data"]
EXPOSE 3000
HEALTHCHECK --interval=10s --timeout=5s --start-period=30s --retries=5 \
  CMD node -e "fetch('http://127.0.0.1:' + (process.env.PORT || 3000) + '/api/health').then((r) => process.exit(r.ok ? 0 : 1), () => process.exit(1))"
# The compiled server itself: no npm process beside it, nothing to build at start.
CMD ["node", "dist/server/main.js"]
