#!/usr/bin/env bash
# The project's one test command.
#
#   bash tools/test.sh [--sanitize|--no-sanitize] [-j N]
#
# 1. installs build/test dependencies (tools/install-deps.sh),
# 2. configures and builds everything with Ninja into build/,
# 3. runs every test: ctest --test-dir build --output-on-failure
#    (GoogleTest unit tests, label "unit", and the pytest end-to-end suite, label "e2e"),
# 4. with --sanitize, or when CI=true, also builds build-asan/ with ASan+UBSan
#    (-DFEEDKV_SANITIZE=ON -DFEEDKV_BENCH=OFF) and runs its unit tests (ctest -L unit)
#    and the end-to-end files on connections, durability and hostile clients
#    against the sanitized server (ctest -L e2e-sanitized).
#
# ctest prints its own summary ("100% tests passed, 0 tests failed out of N");
# the exit status is non-zero if any stage failed.
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$ROOT"

sanitize=0
[ "${CI:-}" = "true" ] && sanitize=1
jobs="$(nproc 2>/dev/null || echo 2)"
while (($#)); do
  case "$1" in
    --sanitize) sanitize=1 ;;
    --no-sanitize) sanitize=0 ;;
    -j) shift; jobs="$1" ;;
    -j*) jobs="${1#-j}" ;;
    -h|--help) sed -n '2,18p' "$0"; exit 0 ;;
    *) echo "tools/test.sh: unknown argument '$1' (try --help)" >&2; exit 2 ;;
  esac
  shift
done

stage() { printf '\n==== %s ====\n' "$*"; }

stage "dependencies"
bash tools/install-deps.sh

stage "build (build/)"
cmake -S . -B build -G Ninja
cmake --build build -j "$jobs"

failed=()
stage "tests (build/): ctest --output-on-failure"
# Serial on purpose: the e2e suite runs redis-benchmark and timing-bounded checks.
# --timeout bounds tests that declare no TIMEOUT of their own (a hung unit test
# must not eat the CI budget); e2e declares its own.
if ! ctest --test-dir build --output-on-failure --timeout 300; then
  failed+=("build/ ctest")
fi

if ((sanitize)); then
  stage "build (build-asan/, ASan+UBSan)"
  cmake -S . -B build-asan -G Ninja -DFEEDKV_SANITIZE=ON -DFEEDKV_BENCH=OFF
  cmake --build build-asan -j "$jobs"
  stage "unit tests (build-asan/): ctest -L unit"
  export ASAN_OPTIONS="${ASAN_OPTIONS:-abort_on_error=1:detect_leaks=1}"
  export UBSAN_OPTIONS="${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}"
  if ! ctest --test-dir build-asan -L unit --output-on-failure --timeout 600 -j "$jobs"; then
    failed+=("build-asan/ ctest -L unit")
  fi
  stage "end-to-end tests against the sanitized server (build-asan/): ctest -L e2e-sanitized"
  if ! ctest --test-dir build-asan -L e2e-sanitized --output-on-failure; then
    failed+=("build-asan/ ctest -L e2e-sanitized")
  fi
fi

echo
if ((${#failed[@]})); then
  echo "tools/test.sh: FAILED: ${failed[*]}"
  exit 1
fi
echo "tools/test.sh: all stages passed"
