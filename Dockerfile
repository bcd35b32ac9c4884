# Streamgate image: native modules (re2, better-sqlite3) are compiled in the build stages, the
# runtime stage carries only production dependencies and the compiled JavaScript, and runs as non-root.
FROM node:20-bookworm-slim AS build
RUN apt-get update && apt-get install -y --no-install-recommends python3 make g++ && rm -rf /var/lib/apt/lists/*
WORKDIR /app
COPY package.json package-lock.json ./
RUN npm ci --no-audit --no-fund
COPY tsconfig.json tsconfig.build.json ./
COPY scripts ./scripts
COPY src ./src
COPY dashboard ./dashboard
RUN npm run build

FROM node:20-bookworm-slim AS deps
RUN apt-get update && apt-get install -y --no-install-recommends python3 make g++ && rm -rf /var/lib/apt/lists/*
WORKDIR /app
COPY package.json package-lock.json ./
RUN npm ci --omit=dev --no-audit --no-fund

FROM node:20-bookworm-slim
# Every interface, as a container must; Streamgate then refuses to start without STREAMGATE_HOOK_SECRET
# (32+ characters) unless STREAMGATE_HOOKS_ALLOWUNAUTHENTICATED=true says the hooks may be open.
ENV NODE_ENV=production STREAMGATE_DATA_DIR=/data HOST=0.0.0.0
WORKDIR /app
COPY --from=deps /app/node_modules ./node_modules
COPY --from=build /app/dist ./dist
COPY package.json ./
COPY config ./config
# the data dir holds token values: its user's alone (docs/operations.md#the-data-directory); a named
# volume mounted here starts with this mode
RUN mkdir -p /data && chown node:node /data && chmod 700 /data
USER node
EXPOSE 8080
HEALTHCHECK --interval=10s --timeout=2s CMD node -e "fetch('http://127.0.0.1:'+(process.env.PORT||8080)+'/healthz').then(r=>process.exit(r.ok?0:1),()=>process.exit(1))"
# a larger young generation: fewer collection pauses at high decision rates (docs/operations.md#memory-and-pauses)
CMD ["node", "--max-semi-space-size=64", "dist/main.js"]
