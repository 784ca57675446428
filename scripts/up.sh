#!/usr/bin/env bash
# `npm run up`: installs what is missing (npm and apt packages), builds, migrates, creates a demo
# workspace on first run and prints its keys, then runs the API and a worker on embedded defaults
# (SQLite under ./data, a local Redis on a free loopback port unless REDIS_URL is set).
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/services.sh
ensure_system_packages
ensure_node_modules
export DATA_DIR="${DATA_DIR:-$PWD/data}"
# The data folder holds the database, the secret, Redis's files and the demo keys: this user's alone
# (issue 28). The umask reaches what this script and its children (Redis, the CLI, API, worker) make.
umask 077
mkdir -p "$DATA_DIR"
npm run -s build

redis_dir="$DATA_DIR/run"
if [ -z "${REDIS_URL:-}" ]; then
  # Reuse the Redis a previous `npm run up` left running, else start one (AOF on, noeviction).
  if [ -f "$DATA_DIR/local.env" ] && url=$(sed -n 's/^REDIS_URL=//p' "$DATA_DIR/local.env") && [ -n "$url" ] \
     && redis-cli -u "$url" ping >/dev/null 2>&1; then
    export REDIS_URL="$url"
  else
    start_redis "$redis_dir"
    printf 'REDIS_URL=%s\n' "$REDIS_URL" > "$DATA_DIR/local.env"
    started_redis=1
  fi
fi

if [ ! -f "$DATA_DIR/demo-workspace.json" ]; then
  node dist/apps/cli/src/main.js workspace:create --name "Demo workspace" --plan pro > "$DATA_DIR/demo-workspace.json.tmp"
  mv "$DATA_DIR/demo-workspace.json.tmp" "$DATA_DIR/demo-workspace.json"
  chmod 600 "$DATA_DIR/demo-workspace.json"
  echo "Demo workspace created. Its keys are shown once (also kept in $DATA_DIR/demo-workspace.json):"
  cat "$DATA_DIR/demo-workspace.json"
fi

# The worker runs on jemalloc (libjemalloc2): glibc's allocator fragments under libvips' threads; its
# Node options are apps/worker/src/node-flags.ts WORKER_NODE_FLAGS.
LD_PRELOAD="$(jemalloc_path)" node --max-semi-space-size=8 dist/apps/worker/src/main.js &
worker=$!
stop() {
  kill "$worker" 2>/dev/null || true
  [ -n "${started_redis:-}" ] && { stop_redis "$redis_dir"; rm -f "$DATA_DIR/local.env"; }
}
trap stop EXIT INT TERM
echo "Dashboard: http://127.0.0.1:${PORT:-3000}/ (sign in with a phone of a user made by: npm run -s cli -- user:create)"
echo "Try: curl -H \"x-api-key: \$(node -p 'require(\"$DATA_DIR/demo-workspace.json\").liveKey')\" http://127.0.0.1:${PORT:-3000}/${API_PREFIX:-api}/v1/keys/current"
node dist/apps/api/src/main.js
