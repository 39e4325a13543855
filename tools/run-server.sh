#!/usr/bin/env bash
# Installs dependencies, builds feedkv-server and runs it in the foreground on
# 127.0.0.1:6379 with its data in ./data under the current working folder.
#
#   bash tools/run-server.sh [feedkv.conf] [--name value ...]
#
# Extra arguments are passed to feedkv-server (a config file first, then
# redis.conf-style --options, which override the defaults set here).
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
bash "$ROOT/tools/install-deps.sh"
cmake -S "$ROOT" -B "$ROOT/build" -G Ninja
cmake --build "$ROOT/build" --target feedkv-server

conf=()
if (($#)) && [[ "$1" != --* ]]; then
  conf=("$(realpath "$1")")
  shift
fi
mkdir -p ./data
echo "feedkv-server on 127.0.0.1:6379, data in $PWD/data (Ctrl-C stops it)"
exec "$ROOT/build/feedkv-server" "${conf[@]}" --bind 127.0.0.1 --port 6379 --dir "$PWD/data" "$@"
