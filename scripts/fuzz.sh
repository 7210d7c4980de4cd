#!/usr/bin/env bash
# Fuzzes the readers of outside bytes with libFuzzer (Fuzz/: one target per reader, its seed
# corpus and dictionary), built with the fuzzer and the address sanitizer in .build-fuzz.
#
#   bash scripts/fuzz.sh TARGET [--seconds N]    one target for N seconds (default 60)
#   bash scripts/fuzz.sh --all [--seconds N]     every target, one after the other
#   bash scripts/fuzz.sh --list                  the targets
#
# Each run starts from the committed seeds (Fuzz/Corpus/TARGET) plus what earlier runs here kept
# (.build-fuzz/corpus/TARGET), and prints per target: runs, executions per second, coverage
# (libFuzzer's `cov:` at the end: the edges its instrumentation saw) and what it found. A finding
# (a crash, a broken invariant, a leak, a timeout) is saved under .build-fuzz/findings/TARGET/;
# the script then exits 1. scripts/test.sh replays the committed seeds in every test run.
set -euo pipefail
cd "$(dirname "$0")/.."
seconds=60
targets=()
all=0
while [ $# -gt 0 ]; do
  case "$1" in
    --seconds) seconds="${2:?--seconds takes a number}"; shift 2 ;;
    --all) all=1; shift ;;
    --list) ls Fuzz/Corpus; exit 0 ;;
    -h|--help) sed -n '2,13p' "$0"; exit 0 ;;
    -*) echo "fuzz.sh: unknown option $1 (see --help)" >&2; exit 2 ;;
    *) targets+=("$1"); shift ;;
  esac
done
if [ "$all" = 1 ]; then
  mapfile -t targets < <(ls Fuzz/Corpus)
fi
if [ ${#targets[@]} -eq 0 ]; then
  echo "fuzz.sh: name a target or --all (targets: $(ls Fuzz/Corpus | tr '\n' ' '))" >&2
  exit 2
fi
for target in "${targets[@]}"; do
  if [ ! -d "Fuzz/Corpus/$target" ]; then
    echo "fuzz.sh: no target $target (targets: $(ls Fuzz/Corpus | tr '\n' ' '))" >&2
    exit 2
  fi
done
case "$seconds" in ''|*[!0-9]*) echo "fuzz.sh: --seconds takes a whole number, not $seconds" >&2; exit 2 ;; esac

# lld: gold warns about every local symbol it cannot export from an instrumented image. The
# -Xswiftc -sanitize= instruments every module, not only the target's own (coverage of the readers).
build=(swift build --product apphost-fuzz --sanitize=fuzzer --sanitize=address --scratch-path .build-fuzz
  -Xswiftc -DAPPHOST_FUZZ -Xswiftc -use-ld=lld -Xswiftc -sanitize=fuzzer,address)
"${build[@]}" >&2
fuzzer="$("${build[@]}" --show-bin-path)/apphost-fuzz"

found=0
printf '%-18s %12s %10s %8s  %s\n' target runs exec/s cov found
for target in "${targets[@]}"; do
  work=".build-fuzz/corpus/$target"
  findings=".build-fuzz/findings/$target"
  mkdir -p "$work" "$findings"
  dictionary=()
  case "$target" in
    config) dictionary=(-dict=Fuzz/Dictionaries/yaml.dict) ;;
    json|launch-record|reload-record|summary|analytics-log) dictionary=(-dict=Fuzz/Dictionaries/json.dict) ;;
    command-line) dictionary=(-dict=Fuzz/Dictionaries/command-line.dict) ;;
  esac
  log=".build-fuzz/$target.log"
  status=0
  # SWIFT_BACKTRACE off: the runtime's backtracer reads the stack in a way ASan reports as an
  # underflow, which would hide the trap's own message.
  APPHOST_FUZZ_TARGET="$target" ASAN_OPTIONS=detect_leaks=1 SWIFT_BACKTRACE=enable=no "$fuzzer" "$work" "Fuzz/Corpus/$target" \
    -max_total_time="$seconds" -timeout=10 -rss_limit_mb=2048 -max_len=65536 -print_final_stats=1 \
    -artifact_prefix="$findings/" "${dictionary[@]}" > "$log" 2>&1 || status=$?
  runs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log" | tail -n 1)
  rate=$(sed -n 's/^stat::average_exec_per_sec: *//p' "$log" | tail -n 1)
  coverage=$(grep -o 'cov: [0-9]*' "$log" | tail -n 1 | cut -d' ' -f2)
  artifacts=$(find "$findings" -type f | wc -l)
  if [ "$status" -ne 0 ] || [ "$artifacts" -gt 0 ]; then
    found=1
    what="$artifacts input(s) in $findings (log: $log)"
  else
    what=nothing
  fi
  printf '%-18s %12s %10s %8s  %s\n' "$target" "${runs:-?}" "${rate:-?}" "${coverage:-?}" "$what"
done
exit "$found"
