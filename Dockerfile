# Quill's container image. Build: docker build -t quill . ; run: see compose.yaml and the README's Deployment.
#
# Stage 1 installs and builds exactly as the README's `npm install && npm start` does (npm start = npm run build,
# then node dist/src/main.js), then drops the development packages. Debian slim, not Alpine: the uWebSockets.js
# binary is built against glibc, and Quill refuses to start on its slow fallback.
FROM node:20-bookworm-slim AS build
WORKDIR /app
COPY package.json package-lock.json ./
RUN npm install --no-audit --no-fund
COPY tsconfig.json ./
COPY config ./config
COPY src ./src
COPY workers ./workers
RUN npm run build && npm prune --omit=dev

# Stage 2: the compiled server, its production packages and the default configuration, run as the unprivileged
# `node` user of the base image. Data lives in the /data volume; POST /_backup writes to /backups.
FROM node:20-bookworm-slim
ENV NODE_ENV=production \
    QUILL_HOST=0.0.0.0 \
    QUILL_PORT=8000 \
    QUILL_DATA_DIR=/data \
    QUILL_BACKUP_DIR=/backups
WORKDIR /app
COPY --from=build /app/package.json ./package.json
COPY --from=build /app/node_modules ./node_modules
COPY --from=build /app/config ./config
COPY --from=build /app/dist/src ./dist/src
COPY --from=build /app/dist/workers ./dist/workers
RUN mkdir -p /data /backups && chown node:node /data /backups
USER node
VOLUME ["/data"]
EXPOSE 8000
# /_health answers 200 once Quill accepts traffic and 503 while it drains.
HEALTHCHECK --interval=10s --timeout=3s --start-period=60s --retries=3 \
  CMD ["node", "-e", "fetch('http://127.0.0.1:' + (process.env.QUILL_PORT || 8000) + '/_health').then((r) => process.exit(r.status === 200 ? 0 : 1), () => process.exit(1))"]
# Quill drains on SIGTERM (in-flight requests finish, stores are flushed and closed) and exits 0. node is PID 1
# here and handles the signal itself; give it time: docker stop -t 30, or stop_grace_period in compose.yaml.
STOPSIGNAL SIGTERM
CMD ["node", "dist/src/main.js"]
