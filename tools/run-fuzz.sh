#!/usr/bin/env bash
# Bounded libFuzzer run of the RESP parser (tests/fuzz/resp_parser_fuzz.cc).
#
#   tools/run-fuzz.sh [SECONDS] [extra libFuzzer flags...]
#
#   SECONDS   wall-clock budget, default 60.
#   Builds build-fuzz/resp_parser_fuzz with clang if it is missing (or if
#   FUZZ_REBUILD=1), writes a seed corpus and a RESP dictionary into a temp
#   dir, and runs the fuzzer there. Crash/leak/timeout inputs are saved to
#   $FUZZ_ARTIFACTS (default ./fuzz-artifacts/); reproduce one with
#   `build-fuzz/resp_parser_fuzz <file>`. Set KEEP_CORPUS=1 to keep the grown
#   corpus (its path is printed). Exit status is the fuzzer's: 0 = no crash.
#
# Example: tools/run-fuzz.sh 300 -jobs=2 -workers=2
set -euo pipefail

SECONDS_BUDGET="${1:-60}"
shift || true
ROOT="$(cd "$(dirname "$0")/.." && pwd)"
BUILD="${FUZZ_BUILD_DIR:-$ROOT/build-fuzz}"
BIN="$BUILD/resp_parser_fuzz"
ARTIFACTS="${FUZZ_ARTIFACTS:-$PWD/fuzz-artifacts}"

if [[ ! -x "$BIN" || "${FUZZ_REBUILD:-0}" == 1 ]]; then
  CC=clang CXX=clang++ cmake -S "$ROOT" -B "$BUILD" -G Ninja -DFEEDKV_FUZZ=ON -DFEEDKV_BENCH=OFF >/dev/null
  ninja -C "$BUILD" resp_parser_fuzz
fi

WORK="$(mktemp -d "${TMPDIR:-/tmp}/resp-fuzz.XXXXXX")"
if [[ "${KEEP_CORPUS:-0}" != 1 ]]; then trap 'rm -rf "$WORK"' EXIT; fi
mkdir -p "$WORK/corpus" "$ARTIFACTS"

# Seeds. The first byte is the target's config byte: bit 0 inline limit 24,
# bit 1 bulk limit 8, bit 2 multibulk limit 4, bits 3-7 chunking seed.
seed() { printf "$2" >"$WORK/corpus/$1"; }
seed get        '\x00*2\r\n$3\r\nGET\r\n$3\r\nkey\r\n'
seed set-pipe   '\x08*3\r\n$3\r\nSET\r\n$1\r\nk\r\n$5\r\nvalue\r\n*2\r\n$3\r\nGET\r\n$1\r\nk\r\nPING\r\n'
seed binary     '\x10*2\r\n$4\r\nECHO\r\n$6\r\na\x00\r\nb\r\r\n'
seed empty      '\x00*0\r\n*-1\r\n*1\r\n$0\r\n\r\n\r\n\n'
seed inline     '\x18SET "k\\x41\\n\\t" '"'"'v\\'"'"'w'"'"' x\r\nGET k\n'
seed quotes-bad '\x00ECHO "abc\r\n'
seed no-dollar  '\x00*1\r\nx4\r\nPING\r\n'
seed bad-bulk   '\x00*1\r\n$-1\r\n'
seed big-inline '\x01PING PING PING PING PING PING'
seed big-bulk   '\x02*2\r\n$3\r\nSET\r\n$9\r\n123456789\r\n'
seed big-mbulk  '\x04*5\r\n$1\r\na\r\n'
seed long-hdr   '\x01*1\r\n$0000000000000000000000000000000'
cat >"$WORK/resp.dict" <<'EOF'
"*"
"$"
"\x0d\x0a"
"*1\x0d\x0a"
"*-1\x0d\x0a"
"$0\x0d\x0a\x0d\x0a"
"$-1"
"\""
"'"
"\\x"
"\\'"
"\\\""
"2147483648"
"536870913"
"99999999999999999999"
EOF

echo "fuzzing for ${SECONDS_BUDGET}s in $WORK (artifacts: $ARTIFACTS)"
status=0
"$BIN" "$WORK/corpus" -dict="$WORK/resp.dict" -max_total_time="$SECONDS_BUDGET" \
  -max_len=4096 -timeout=10 -rss_limit_mb=4096 -print_final_stats=1 \
  -artifact_prefix="$ARTIFACTS/" "$@" || status=$?
[[ "${KEEP_CORPUS:-0}" == 1 ]] && echo "corpus kept in $WORK/corpus"
exit "$status"
