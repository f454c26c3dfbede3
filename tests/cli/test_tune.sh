#!/usr/bin/env bash
# fraglab tune end to end: the recommended setting is the grid's lowest peak reserved (checked
# by replaying every setting through `fraglab replay`), fits --capacity where one does, exit 1
# where none does, and recordings it cannot model are refused with nothing written.
set -u
fraglab=${1:?usage: test_tune.sh PATH_TO_FRAGLAB}
shared=${FRAGLAB_SHARED_TRACES:-/nonexistent}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
source "$(dirname "$0")/../support/expect.sh"
# The value of COLUMN in the rows of a CSV whose column `recommended` is yes.
recommended() { python3 - "$1" "$2" <<'PY'
import csv, sys
rows = [r for r in csv.DictReader(open(sys.argv[1])) if r["recommended"] == "yes"]
print(" ".join(r[sys.argv[2]] for r in rows))
PY
}
# Replays every setting tune tried on TRACE through `fraglab replay` (with the options after
# it) and prints the lowest peak reserved among those with no failed allocation.
lowest_by_replay() { local table=$1 trace=$2; shift 2
  local specs
  specs=$(python3 -c 'import csv,sys; print("\n".join(r["policy"] for r in csv.DictReader(open(sys.argv[1])) if not r["setting"].startswith("recorded")))' "$table")
  local args=()
  while IFS= read -r s; do args+=(-p "$s"); done <<<"$specs"
  "$fraglab" replay "$trace" "${args[@]}" --backend simulated --repeat 0 "$@" --format csv 2>/dev/null |
    python3 -c 'import csv,sys; print(min(int(r["peak_reserved_bytes"]) for r in csv.DictReader(sys.stdin) if r["failed_allocs"] == "0"))'
}

# A transformer's training with variable sequence lengths: PyTorch's allocator fragments.
"$fraglab" gen transformer --layers 2 --seq-dist uniform --seq-len 64 --seq-len-max 512 -o "$work/tr.fbin" 2>/dev/null
"$fraglab" tune "$work/tr.fbin" -o "$work/tr.csv" 2>"$work/why.txt"; rc=$?
expect "tune recommends a setting (exit $rc)" '[[ $rc -eq 0 && $(recommended "$work/tr.csv" recommended) == yes ]]'
expect "the table holds the recorded settings and the whole grid (56 settings)" \
  '[[ $(grep -c "^tr.fbin,recorded" "$work/tr.csv") -eq 1 && $(( $(wc -l < "$work/tr.csv") - 2 )) -eq 56 ]]'
# A reader's table and reasoning fit 120 columns.
"$fraglab" tune "$work/tr.fbin" --capacity 4GiB > "$work/shown.txt" 2>&1
expect "what tune shows a reader fits 120 columns" '[[ $(awk "{ if (length(\$0) > w) w = length(\$0) } END { print w }" "$work/shown.txt") -le 120 ]]'
best=$(recommended "$work/tr.csv" peak_reserved_bytes)
lowest=$(lowest_by_replay "$work/tr.csv" "$work/tr.fbin")
expect "its peak reserved ($best) is the lowest that replay gives any setting of the grid ($lowest)" '[[ -n $best && $best == "$lowest" ]]'
conf=$(recommended "$work/tr.csv" setting)
expect "the recommendation, on standard error with -o, names it as PYTORCH_CUDA_ALLOC_CONF ($conf)" \
  'grep -q "recommended: PYTORCH_CUDA_ALLOC_CONF=$conf$" "$work/why.txt"'
# The command the reasoning gives checks it.
check=$(sed -n '/^  check: fraglab replay/,$p' "$work/why.txt" | sed 's/^  check: fraglab replay [^ ]* //; s/\\$//' | tr -d '\n')
checked=$(eval "\"\$fraglab\" replay \"\$work/tr.fbin\" $check --repeat 0 --format csv" | python3 -c 'import csv,sys; print(next(csv.DictReader(sys.stdin))["peak_reserved_bytes"])')
expect "the reasoning's check command replays to the same peak ($checked)" '[[ $checked == "$best" ]]'

# Within a capacity: the recommendation fits it with the most to spare; below every setting's
# need, exit 1 and nothing written.
cap=$(( $(recommended "$work/tr.csv" min_capacity_bytes) + (256 << 20) ))
"$fraglab" tune "$work/tr.fbin" --capacity "$cap" -o "$work/cap.csv" 2>"$work/cap.txt"; rc=$?
expect "within --capacity $cap the recommendation serves every allocation" \
  '[[ $rc -eq 0 && $(recommended "$work/cap.csv" failed_allocs) == 0 && $(recommended "$work/cap.csv" peak_reserved_bytes) -le $cap ]]'
best=$(recommended "$work/cap.csv" peak_reserved_bytes)
lowest=$(lowest_by_replay "$work/cap.csv" "$work/tr.fbin" --capacity "$cap")
expect "and has the lowest peak of the settings that fit, by replay ($best, $lowest)" '[[ $best == "$lowest" ]]'
expect "garbage collection is tried under a capacity" 'grep -q "garbage_collection_threshold:0.6" "$work/cap.csv"'
err=$("$fraglab" tune "$work/tr.fbin" --capacity 64MiB -o "$work/none.csv" 2>&1); rc=$?
expect "a capacity nothing fits exits 1 saying so, with nothing written" \
  '[[ $rc -eq 1 && $err == *"no setting of the 112 tried serves"* && ! -e $work/none.csv ]]'

# Refusals.
python3 - "$work" <<'PY'
import pickle, sys
MiB = 1 << 20
t = [{"action": "alloc", "addr": 1 << 30, "size": MiB, "stream": 0}, {"action": "free_completed", "addr": 1 << 30, "size": MiB, "stream": 0}]
snap = {"segments": [], "device_traces": [t], "allocator_settings": {"graph_capture_record_stream_reuse": True}}
pickle.dump(snap, open(f"{sys.argv[1]}/unmodelled.pickle", "wb"), protocol=2)
PY
err=$("$fraglab" tune "$work/unmodelled.pickle" -o "$work/u.csv" 2>&1); rc=$?
expect "a recording under settings the presets do not model is refused ($err)" \
  '[[ $rc -eq 2 && $err == *"do not model (graph_capture_record_stream_reuse=True)"* && ! -e $work/u.csv ]]'
err=$("$fraglab" tune "$work/missing.pickle" 2>&1); rc=$?
expect "a missing file is refused" '[[ $rc -eq 2 && $err == *missing.pickle* ]]'
err=$("$fraglab" tune "$work/tr.fbin" --capacity 0 2>&1); rc=$?
expect "--capacity 0 is refused" '[[ $rc -eq 2 && $err == *"at least one byte"* ]]'

# Every shared snapshot: the recommendation is the grid's lowest peak, by replay.
if [[ -d $shared ]]; then
  for snap in "$shared"/pytorch/*.pickle "$shared"/pytorch-cases/*.pickle; do
    name=$(basename "$snap")
    "$fraglab" tune "$snap" -o "$work/s.csv" 2>/dev/null; rc=$?
    devices=$(recommended "$work/s.csv" trace | wc -w)
    best=$(python3 -c 'import csv,sys; print(sum(int(r["peak_reserved_bytes"]) for r in csv.DictReader(open(sys.argv[1])) if r["recommended"] == "yes"))' "$work/s.csv")
    if [[ $(recommended "$work/s.csv" trace) == *@cuda:* ]]; then
      d=$(recommended "$work/s.csv" trace); d=${d##*@cuda:}
      lowest=$(lowest_by_replay "$work/s.csv" "$snap" --device "$d")
    else
      lowest=$(lowest_by_replay "$work/s.csv" "$snap")
    fi
    expect "$name: recommended on its $devices device(s) with the grid's lowest peak reserved ($best, $lowest)" \
      '[[ $rc -eq 0 && $devices -ge 1 && $best == "$lowest" ]]'
  done
else
  echo "SKIP: $shared not found; tuning the shared snapshots needs the shared traces (FRAGLAB_SHARED_TRACES, set by meson test)"
fi
report test_tune
