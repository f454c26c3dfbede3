#!/usr/bin/env bash
# fraglab plan and replay --offline end to end: MiniMalloc's CSV in and out, every trace
# format, every placement checked by an independent validator (tests/policies/offline/
# check_placement.py), the bound and proof reported, and bad input refused with nothing
# written.
set -u
fraglab=${1:?usage: test_plan.sh PATH_TO_FRAGLAB}
check=$(dirname "$0")/../policies/offline/check_placement.py
shared=${FRAGLAB_SHARED_TRACES:-/nonexistent}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
source "$(dirname "$0")/../support/expect.sh"
column() { awk -F, -v name="$2" 'NR==1{for(i=1;i<=NF;i++) if($i==name) c=i} NR==2{print $c}' "$1"; }

# MiniMalloc's README example: capacity 12 is optimal.
printf 'id,lower,upper,size\nb1,0,3,4\nb2,3,9,4\nb3,0,9,4\nb4,9,21,4\nb5,0,21,4\n' > "$work/example.csv"
"$fraglab" plan "$work/example.csv" --capacity 12 --placement "$work/example.out.csv" -o "$work/example.plan.csv"; rc=$?
expect "plan solves MiniMalloc's example at capacity 12" \
  '[[ $rc -eq 0 && $(column "$work/example.plan.csv" height_bytes) == 12 && $(column "$work/example.plan.csv" optimal) == yes ]]'
expect "the placement is MiniMalloc's CSV with an offset column, the ids kept" \
  '[[ $(head -1 "$work/example.out.csv") == id,lower,upper,size,offset && $(cut -d, -f1 "$work/example.out.csv" | tail -n +2 | paste -sd " ") == "b1 b2 b3 b4 b5" ]]'
expect "the independent validator accepts it" 'python3 "$check" "$work/example.out.csv" --height 12 --capacity 12 >/dev/null'
# The placement read back (its offset column ignored) plans the same.
"$fraglab" plan "$work/example.out.csv" -o "$work/again.csv"; rc=$?
expect "a placement's CSV reads back as a problem" '[[ $rc -eq 0 && $(column "$work/again.csv" height_bytes) == 12 ]]'

# A node budget makes the search decide the same on every run, wherever the time limit does
# not bind: the reorder search above 4,000 buffers (a perfect packing of 4,500, optimum 1 MiB)
# and the exact search below.
/usr/bin/python3 -c 'import sys
sys.path.insert(0, sys.argv[1])
from offline_scale import perfect_packing
print("id,lower,upper,size")
for i, (a, b, s) in enumerate(perfect_packing(4500, seed=1)): print(f"{i},{a},{b},{s}")' \
  "$(dirname "$0")/../../experiments/scripts/reproduce" > "$work/packed.csv"
for run in 1 2; do
  "$fraglab" plan "$work/packed.csv" --time-limit 600 --node-budget 45000 --placement "$work/packed.$run.csv" \
    -o "$work/packed.plan.$run.csv"
done
expect "--node-budget: the reorder search improves on the heuristics within its budget, the same placement twice" \
  '[[ $(column "$work/packed.plan.1.csv" found_by) == search/reorder && $(column "$work/packed.plan.1.csv" search_nodes) -le 45000 &&
     $(column "$work/packed.plan.1.csv" height_bytes) -lt $(column "$work/packed.plan.1.csv" heuristic_bytes) ]] &&
   cmp -s "$work/packed.1.csv" "$work/packed.2.csv" && python3 "$check" "$work/packed.1.csv" >/dev/null'
if [[ -f $shared/offline/minimalloc-challenging/D.1048576.csv ]]; then
  for run in 1 2; do
    "$fraglab" plan "$shared/offline/minimalloc-challenging/D.1048576.csv" --time-limit 600 --node-budget 20000 \
      --placement "$work/D.$run.csv" -o "$work/D.plan.$run.csv"
  done
  expect "--node-budget: the exact search stops within its budget (MiniMalloc's D), the same placement twice" \
    '[[ $(column "$work/D.plan.1.csv" search_nodes) -le 20000 ]] && cmp -s "$work/D.1.csv" "$work/D.2.csv"'
fi
err=$("$fraglab" plan "$work/example.csv" --node-budget -1 2>&1); rc=$?
expect "--node-budget -1 is refused" '[[ $rc -eq 2 && $err == *node-budget* ]]'

# MiniMalloc's older files: buffer,start,end with the last step live (end = upper - 1).
printf 'buffer,start,end,size\nb1,0,2,4\nb2,3,8,4\nb3,0,8,4\nb4,9,20,4\nb5,0,20,4\n' > "$work/old.csv"
"$fraglab" plan "$work/old.csv" --capacity 12 --placement "$work/old.out.csv" -o "$work/old.plan.csv"; rc=$?
expect "MiniMalloc's older header (buffer,start,end: end inclusive) plans as the example, written back as it was read" \
  '[[ $rc -eq 0 && $(column "$work/old.plan.csv" height_bytes) == 12 && $(head -1 "$work/old.out.csv") == id,lower,end,size,offset &&
     $(sed -n 2p "$work/old.out.csv") == b1,0,2,4,* ]] && python3 "$check" "$work/old.out.csv" --height 12 >/dev/null'
# Times as their writers mean them. MindSpore SOMAS's exports start at -1: a lives over
# [-1, 3) beside b [-1, 1) and then c [1, 5), which never meet: 8 is optimal.
printf 'id,lower,upper,size\na,-1,3,4\nb,-1,1,4\nc,1,5,4\n' > "$work/somas.csv"
"$fraglab" plan "$work/somas.csv" --placement "$work/somas.out.csv" -o "$work/somas.plan.csv"; rc=$?
expect "negative times are read: the optimum 8, and the placement keeps the times as written" \
  '[[ $rc -eq 0 && $(column "$work/somas.plan.csv" height_bytes) == 8 && $(column "$work/somas.plan.csv" optimal) == yes &&
     $(sed -n 2p "$work/somas.out.csv") == a,-1,3,4,* ]] && python3 "$check" "$work/somas.out.csv" --height 8 >/dev/null'
# IREE's lifetimes include their last step: b [0, 1] and c [1, 2] meet at step 1 (8 bytes);
# half-open they do not (4).
printf 'id,lower,upper,size\nb,0,1,4\nc,1,2,4\n' > "$work/iree.csv"
"$fraglab" plan "$work/iree.csv" -o "$work/iree.half.csv"; rc1=$?
"$fraglab" plan "$work/iree.csv" --lifetimes inclusive --placement "$work/iree.out.csv" -o "$work/iree.plan.csv"; rc2=$?
expect "--lifetimes inclusive: buffers that share their last and first step meet (8 bytes, 4 half-open)" \
  '[[ $rc1 -eq 0 && $rc2 -eq 0 && $(column "$work/iree.half.csv" height_bytes) == 4 && $(column "$work/iree.plan.csv" height_bytes) == 8 ]]'
expect "and the placement is written back inclusive, as it was read" \
  '[[ $(sed -n 2p "$work/iree.out.csv") == b,0,1,4,* && $(sed -n 3p "$work/iree.out.csv") == c,1,2,4,* ]] &&
   python3 "$check" "$work/iree.out.csv" --height 8 --inclusive >/dev/null'
err=$("$fraglab" plan "$work/iree.csv" --lifetimes closed 2>&1); rc=$?
expect "--lifetimes names its two conventions" '[[ $rc -eq 2 && $err == *"--lifetimes: expected half-open or inclusive, got '"'"'closed'"'"'"* ]]'
printf 'id,lower,upper,size\na,-9223372036854775808,9223372036854775807,4\n' > "$work/span.csv"
err=$("$fraglab" plan "$work/span.csv" --lifetimes inclusive 2>&1); rc=$?
expect "times that span 2^64 steps are refused at their line" '[[ $rc -eq 2 && $err == *span.csv:2:*"fewer than 2^64 steps"* ]]'
printf 'id,lower,upper,size\na,-9223372036854775809,0,4\n' > "$work/below.csv"
err=$("$fraglab" plan "$work/below.csv" 2>&1); rc=$?
expect "a time below -2^63 is refused at its line" '[[ $rc -eq 2 && $err == *below.csv:2:*"expected lower as a 64-bit integer"* ]]'
# Columns in any order, with alignment and gaps: the alignment is kept and written back.
printf 'size,upper,lower,id,alignment,gaps\n3,4,0,x,1,\n5,4,0,y,8,1-2\n' > "$work/aligned.csv"
"$fraglab" plan "$work/aligned.csv" --placement "$work/aligned.out.csv" -o "$work/aligned.plan.csv"; rc=$?
expect "columns in any order, alignment respected (5 at 0, 3 at 5) and written back" \
  '[[ $rc -eq 0 && $(column "$work/aligned.plan.csv" height_bytes) == 8 && $(head -1 "$work/aligned.out.csv") == id,lower,upper,size,alignment,offset ]] && python3 "$check" "$work/aligned.out.csv" --height 8 >/dev/null'

# Below the optimum: proven infeasible, exit 1, nothing written.
err=$("$fraglab" plan "$work/example.csv" --capacity 11 --placement "$work/none.csv" -o "$work/none.plan" 2>&1); rc=$?
expect "a capacity below the optimum is refused with the proof ($err)" \
  '[[ $rc -eq 1 && $err == *"no placement within 11 bytes: none exists (proven"*12* && ! -e $work/none.csv && ! -e $work/none.plan ]]'
echo "old" > "$work/kept.csv"
"$fraglab" plan "$work/example.csv" --capacity 11 --placement "$work/kept.csv" 2>/dev/null
expect "a failed plan leaves an existing placement file as it was" '[[ $(cat "$work/kept.csv") == old ]]'

# Bad input: FILE:LINE and what was expected, exit 2, nothing written.
printf 'id,lower,upper,size\nx,0,3,4\ny,5,2,4\n' > "$work/backwards.csv"
err=$("$fraglab" plan "$work/backwards.csv" --placement "$work/bad.csv" 2>&1); rc=$?
expect "an upper below the lower is refused at its line ($err)" '[[ $rc -eq 2 && $err == *backwards.csv:3:*"upper >= lower"* && ! -e $work/bad.csv ]]'
printf 'id,lower,upper\nx,0,3\n' > "$work/header.csv"
err=$("$fraglab" plan "$work/header.csv" 2>&1); rc=$?
expect "a MiniMalloc header without size is refused as one" '[[ $rc -eq 2 && $err == *header.csv:1:*MiniMalloc*header*"no id, lower, upper or size column"* ]]'
printf 'id,lower,upper,size,colour\nx,0,3,4,red\n' > "$work/colour.csv"
err=$("$fraglab" plan "$work/colour.csv" 2>&1); rc=$?
expect "a column MiniMalloc does not know is refused by name" '[[ $rc -eq 2 && $err == *colour.csv:1:*"unknown column"*colour* ]]'
printf 'id,lower,upper,size,alignment\nx,0,3,4,3\n' > "$work/align3.csv"
err=$("$fraglab" plan "$work/align3.csv" 2>&1); rc=$?
expect "an alignment that is not a power of two is refused at its line" '[[ $rc -eq 2 && $err == *align3.csv:2:*"power of two"* ]]'
printf 'id,lower,upper,size\nx,0,3,four\n' > "$work/word.csv"
err=$("$fraglab" plan "$work/word.csv" 2>&1); rc=$?
expect "a size that is not a number is refused at its line" '[[ $rc -eq 2 && $err == *word.csv:2:*"expected size"*four* ]]'
printf 'id,lower,upper,size\nx,0,3,4\nx,1,2,4\n' > "$work/twice.csv"
err=$("$fraglab" plan "$work/twice.csv" 2>&1); rc=$?
expect "an id given twice is refused" '[[ $rc -eq 2 && $err == *twice.csv:3:*"given twice"* ]]'
err=$("$fraglab" plan "$work/example.csv" --time-limit 0 2>&1); rc=$?
expect "a time limit of 0 is refused" '[[ $rc -eq 2 && $err == *--time-limit* ]]'
cp "$work/example.csv" "$work/example2.csv"
err=$("$fraglab" plan "$work/example.csv" "$work/example2.csv" --placement "$work/two.csv" 2>&1); rc=$?
expect "--placement with two inputs is refused" '[[ $rc -eq 2 && $err == *"--placement"*"2 were given"* && ! -e $work/two.csv ]]'

# A trace: a buffer per allocation, live from it to its free; the validator and LOAD agree
# with info's peak live bytes.
"$fraglab" gen phases --phases 6 --objects 400 -o "$work/p.trace" 2>/dev/null
"$fraglab" plan "$work/p.trace" --time-limit 2 --placement "$work/p.out.csv" -o "$work/p.plan.csv"; rc=$?
height=$(column "$work/p.plan.csv" height_bytes)
peak=$("$fraglab" info "$work/p.trace" | sed -n 's/^peak_live_bytes: //p')
expect "plan of a trace: LOAD is the trace's peak live bytes ($(column "$work/p.plan.csv" load_bytes) vs $peak)" \
  '[[ $rc -eq 0 && $(column "$work/p.plan.csv" load_bytes) == "$peak" ]]'
expect "plan of a trace: a valid placement of the reported height" 'python3 "$check" "$work/p.out.csv" --height "$height" >/dev/null'
expect "plan of a trace: height >= lower bound >= LOAD" \
  '[[ $height -ge $(column "$work/p.plan.csv" lower_bound_bytes) && $(column "$work/p.plan.csv" lower_bound_bytes) -ge $peak ]]'

# replay --offline: the gap column is peak reserved over the offline best, minus 1.
"$fraglab" replay "$work/p.trace" -p best_fit,tlsf --backend simulated --offline --offline-time-limit 1 -o "$work/r.csv"; rc=$?
ok=$(awk -F, 'NR==1{for(i=1;i<=NF;i++) h[$i]=i; next} {r=$h["peak_reserved_bytes"]; b=$h["offline_best_bytes"]; g=$h["gap_to_offline"];
  d=r/b-1-g; if (d<0) d=-d; if (d>0.0001 || b<$h["peak_live_bytes"]) bad=1} END{print bad?"no":"yes"}' "$work/r.csv")
expect "replay --offline: gap_to_offline = peak reserved / offline best - 1, the best no lower than peak live" '[[ $rc -eq 0 && $ok == yes ]]'
out=$("$fraglab" replay "$work/p.trace" -p best_fit --backend simulated --offline --offline-time-limit 1)
expect "replay --offline shows the gap in the table" '[[ $out == *"gap to offline"* && $out == *"offline best"* ]]'
err=$("$fraglab" replay "$work/p.trace" -p best_fit --offline-time-limit 1 2>&1); rc=$?
expect "--offline-time-limit without --offline is refused" '[[ $rc -eq 2 && $err == *"--offline"* ]]'
"$fraglab" sweep "$work/p.trace" -p best_fit --vary granularity=256,4096 --backend simulated --offline --offline-time-limit 1 -o "$work/s.csv" 2>/dev/null; rc=$?
expect "sweep --offline adds the gap to every cell" '[[ $rc -eq 0 && $(head -1 "$work/s.csv") == *gap_to_offline* && $(tail -n +2 "$work/s.csv" | wc -l) -eq 2 ]]'

# Sharded: each part plans only its own cells' traces, and the parts merge.
"$fraglab" gen phases --phases 3 --objects 100 --seed 2 -o "$work/q.trace" 2>/dev/null
for i in 1 2; do
  "$fraglab" replay "$work/p.trace" "$work/q.trace" -p best_fit --backend simulated --offline --offline-time-limit 1 \
    --shard "$i/2" -o "$work/part$i.csv" 2>/dev/null
done
"$fraglab" merge "$work/part1.csv" "$work/part2.csv" -o "$work/merged.csv"; rc=$?
expect "replay --offline --shard: the parts merge, each row with its gap" \
  '[[ $rc -eq 0 && $(tail -n +2 "$work/merged.csv" | wc -l) -eq 2 && -z $(awk -F, '"'"'NR==1{for(i=1;i<=NF;i++) if($i=="gap_to_offline") c=i; next} $c==""'"'"' "$work/merged.csv") ]]'

# Every shared trace and offline benchmark: each placement valid and of the reported height.
if [[ -d $shared ]]; then
  for input in "$shared"/offline/*/*.csv "$shared"/host/*.csv "$shared"/pytorch/*.pickle "$shared"/pytorch-cases/*.pickle; do
    [[ -e $input ]] || continue
    name=$(basename "$input")
    # A snapshot of several devices is planned a device at a time: the first here.
    device=()
    first=$("$fraglab" info "$input" --format csv 2>/dev/null | awk -F, 'NR==2{print $1}')
    [[ $first == *@cuda:* ]] && device=(--device "${first##*@cuda:}")
    "$fraglab" plan "$input" "${device[@]}" --time-limit 1 --placement "$work/$name.out.csv" -o "$work/$name.plan.csv" 2>"$work/err"; rc=$?
    height=$(column "$work/$name.plan.csv" height_bytes)
    expect "plan $name: a placement the validator accepts, of the reported height $height" \
      '[[ $rc -eq 0 ]] && python3 "$check" "$work/$name.out.csv" --height "$height" >/dev/null'
  done
else
  echo "SKIP: $shared not found; planning the shared traces needs the shared traces (FRAGLAB_SHARED_TRACES, set by meson test)"
fi

report plan
