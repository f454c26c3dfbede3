#!/usr/bin/env bash
# The benchmark suite's smoke test: every kind of subject replays a trace and a pattern
# through bench_allocators, the malloc that serves is named correctly (also under each
# preloaded allocator that is installed), bad options are refused, and count_instructions
# counts a pass under callgrind. Timings are never asserted, only that they were taken.
set -euo pipefail
bench=$1 count=$2
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }

# 3 allocations, one freed, one reallocated under the same id: 5 events.
printf 'a 1 100\na 2 5000 64\nf 1\na 1 300\na 3 40\n' > "$work/tiny.txt"

# check JSON EXPECTED_NAME...: every named benchmark ran, with a positive ns_per_op and no
# failed allocation.
check() {
  local json=$1; shift
  /usr/bin/python3 - "$json" "$@" <<'PY'
import json, sys
runs = {b["name"]: b for b in json.load(open(sys.argv[1]))["benchmarks"]}
for name in sys.argv[2:]:
    if name not in runs:
        sys.exit(f"missing benchmark {name}; ran: {sorted(runs)}")
    b = runs[name]
    if not b["ns_per_op"] > 0:
        sys.exit(f"{name}: ns_per_op {b['ns_per_op']}")
    if b["failed_allocs"] != 0:
        sys.exit(f"{name}: {b['failed_allocs']} failed allocations")
PY
}

quick=(--benchmark_min_time=0.001 --benchmark_format=json --pattern-events 4096)
"$bench" "${quick[@]}" --policies tf_bfc,list_ao_first --malloc --floor --patterns steady,lifo,shuffled --live 1000 \
  "$work/tiny.txt" > "$work/out.json" || fail "bench_allocators exited $?"
expected=()
for s in tf_bfc list_ao_first glibc bump; do
  expected+=("replay/tiny/$s/manual_time")
  for p in steady lifo shuffled; do expected+=("$p/$s/1000/manual_time"); done
done
check "$work/out.json" "${expected[@]}" || fail "default run"
/usr/bin/python3 -c "
import json, sys
b = {r['name']: r for r in json.load(open('$work/out.json'))['benchmarks']}
assert b['replay/tiny/tf_bfc/manual_time']['events'] == 5, b['replay/tiny/tf_bfc/manual_time']
assert b['steady/bump/1000/manual_time']['events'] == 3000 + 4096, b['steady/bump/1000/manual_time']
" || fail "event counts"

# A scan stops at --scan-live-max; the others go on.
"$bench" "${quick[@]}" --policies tlsf,list_ao_first --patterns steady --live 1000,2000 --scan-live-max 1000 \
  > "$work/scan.json" || fail "scan run"
check "$work/scan.json" steady/tlsf/2000/manual_time steady/list_ao_first/1000/manual_time || fail "scan run"
grep -q '"steady/list_ao_first/2000' "$work/scan.json" && fail "the scan ran past --scan-live-max"

# --min-events raises the passes of a short trace (5 events: 40 passes for 200), never
# lowers them (a pattern pass times 4096 events: the 3 passes asked for).
"$bench" --benchmark_format=json --pattern-events 4096 --policies tlsf --patterns lifo --live 1000 --iterations 3 \
  --min-events 200 "$work/tiny.txt" > "$work/min.json" || fail "--min-events run"
check "$work/min.json" replay/tiny/tlsf/iterations:40/manual_time lifo/tlsf/1000/iterations:3/manual_time \
  || fail "--min-events: wrong pass counts"

# Freed by address, a policy is named POLICY@address; the other subjects are as they were.
"$bench" "${quick[@]}" --policies tlsf --free-by address --floor --patterns lifo --live 1000 "$work/tiny.txt" \
  > "$work/by_address.json" || fail "--free-by address run"
check "$work/by_address.json" replay/tiny/tlsf@address/manual_time lifo/tlsf@address/1000/manual_time \
  replay/tiny/bump/manual_time || fail "--free-by address: wrong benchmarks"

# --policy takes one spec whole, commas included, and names the benchmark by it; a compose:
# spec over a list index is a scan and stops at --scan-live-max like the named lists.
nocoalesce="compose:index=seglist,fit=good,coalesce=never"
listed="compose:fit=first,index=list_ao"
"$bench" "${quick[@]}" --policies tlsf --policy "$nocoalesce" --policy "$listed" --patterns steady --live 1000,2000 \
  --scan-live-max 1000 "$work/tiny.txt" > "$work/spec.json" || fail "--policy run"
check "$work/spec.json" replay/tiny/tlsf/manual_time "replay/tiny/$nocoalesce/manual_time" \
  "replay/tiny/$listed/manual_time" "steady/$nocoalesce/2000/manual_time" "steady/$listed/1000/manual_time" \
  || fail "--policy: wrong benchmarks"
grep -q "\"steady/$listed/2000" "$work/spec.json" && fail "a composed scan ran past --scan-live-max"

# Each preloaded allocator that is installed must be the one that is named.
libdir=/usr/lib/x86_64-linux-gnu
for pair in jemalloc:libjemalloc.so.2 mimalloc:libmimalloc.so.2 tcmalloc:libtcmalloc_minimal.so.4; do
  name=${pair%%:*} lib=$libdir/${pair#*:}
  if [[ ! -e $lib ]]; then echo "skipping $name: $lib is not installed"; continue; fi
  if [[ $count == none ]]; then echo "skipping $name: a sanitizer must be the first library loaded"; continue; fi
  LD_PRELOAD=$lib "$bench" "${quick[@]}" --policies none --malloc --patterns shuffled --live 1000 "$work/tiny.txt" > "$work/$name.json" \
    || fail "bench_allocators under $name"
  check "$work/$name.json" "replay/tiny/$name/manual_time" "shuffled/$name/1000/manual_time" || fail "$name run"
done

# Bad input: a clear message and a non-zero exit.
for bad in "--policies no_such_policy" "--policy compose:index=seglist" "--patterns zigzag" "--live 10,x" "--free-by pointer" "$work/missing.txt"; do
  if "$bench" --benchmark_min_time=0.001 $bad > "$work/bad.out" 2> "$work/bad.err"; then fail "accepted: $bad"; fi
  grep -q "bench_allocators: " "$work/bad.err" || fail "no message for: $bad"
done
# Counts: a sign is refused, not read as 2^64 - 1 (a pattern of that many events or live
# blocks ran until killed), and a pattern of no events (ns per op 0/0) too.
for bad in "--live -5" "--pattern-events 0" "--pattern-events -1" "--scan-live-max -1" "--min-events -1" "--iterations -1"; do
  rc=0
  timeout 60 "$bench" --benchmark_min_time=0.001 --policies tlsf --patterns steady $bad > "$work/bad.out" 2> "$work/bad.err" || rc=$?
  [[ $rc -eq 2 ]] || fail "exit $rc, not 2, for: $bad"
  grep -q "bench_allocators: ${bad%% *}: expected" "$work/bad.err" || fail "no message naming the option for: $bad"
done
# A repeat would register a second benchmark of one name, which the JSON's readers cannot
# tell from the first: refused, naming what is repeated.
mkdir -p "$work/other"
cp "$work/tiny.txt" "$work/other/tiny.txt"
for bad in "--policies tlsf,tlsf|--policies/--policy: tlsf is given twice" \
           "--policies tlsf --policy tlsf|--policies/--policy: tlsf is given twice" \
           "--patterns steady,steady|--patterns: steady is given twice" \
           "--live 1000,1e3|--live: expected" "--live 1000,01000|--live: 1000 is given twice" \
           "$work/tiny.txt $work/other/tiny.txt|have the same file name"; do
  rc=0
  timeout 60 "$bench" --benchmark_min_time=0.001 ${bad%%|*} > "$work/bad.out" 2> "$work/bad.err" || rc=$?
  [[ $rc -eq 2 ]] || fail "exit $rc, not 2, for: ${bad%%|*}"
  grep -qF -- "${bad#*|}" "$work/bad.err" || fail "no message '${bad#*|}' for: ${bad%%|*} ($(cat "$work/bad.err"))"
done

if [[ $count == none ]]; then
  echo "skipping count_instructions: not built here (sanitized build, or no valgrind/callgrind.h)"
elif ! command -v valgrind > /dev/null; then
  echo "skipping count_instructions: valgrind is not installed"
else
  for subject in "--policy tf_bfc" "--policy tf_bfc --free-by address" "--floor"; do
    valgrind --tool=callgrind --collect-atstart=no --callgrind-out-file="$work/cg.out" \
      "$count" $subject "$work/tiny.txt" > "$work/cg.txt" 2> "$work/cg.err" || { cat "$work/cg.err"; fail "callgrind"; }
    # 5 events, and the 3 blocks they leave live freed afterwards.
    grep -qx "ops 8" "$work/cg.txt" || fail "count_instructions $subject: $(cat "$work/cg.txt")"
    ir=$(awk '/^(totals|summary):/ {print $2}' "$work/cg.out" | head -1)
    [[ $ir =~ ^[0-9]+$ && $ir -gt 0 ]] || fail "no instruction total in callgrind's output ($ir)"
  done
  # A fresh allocator acquires its region in the counted pass; warm passes, once the heap has
  # settled, count the same.
  counted() {  # WARM_PASSES
    valgrind --tool=callgrind --collect-atstart=no --callgrind-out-file="$work/cg$1.out" \
      "$count" --policy tf_bfc --warm-passes "$1" "$work/tiny.txt" > /dev/null 2> "$work/cg.err" || { cat "$work/cg.err"; fail "callgrind"; }
    awk '/^(totals|summary):/ {print $2}' "$work/cg$1.out" | head -1
  }
  fresh=$(counted 0) warm=$(counted 1) warmer=$(counted 2)
  ((fresh > warm)) || fail "a fresh allocator's pass ($fresh instructions) should cost more than a warm one's ($warm)"
  ((warmer == warm)) || fail "the second and third passes differ: $warm and $warmer instructions"
  "$count" --policy tf_bfc --floor "$work/tiny.txt" 2> "$work/bad.err" && fail "count_instructions took two subjects"
  grep -q "exactly one" "$work/bad.err" || fail "count_instructions: no message for two subjects"
  "$count" --policy tf_bfc --warm-passes -1 "$work/tiny.txt" 2> "$work/bad.err" && fail "count_instructions took --warm-passes -1"
  grep -q "at least 0" "$work/bad.err" || fail "count_instructions: no message for --warm-passes -1"
  "$count" --floor --free-by address "$work/tiny.txt" 2> "$work/bad.err" && fail "count_instructions took --free-by without a policy"
  grep -q "policy only" "$work/bad.err" || fail "count_instructions: no message for --free-by without a policy"
  "$count" --policy tlsf --free-by pointer "$work/tiny.txt" 2> "$work/bad.err" && fail "count_instructions took --free-by pointer"
  grep -q "expected reference or address" "$work/bad.err" || fail "count_instructions: no message for --free-by pointer"
fi
echo "bench_allocators: all checks passed"
