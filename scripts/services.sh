# Sourced by scripts/test.sh, scripts/up.sh and friends: installs and starts local services.
# Every service listens on a free loopback port and lives under $SERVICES_DIR.

free_port() {
  node -e "const s=require('net').createServer();s.listen(0,'127.0.0.1',()=>{console.log(s.address().port);s.close()})"
}

need_apt() {
  # need_apt <command> <package>...: installs the Debian packages when the command is missing.
  local cmd=$1; shift
  if ! command -v "$cmd" >/dev/null 2>&1 && [ ! -x "$cmd" ]; then
    apt_install "$@"
  fi
}

apt_install() {
  echo "installing $* (apt-get)" >&2
  local sudo=""
  [ "$(id -u)" -ne 0 ] && sudo="sudo"
  if [ -z "${APT_UPDATED:-}" ]; then $sudo apt-get update -qq >&2; APT_UPDATED=1; fi
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends "$@" >&2
}

pg_bin_dir() {
  local d
  for d in /usr/lib/postgresql/*/bin; do [ -x "$d/postgres" ] && { echo "$d"; return; }; done
  return 1
}

ensure_system_packages() {
  # ensure_system_packages [test]: Redis always; PostgreSQL and docker-compose (config checks) for tests.
  need_apt redis-server redis-server
  ensure_listed_packages font-packages.txt stock-packages.txt
  # Debian's Chromium in its old headless shell: the video engine (Remotion) renders with it (about
  # twice the frames per second of the full chromium package: docs/benchmarks.md); never a
  # downloaded browser. Needed by `npm run up` as well as the tests, as the worker renders videos.
  need_apt chromium-headless-shell chromium-headless-shell
  # The offline speech engine (libs/captions local.ts): CMU pocketsphinx and its US English model,
  # used by the worker. lame (MP3 encoder) for the tests' speech and the voice-over.
  need_apt pocketsphinx_continuous pocketsphinx
  [ -f /usr/share/pocketsphinx/model/en-us/en-us/mdef ] || apt_install pocketsphinx-en-us
  need_apt lame lame
  # HEIF/HEIC pictures (what phones upload): sharp's libvips decodes AVIF only, so the media library
  # and both engines decode HEVC-coded HEIF with heif-convert (libs/media heif.ts); the tests make
  # their HEIC fixtures with heif-enc of the same package.
  need_apt heif-convert libheif-examples
  # jemalloc: the worker's allocator (scripts/up.sh, the worker image). Under glibc's, a long-lived
  # worker's memory fragments (sharp/libvips threads; docs/benchmarks.md "Soak").
  [ -n "$(jemalloc_path)" ] || apt_install libjemalloc2
  if [ "${1:-}" = test ]; then
    # Speech with known words for the offline engine's tests, and outside readers of our caption
    # files (webvtt-py, srt).
    need_apt espeak-ng espeak-ng
    /usr/bin/python3 -c 'import webvtt, srt' 2>/dev/null || apt_install python3-webvtt python3-srt
    pg_bin_dir >/dev/null || need_apt /usr/lib/postgresql/15/bin/postgres postgresql
    need_apt docker-compose docker-compose
    # kubectl kustomize builds deploy/kubernetes (test/kubernetes.spec.ts). The machine image's kubectl
    # (1.32, kustomize v5) is used where present; Debian's kubernetes-client is only the fallback, and
    # bookworm's (1.20, kustomize v2) is too old for kustomize Components: the test then says so.
    need_apt kubectl kubernetes-client
    # Outside readers of our outputs in the tests: poppler (pdfinfo, pdftotext, pdffonts, pdfimages, pdftoppm).
    need_apt pdftoppm poppler-utils
  fi
}

jemalloc_path() {
  # jemalloc_path: Debian's libjemalloc.so.2 for this machine's architecture, or nothing.
  local f
  for f in /usr/lib/*-linux-gnu/libjemalloc.so.2 /usr/lib/libjemalloc.so.2; do
    [ -f "$f" ] && { echo "$f"; return 0; }
  done
  return 0
}

ensure_listed_packages() {
  # ensure_listed_packages <list>...: installs the Debian packages named in scripts/<list> (one per
  # line) that are missing:
  #   font-packages.txt   the shipped font families: the still engine answers 422 for a family that
  #                       is not installed, so a missing package is an install step;
  #   stock-packages.txt  the packages whose fonts and sounds the stock asset library lists
  #                       (STOCK_DEBIAN_PACKAGES of libs/assets/src/stock.ts; its test checks the two agree).
  local list pkg missing=()
  for list in "$@"; do
    while read -r pkg; do
      [ -n "$pkg" ] && ! dpkg-query -W -f='${Status}' "$pkg" 2>/dev/null | grep -q 'ok installed' && missing+=("$pkg")
    done < "$(dirname "${BASH_SOURCE[0]}")/$list"
  done
  if [ ${#missing[@]} -gt 0 ]; then apt_install "${missing[@]}"; fi
}

start_redis() {
  # start_redis <dir>: sets REDIS_URL.
  local dir=$1 port
  port=$(free_port)
  mkdir -p "$dir/redis"
  redis-server --bind 127.0.0.1 --port "$port" --dir "$dir/redis" --daemonize yes \
    --pidfile "$dir/redis/redis.pid" --logfile "$dir/redis/redis.log" \
    --appendonly yes --appendfsync everysec --save "" --maxmemory-policy noeviction >&2
  for _ in $(seq 1 50); do redis-cli -p "$port" ping >/dev/null 2>&1 && break; sleep 0.1; done
  REDIS_URL="redis://127.0.0.1:$port"
  export REDIS_URL
}

stop_redis() {
  local dir=$1
  [ -f "$dir/redis/redis.pid" ] && kill "$(cat "$dir/redis/redis.pid")" 2>/dev/null || true
}

start_s3() {
  # start_s3 <dir>: the tests' S3-compatible server (s3rver from node_modules, scripts/s3rver.mjs) on
  # a free loopback port, its buckets under <dir>/s3; sets S3_URL. Credentials: S3RVER / S3RVER.
  local dir=$1
  mkdir -p "$dir/s3"
  # s3rver's list continuation tokens use DES, which OpenSSL 3 keeps in its legacy provider.
  node --openssl-legacy-provider scripts/s3rver.mjs "$dir/s3" >"$dir/s3/s3rver.log" 2>&1 &
  for _ in $(seq 1 100); do [ -s "$dir/s3/port" ] && break; sleep 0.1; done
  if [ ! -s "$dir/s3/port" ]; then echo "s3rver did not start:" >&2; cat "$dir/s3/s3rver.log" >&2; return 1; fi
  S3_URL="http://127.0.0.1:$(cat "$dir/s3/port")"
  export S3_URL
}

stop_s3() {
  local dir=$1
  [ -f "$dir/s3/pid" ] && kill "$(cat "$dir/s3/pid")" 2>/dev/null || true
}

as_pg_user() {
  # PostgreSQL refuses to run as root; run its tools as the postgres user then.
  if [ "$(id -u)" -eq 0 ]; then runuser -u postgres -- "$@"; else "$@"; fi
}

start_postgres() {
  # start_postgres <dir>: sets PG_URL (superuser "postgres", trust auth on loopback only).
  local dir=$1 port bin
  bin=$(pg_bin_dir)
  port=$(free_port)
  mkdir -p "$dir/pg"
  [ "$(id -u)" -eq 0 ] && chown -R postgres "$dir/pg"
  as_pg_user "$bin/initdb" -D "$dir/pg/data" -U postgres --auth=trust -E UTF8 --no-sync >"$dir/pg/initdb.log" 2>&1
  as_pg_user "$bin/pg_ctl" -D "$dir/pg/data" -l "$dir/pg/server.log" -w -t 30 \
    -o "-c listen_addresses=127.0.0.1 -c port=$port -c unix_socket_directories=$dir/pg -c fsync=off -c synchronous_commit=off -c full_page_writes=off -c max_connections=300" start >&2
  PG_URL="postgres://postgres@127.0.0.1:$port"
  PG_DATA_DIR="$dir/pg/data"
  export PG_URL PG_DATA_DIR
}

stop_postgres() {
  local dir=$1 bin
  bin=$(pg_bin_dir) || return 0
  [ -d "$dir/pg/data" ] && as_pg_user "$bin/pg_ctl" -D "$dir/pg/data" -m immediate stop >/dev/null 2>&1 || true
}

# What node_modules was installed from: package.json and the lockfile, hashed.
deps_stamp() {
  { cat package.json; cat package-lock.json 2>/dev/null || true; } | sha256sum | cut -d' ' -f1
}

ensure_node_modules() {
  # npm ci fails here (the lockfile lacks other platforms' optional packages): npm install. Installed
  # again only when package.json or the lockfile says something else than at the last install (their
  # contents, not their times: a fresh checkout or worktree beside an up-to-date node_modules installs nothing).
  if [ ! -x node_modules/.bin/node ] || [ "$(cat node_modules/.installed-from 2>/dev/null || true)" != "$(deps_stamp)" ]; then
    npm install --no-audit --no-fund >&2
    deps_stamp > node_modules/.installed-from
  fi
  # npm scripts run on the project's Node 24 (the node package); plain shell lines must too.
  PATH="$PWD/node_modules/.bin:$PATH"
  export PATH
}
