#!/usr/bin/env bash
# The test command (README): installs what it lacks, starts its own Redis, PostgreSQL and S3-compatible
# server (s3rver) on free loopback ports, builds, runs every test (unit, e2e on SQLite and on
# PostgreSQL but for the few jest.config.js runs on PostgreSQL only, the storage-heavy e2e files on the
# S3 driver), stops them.
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/services.sh
ensure_system_packages test
ensure_node_modules
work=$(mktemp -d /tmp/mr-test-services.XXXXXX)
chmod 755 "$work"
cleanup() { stop_redis "$work"; stop_postgres "$work"; stop_s3 "$work"; rm -rf "$work"; }
trap cleanup EXIT
start_redis "$work"
start_postgres "$work"
start_s3 "$work"
echo "redis: $REDIS_URL  postgres: $PG_URL  s3: $S3_URL" >&2
npm run -s build
# TEST_S3_DIR: where s3rver keeps buckets (the storage tests look for multipart uploads left behind).
export TEST_PG_URL="$PG_URL" TEST_S3_URL="$S3_URL" TEST_S3_DIR="$work/s3/data"
status=0
# The whole run (no jest arguments) also lints: STYLE.md's rules, zero warnings (eslint.config.js).
if [ $# -eq 0 ]; then
  node node_modules/eslint/bin/eslint.js --max-warnings 0 . || { echo "lint: failed (npm run lint)" >&2; status=1; }
  # The Remotion composition (*.tsx) is bundled at run time, not by the build: type-checked here.
  node node_modules/typescript/bin/tsc -p libs/video/remotion || { echo "lint: the composition does not type-check (npm run lint)" >&2; status=1; }
  # The committed OpenAPI document against Redocly's recommended rules (redocly.yaml): errors fail the run.
  node node_modules/@redocly/cli/bin/cli.js lint --format=stylish openapi.json || { echo "lint: openapi.json breaks redocly.yaml's rules (npx redocly lint openapi.json)" >&2; status=1; }
fi
# Two worker processes, each restarted after a file once it holds over 1.5 GB: one in-band process
# (jest's choice for one worker) gathered what ~160 files leave behind and ran out of heap (2026-11-27).
# scripts/project-times.js writes each project's time (span and summed file durations) for the lines below.
PROJECT_TIMES_FILE="$work/times.txt" node --experimental-vm-modules node_modules/jest/bin/jest.js --ci --maxWorkers=2 --workerIdleMemoryLimit=1536MB \
  --reporters=default --reporters=./scripts/project-times.js --json --outputFile="$work/jest.json" "$@" || status=1
# The time per project, then one plain closing line for CI readers: "tests: N passed, N failed".
[ -f "$work/times.txt" ] && cat "$work/times.txt"
[ -f "$work/jest.json" ] && node -e '
  const r = JSON.parse(require("fs").readFileSync(process.argv[1], "utf8"));
  console.log(`tests: ${r.numPassedTests} passed, ${r.numFailedTests} failed`);' "$work/jest.json"
exit $status
