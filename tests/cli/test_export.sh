#!/usr/bin/env bash
# fraglab export --to pytorch-snapshot: Python's pickle reads it with PyTorch's keys; a replay
# of the export makes the policy's decisions again (the same peak); an export of a real
# snapshot under pytorch_caching verifies address for address; bad requests write nothing.
set -u
fraglab=${1:?usage: test_export.sh PATH_TO_FRAGLAB}
shared=${FRAGLAB_SHARED_TRACES:-/nonexistent}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
source "$(dirname "$0")/../support/expect.sh"
column() { python3 -c 'import csv,sys; print(next(csv.DictReader(sys.stdin))[sys.argv[1]])' "$1"; }

"$fraglab" gen phases --seed 3 --phases 6 --objects 800 -o "$work/p.trace" 2>/dev/null
allocs=$("$fraglab" info "$work/p.trace" --format csv | column allocs)
for policy in tf_bfc best_fit tlsf; do
  "$fraglab" export "$work/p.trace" -p $policy --backend simulated --to pytorch-snapshot -o "$work/$policy.pickle" 2>/dev/null; rc=$?
  shape=$(python3 - "$work/$policy.pickle" <<'PY'
import pickle, sys
s = pickle.load(open(sys.argv[1], "rb"))
events = s["device_traces"][0]
keys = all({"action", "addr", "size", "stream", "frames"} <= e.keys() for e in events)
blocks = all({"address", "size", "requested_size", "state"} <= b.keys() for seg in s["segments"] for b in seg["blocks"])
segs = all({"address", "total_size", "stream", "segment_type", "blocks"} <= seg.keys() for seg in s["segments"])
allocs = sum(e["action"] == "alloc" for e in events)
frees = sum(e["action"] == "free_completed" for e in events) == sum(e["action"] == "free_requested" for e in events)
print(keys and blocks and segs and frees, allocs, sum(e["action"] == "segment_alloc" for e in events))
PY
)
  expect "$policy: exported ($rc), Python's pickle reads PyTorch's keys, every allocation in it ($shape)" \
    '[[ $rc -eq 0 && $shape == "True $allocs "* && ${shape##* } -ge 1 ]]'
  original=$("$fraglab" replay "$work/p.trace" -p $policy --backend simulated --repeat 0 --format csv | column peak_reserved_bytes)
  again=$("$fraglab" replay "$work/$policy.pickle" -p $policy --backend simulated --repeat 0 --format csv 2>/dev/null | column peak_reserved_bytes)
  expect "$policy: the export replays to the same peak reserved ($original, $again)" '[[ -n $original && $original == "$again" ]]'
done
# Under a capacity, what the policy could not serve is an oom with the memory it had free.
"$fraglab" export "$work/p.trace" -p best_fit --backend simulated --capacity 4MiB --to pytorch-snapshot -o "$work/oom.pickle" 2>/dev/null
unserved=$("$fraglab" replay "$work/p.trace" -p best_fit --backend simulated --capacity 4MiB --repeat 0 --format csv | column failed_allocs)
ooms=$(python3 -c 'import pickle,sys; t=pickle.load(open(sys.argv[1],"rb"))["device_traces"][0]; print(sum(e["action"]=="oom" and "device_free" in e for e in t))' "$work/oom.pickle")
expect "failed allocations are oom events ($unserved, $ooms)" '[[ $unserved -gt 0 && $unserved == "$ooms" ]]'

# Bad requests write nothing.
for bad in "--to tape -o $work/x.pickle" "--to pytorch-snapshot" "--to pytorch-snapshot -o -" "--to pytorch-snapshot -o $work/p.trace"; do
  # shellcheck disable=SC2086
  err=$("$fraglab" export "$work/p.trace" -p tlsf $bad 2>&1); rc=$?
  expect "export $bad is refused ($err)" '[[ $rc -eq 2 && ! -e $work/x.pickle && $(head -c 1 "$work/p.trace") != $(printf "\x80") ]]'
done
err=$("$fraglab" export "$work/missing.trace" -p tlsf --to pytorch-snapshot -o "$work/m.pickle" 2>&1); rc=$?
expect "a missing trace is refused with nothing written" '[[ $rc -eq 2 && $err == *missing.trace* && ! -e $work/m.pickle ]]'

# Real snapshots: exported under pytorch_caching, every recorded address is PyTorch's again.
# Expandable segments with holes: empty_cache unmaps the whole pages inside every free block,
# not only the tail's, and a later miss maps into the hole first (offsets in MiB, 20 MiB pages:
# x [0,15), b [15,60), c [60,80); b freed and [20,60) unmapped; 30 MiB mapped back into it at
# 15; all but x freed and [20,80) unmapped; 60 MiB mapped at 15 again). The export records each
# run of pages mapped or unmapped, and verify predicts every one.
M=1048576
printf 'a 1 %d\na 2 %d\na 3 %d\nf 2\nr\na 4 %d\nf 4\nf 3\nr\na 5 %d\n' $((15*M)) $((45*M)) $((10*M)) $((30*M)) $((60*M)) \
  > "$work/holes.trace"
"$fraglab" export "$work/holes.trace" -p pytorch_expandable --to pytorch-snapshot -o "$work/holes.pickle" > /dev/null 2>&1
maps=$(python3 -c '
import pickle, sys
events = pickle.load(open(sys.argv[1], "rb"))["device_traces"][0]
base = events[0]["addr"]
print(" ".join("%s:%d+%d" % (e["action"][8:], (e["addr"] - base) >> 20, e["size"] >> 20) for e in events if e["action"].startswith("segment_")))
' "$work/holes.pickle")
expect "a pytorch_expandable export maps into the hole before the end, and unmaps holes ($maps)" \
  '[[ $maps == "map:0+20 map:20+40 map:60+20 unmap:20+40 map:20+40 unmap:20+60 map:20+60" ]]'
out=$("$fraglab" verify "$work/holes.pickle" -p pytorch_expandable --format csv 2>/dev/null); rc=$?
expect "its verify predicts every address and every mapping and unmapping" \
  '[[ $rc -eq 0 && $(echo "$out" | column addresses_matched) == 5 && $(echo "$out" | column maps_matched) == 7 && $(echo "$out" | column maps_total) == 7 ]]'

# Random allocations, frees and empty_caches (seeded) under pytorch_expandable: every export
# verifies whole, and cut after its first half or third (so that the start state, holes and
# all, is rebuilt from the end state and what follows) too. Its small pool's runs of pages
# must be named small although they are not 2 MiB segments.
for seed in 1 2 3; do
  python3 - "$seed" > "$work/random$seed.trace" <<'PY'
import random, sys
rng = random.Random(int(sys.argv[1]))
live, next_id = [], 1
for _ in range(400):
    r = rng.random()
    if r < 0.5 or not live:
        size = rng.randint(1, 1 << 20) if rng.random() < 0.5 else rng.randint(1 << 20, 64 << 20)
        print(f"a {next_id} {size}")
        live.append(next_id)
        next_id += 1
    elif r < 0.92:
        print(f"f {live.pop(rng.randrange(len(live)))}")
    else:
        print("r")
PY
  "$fraglab" export "$work/random$seed.trace" -p pytorch_expandable --to pytorch-snapshot -o "$work/random$seed.pickle" > /dev/null 2>&1
  for cut in 0 0.3 0.5; do
    python3 - "$work/random$seed.pickle" "$work/cut.pickle" "$cut" <<'PY'
import pickle, sys
d = pickle.load(open(sys.argv[1], "rb"))
events = d["device_traces"][0]
k = int(len(events) * float(sys.argv[3]))
while events[k]["action"] == "free_completed":  # never between a free's two halves
    k += 1
d["device_traces"][0] = events[k:]
pickle.dump(d, open(sys.argv[2], "wb"), protocol=4)
PY
    out=$("$fraglab" verify "$work/cut.pickle" -p pytorch_expandable --format csv 2>&1); rc=$?
    expect "random trace $seed under pytorch_expandable, cut at $cut: verify matches every address and mapping" \
      '[[ $rc -eq 0 && $(echo "$out" | column maps_matched) == $(echo "$out" | column maps_total) && $(echo "$out" | column maps_total) -gt 10 ]] || { echo "$out"; false; }'
  done
done

if [[ -d $shared ]]; then
  for snap in "$shared"/pytorch/*.pickle "$shared"/pytorch-cases/sqattn-empty-cache.pickle; do
    name=$(basename "$snap")
    "$fraglab" export "$snap" -p pytorch_caching --to pytorch-snapshot -o "$work/e_$name" 2>/dev/null
    ours=$("$fraglab" verify "$work/e_$name" --format csv 2>/dev/null | column addresses_matched)
    total=$("$fraglab" verify "$work/e_$name" --format csv 2>/dev/null | column addresses_total)
    theirs=$("$fraglab" verify "$snap" --format csv 2>/dev/null | column addresses_total)
    "$fraglab" verify "$work/e_$name" >/dev/null 2>&1; rc=$?
    expect "$name: its pytorch_caching export verifies, every address ($ours/$total, $theirs recorded)" \
      '[[ $rc -eq 0 && $ours == "$total" && $total == "$theirs" && $total -gt 0 ]]'
  done
  # Expandable segments: pages mapped into a reservation, recorded as segment_map from the first.
  snap=$shared/pytorch-cases/gpt2xl-fwd-expandable.pickle
  "$fraglab" export "$snap" -p pytorch_expandable --to pytorch-snapshot -o "$work/e_expandable.pickle" 2>/dev/null
  out=$("$fraglab" verify "$work/e_expandable.pickle" -p pytorch_expandable --format csv 2>/dev/null); rc=$?
  ours=$(echo "$out" | column addresses_matched)
  total=$(echo "$out" | column addresses_total)
  maps=$(echo "$out" | column maps_matched)
  map_total=$(echo "$out" | column maps_total)
  expect "its pytorch_expandable export verifies, every address and every mapping ($ours/$total, maps $maps/$map_total)" \
    '[[ $rc -eq 0 && $ours == "$total" && $total -gt 2000 && $maps == "$map_total" && $maps -gt 0 ]]'
else
  echo "SKIP: $shared not found; exporting the shared snapshots needs the shared traces (FRAGLAB_SHARED_TRACES, set by meson test)"
fi
report test_export
