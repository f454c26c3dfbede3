#!/usr/bin/env bash
# Runs every libFuzzer target for a bounded time, from its seed corpus, two at a time.
#   tests/fuzz/run_fuzzers.sh BUILD_DIR SECONDS_PER_TARGET [TARGET...]
# New inputs go to BUILD_DIR/fuzz-corpus/TARGET (the committed seeds are only read); a crash
# leaves its input in BUILD_DIR/fuzz-artifacts/ and makes the exit status non-zero. Prints
# one line per target: runs, seconds, corpus size, and crashes (0 or 1).
set -uo pipefail
build=${1:?usage: run_fuzzers.sh BUILD_DIR SECONDS [TARGET...]}
seconds=${2:?usage: run_fuzzers.sh BUILD_DIR SECONDS [TARGET...]}
shift 2
here=$(cd "$(dirname "$0")" && pwd)
targets=("$@")
((${#targets[@]})) || targets=(fuzz_read_trace fuzz_native_text fuzz_native_binary fuzz_rmm_csv fuzz_pickle fuzz_policy_ops fuzz_policy_params fuzz_equivalence
                                  fuzz_minimalloc_csv fuzz_markdown)
mkdir -p "$build/fuzz-artifacts"
export ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 UBSAN_OPTIONS=halt_on_error=1:print_stacktrace=1

run_one() {
  local t=$1 work="$build/fuzz-corpus/$1" log="$build/fuzz-artifacts/$1.log"
  mkdir -p "$work"
  "$build/tests/fuzz/$t" "$work" "$here/corpus/$t" -max_total_time="$seconds" -max_len=4096 -timeout=10 \
    -rss_limit_mb=2048 -artifact_prefix="$build/fuzz-artifacts/$t-" -print_final_stats=1 >"$log" 2>&1
  local rc=$?
  local runs
  runs=$(grep -oE 'stat::number_of_executed_units: *[0-9]+' "$log" | grep -oE '[0-9]+$' || echo "?")
  echo "$t: runs $runs, seconds $seconds, corpus $(ls "$work" | wc -l), crashes $((rc != 0))"
  if ((rc != 0)); then
    echo "--- $t failed; the end of its log ($log):"
    tail -40 "$log"
  fi
  return $rc
}

status=0
pids=()
for t in "${targets[@]}"; do
  run_one "$t" &
  pids+=($!)
  if ((${#pids[@]} == 2)); then
    wait "${pids[0]}" || status=1
    pids=("${pids[@]:1}")
  fi
done
for p in "${pids[@]}"; do wait "$p" || status=1; done
exit $status
