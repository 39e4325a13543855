#!/usr/bin/env bash
# Installs every Debian package feedkv needs to build, test and benchmark.
# Idempotent; safe to run as root on a fresh Debian 12 machine.
set -euo pipefail
PKGS=(build-essential cmake ninja-build pkg-config clang
      libboost-dev libxxhash-dev librocksdb-dev libfmt-dev
      libgtest-dev libgmock-dev libbenchmark-dev libjemalloc-dev
      liblua5.1-0-dev lua-cjson-dev lua-bitop-dev
      redis-server redis-tools python3-redis python3-pytest)
missing=()
for p in "${PKGS[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if ((${#missing[@]})); then
  SUDO=""; [ "$(id -u)" -ne 0 ] && SUDO="sudo"
  export DEBIAN_FRONTEND=noninteractive
  $SUDO apt-get update -qq
  $SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}"
fi
# Debian's redis-server package starts a system instance on 6379; feedkv wants that port.
if command -v systemctl >/dev/null 2>&1; then systemctl stop redis-server 2>/dev/null || true; fi
if pgrep -x redis-server >/dev/null 2>&1 && [ -f /etc/init.d/redis-server ]; then
  /etc/init.d/redis-server stop >/dev/null 2>&1 || true
fi
