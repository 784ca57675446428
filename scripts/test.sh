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
run_jest() {
  local name=$1; shift
  PROJECT_TIMES_FILE="$work/times-$name.txt" node --experimental-vm-modules node_modules/jest/bin/jest.js --ci --workerIdleMemoryLimit=1536MB \
    --reporters=default --reporters=./scripts/project-times.js --json --outputFile="$work/jest-$name.json" "$@" || status=1
}
if [ $# -eq 0 ]; then
  # The whole run: four projects side by side, then the `alone` project (the soak, which judges latency
  # over time) with the machine to itself (jest.config.js ALONE).
  run_jest main --maxWorkers=2 --selectProjects unit sqlite postgres s3
  run_jest alone --maxWorkers=1 --selectProjects alone
else
  run_jest main --maxWorkers=2 "$@"
fi
# The time per project, then one plain closing line for CI readers: "tests: N passed, N failed".
cat "$work"/times-*.txt 2>/dev/null || true
node -e '
  const fs = require("fs");
  const runs = process.argv.slice(1).filter((f) => fs.existsSync(f)).map((f) => JSON.parse(fs.readFileSync(f, "utf8")));
  const sum = (key) => runs.reduce((n, r) => n + r[key], 0);
  if (runs.length) console.log(`tests: ${sum("numPassedTests")} passed, ${sum("numFailedTests")} failed`);' "$work/jest-main.json" "$work/jest-alone.json"
exit $status
