#!/bin/bash
# Runs units of Redis 7.0's own test suite (tests/unit/*.tcl, Debian's redis
# source package) against feedkv as an external server, each unit on a fresh
# feedkv, and prints ok / err / exception counts per unit.
#
#   tools/run-redis-suite.sh [--src DIR] [--internal] unit/type/list unit/expire ...
#
# By default each unit runs in "external server" mode against one feedkv
# (tests tagged external:skip are left out). With --internal the harness
# starts the servers itself, as Redis's CI does: a copy of the tree whose
# src/redis-server is feedkv, so the tests that start servers with their own
# settings (acl files, restarts, replicas, DEBUG RELOAD) run too.
#
# Needs tclsh and the Redis source tree: with no --src it fetches it once with
# `apt-get source redis` into /tmp/redis-suite (this adds a deb-src entry for
# the machine's Debian mirror while it runs, and removes it after). Developer
# tool: not part of tools/test.sh (docs/redis-test-suite.md has the results).
set -euo pipefail
here=$(cd "$(dirname "$0")/.." && pwd)
server="${FEEDKV_BIN:-$here/build/feedkv-server}"
port="${PORT:-7003}"
src=""
internal=0
if [ "${1:-}" = "--src" ]; then src="$2"; shift 2; fi
if [ "${1:-}" = "--internal" ]; then internal=1; shift; fi
if [ -z "$src" ]; then
  src=$(ls -d /tmp/redis-suite/redis-*/ 2>/dev/null | head -1 || true)
  if [ -z "$src" ]; then
    mkdir -p /tmp/redis-suite && cd /tmp/redis-suite
    sed 's/^Types: deb$/Types: deb-src/' /etc/apt/sources.list.d/debian.sources \
      > /etc/apt/sources.list.d/feedkv-redis-src.sources
    apt-get update -qq && apt-get source --download-only -qq redis || true
    rm -f /etc/apt/sources.list.d/feedkv-redis-src.sources
    tar xzf redis_*.orig.tar.gz
    src=$(ls -d /tmp/redis-suite/redis-*/ | head -1)
  fi
fi
mkdir -p "$src/src"
for t in redis-cli redis-server redis-benchmark redis-check-aof redis-check-rdb; do
  ln -sf "$(command -v $t)" "$src/src/$t"
done
if [ "$internal" = 1 ]; then
  tree=/tmp/feedkv-suite-internal
  rm -rf "$tree" && mkdir -p "$tree" && cp -r "$src/tests" "$src/runtest" "$tree/" && mkdir -p "$tree/src"
  for t in redis-cli redis-benchmark redis-check-aof redis-check-rdb; do ln -sf "$src/src/$t" "$tree/src/$t"; done
  ln -sf "$server" "$tree/src/redis-server"
  for unit in "$@"; do
    log="$tree/$(basename "$unit").log"
    (cd "$tree" && timeout "${TIMEOUT:-900}" ./runtest --single "$unit" --clients 1 --timeout 300 \
       2>&1 | sed 's/\x1b\[[0-9;]*m//g' > "$log") || true
    echo "== $unit: $(grep -c '^\[ok\]' "$log") ok, $(grep -c '^\[err\]' "$log") err," \
         "$(grep -c '^\[exception\]' "$log") exception (log: $log)"
    grep -E '^\[(err|exception)\]' "$log" | head -20 || true
    pkill -f "redis-server ./tests/tmp/redis.conf" 2>/dev/null || true  # left by a timeout
  done
  exit 0
fi
for unit in "$@"; do
  redis-cli -p "$port" shutdown nosave >/dev/null 2>&1 || true
  dir=$(mktemp -d /tmp/feedkv-suite.XXXXXX)
  (cd "$dir" && exec "$server" --port "$port" --dir "$dir" --save '' --enable-debug-command yes \
     > "$dir/log" 2>&1 &)
  for _ in $(seq 50); do redis-cli -p "$port" ping >/dev/null 2>&1 && break; sleep 0.1; done
  log="$dir/$(basename "$unit").log"
  (cd "$src" && timeout "${TIMEOUT:-300}" ./runtest --host 127.0.0.1 --port "$port" --single "$unit" \
     2>&1 | sed 's/\x1b\[[0-9;]*m//g' > "$log") || true
  echo "== $unit: $(grep -c '^\[ok\]' "$log") ok, $(grep -c '^\[err\]' "$log") err," \
       "$(grep -c '^\[exception\]' "$log") exception (log: $log)"
  grep -E '^\[(err|exception)\]' "$log" | head -20 || true
  redis-cli -p "$port" shutdown nosave >/dev/null 2>&1 || true
done
