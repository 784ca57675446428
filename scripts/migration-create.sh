#!/usr/bin/env bash
# Generates the next migration for SQLite and PostgreSQL from the entities (needs a scratch PostgreSQL).
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/services.sh
ensure_system_packages test
ensure_node_modules
dir=$(mktemp -d)
chmod 755 "$dir"
trap 'stop_postgres "$dir"; rm -rf "$dir"' EXIT
start_postgres "$dir"
npm run -s build
MIGRATION_PG_URL="$PG_URL/postgres" node dist/libs/app/src/tools/make-migrations.js libs/db/src/migrations
npm run -s build
