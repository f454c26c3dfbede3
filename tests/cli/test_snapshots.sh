#!/usr/bin/env bash
# PyTorch snapshots replayed as PyTorch ran them (docs/policies.md, "Checked against"): one
# allocator per device, the program's empty_cache() calls applied, recorded OOMs counted,
# every allocator setting applied or refused by name, PyTorch 2.0's layout read, and verify
# saying what it proved (exit 0 matched, 1 differs, 2 bad input, 3 nothing to verify).
set -u
fraglab=$(realpath "${1:?usage: test_snapshots.sh PATH_TO_FRAGLAB}")
cases=${FRAGLAB_SHARED_TRACES:-/nonexistent}/pytorch-cases
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
source "$(dirname "$0")/../support/expect.sh"
MiB=1048576

# Snapshots written as PyTorch's _dump_snapshot writes them (protocol 2 pickles of plain data).
/usr/bin/python3 - "$work" <<'EOF'
import pickle, sys
work = sys.argv[1]
MiB = 1 << 20
frames = [{"filename": "train.py", "line": 2**64 - 1, "name": "step"}]  # a value the replay does not use

def seg(device, address, size, blocks, kind="large", stream=0):
    return {"device": device, "address": address, "total_size": size, "stream": stream, "segment_type": kind,
            "allocated_size": 0, "active_size": 0, "requested_size": 0, "frames": frames,
            "blocks": [dict(b, frames=frames) for b in blocks]}

def ev(action, addr, size, stream=0):
    return {"action": action, "addr": addr, "size": size, "stream": stream, "time_us": 0, "frames": frames}

# Three devices, each its own allocator: device d holds (d + 1) x 20 MiB live at the end.
segments, traces = [], []
for d in range(3):
    base = (0x7f00 + d) << 32
    n = d + 1
    segments.append(seg(d, base, 20 * MiB * n, [{"address": base, "size": 20 * MiB * n, "requested_size": 20 * MiB * n,
                                                  "state": "active_allocated"}]))
    t = [ev("segment_alloc", base, 20 * MiB * n), ev("alloc", base, 20 * MiB * n)]
    if d == 1:
        t.append(ev("oom", 123, 80 << 30))  # 80 GiB asked, 123 B free on the device
    traces.append(t)
pickle.dump({"segments": segments, "device_traces": traces}, open(f"{work}/three.pickle", "wb"), protocol=2)
traces[1][-1] = ev("oom", 100 << 30, 80 << 30)  # an OOM with 100 GiB free: not what the preset would do
pickle.dump({"segments": segments, "device_traces": traces}, open(f"{work}/roomy-oom.pickle", "wb"), protocol=2)
# Recent PyTorch writes an oom with `device_free` and no `addr`.
traces[1][-1] = {"action": "oom", "device_free": 123, "size": 80 << 30, "stream": 0, "time_us": 0, "frames": frames}
pickle.dump({"segments": segments, "device_traces": traces}, open(f"{work}/new-oom.pickle", "wb"), protocol=2)
# Bad entries, for the place their refusal names.
traces[1][-1] = ev("alloc", 2**64 - 1, 512)
pickle.dump({"segments": segments, "device_traces": traces}, open(f"{work}/huge-addr.pickle", "wb"), protocol=2)
traces[1][-1] = {"action": "alloc", "size": 512, "stream": 0}
pickle.dump({"segments": segments, "device_traces": traces}, open(f"{work}/no-addr.pickle", "wb"), protocol=2)
traces[1].pop()
unknown = [list(t) for t in traces]
unknown[0].append({"action": "memory_fence", "addr": 0, "size": 1, "stream": 0})
unknown[0].append({"action": "memory_fence", "addr": 0, "size": 1, "stream": 0})
pickle.dump({"segments": segments, "device_traces": unknown}, open(f"{work}/unknown.pickle", "wb"), protocol=2)
bad = [dict(g) for g in segments]
del bad[2]["stream"]
pickle.dump({"segments": bad, "device_traces": traces}, open(f"{work}/no-stream.pickle", "wb"), protocol=2)

# empty_cache(): a block freed, then its segment given back while nothing else is cached.
base = 0x7f0000000000
t = [ev("segment_alloc", base, 20 * MiB), ev("alloc", base, 12 * MiB), ev("free_requested", base, 12 * MiB),
     ev("free_completed", base, 12 * MiB), ev("segment_free", base, 20 * MiB),
     ev("segment_alloc", base, 20 * MiB), ev("alloc", base, 12 * MiB)]
pickle.dump({"segments": [seg(0, base, 20 * MiB, [{"address": base, "size": 12 * MiB, "requested_size": 12 * MiB,
                                                   "state": "active_allocated"},
                                                  {"address": base + 12 * MiB, "size": 8 * MiB, "requested_size": 0,
                                                   "state": "inactive"}])],
             "device_traces": [t]}, open(f"{work}/emptied.pickle", "wb"), protocol=2)

# roundup_power2_divisions in the per-interval form: 5 MiB + 1 rounds to 6 MiB with two
# divisions of [4, 8) MiB, so the next block starts 6 MiB in (5 MiB + 512 without).
settings = {"PYTORCH_CUDA_ALLOC_CONF": "roundup_power2_divisions:[4:2]", "max_split_size": -1,
            "garbage_collection_threshold": 0.0, "expandable_segments": False, "release_lock_on_cudamalloc": False,
            "pinned_num_register_threads": 1, "pinned_use_cuda_host_register": False,
            "graph_capture_record_stream_reuse": False,
            "roundup_power2_divisions": {str(1 << i): (2 if i == 2 else 0) for i in range(16)}}
t = [ev("segment_alloc", base, 20 * MiB), ev("alloc", base, 5 * MiB + 1), ev("alloc", base + 6 * MiB, MiB + 1)]
snap = {"segments": [], "device_traces": [t], "allocator_settings": settings}
pickle.dump(snap, open(f"{work}/divisions.pickle", "wb"), protocol=2)
snap["allocator_settings"] = dict(settings, graph_capture_record_stream_reuse=True)
pickle.dump(snap, open(f"{work}/unmodelled.pickle", "wb"), protocol=2)

# A block live at the start, freed later, of unrecorded size: it held an unsplit tail (taken
# from a 6 MiB hole for 5 MiB + 1), which the allocation placed right behind it shows.
blocks = [{"address": base, "size": 6 * MiB, "requested_size": 6 * MiB, "state": "active_allocated"},
          {"address": base + 6 * MiB, "size": 2 * MiB, "requested_size": 2 * MiB, "state": "active_allocated"},
          {"address": base + 8 * MiB, "size": 12 * MiB, "requested_size": 0, "state": "inactive"}]
t = [ev("alloc", base + 6 * MiB, 2 * MiB), ev("free_requested", base, 5 * MiB + 1), ev("free_completed", base, 5 * MiB + 1),
     ev("alloc", base, 6 * MiB)]
pickle.dump({"segments": [seg(0, base, 20 * MiB, blocks)], "device_traces": [t]}, open(f"{work}/tail.pickle", "wb"), protocol=2)

# expandable_segments:True: 30 MiB maps two 20 MiB pages at the reservation's start; freed and
# the cache emptied, both are unmapped.
t = [ev("segment_map", base, 40 * MiB), ev("alloc", base, 30 * MiB), ev("free_requested", base, 30 * MiB),
     ev("free_completed", base, 30 * MiB), ev("segment_unmap", base, 40 * MiB)]
pickle.dump({"segments": [], "device_traces": [t], "allocator_settings": dict(settings, expandable_segments=True,
                                                                               roundup_power2_divisions={})},
            open(f"{work}/expandable.pickle", "wb"), protocol=2)

# The start state replayed as PyTorch held it: a 12 MiB segment with 8 MiB free behind its
# live block takes the next 6 MiB without a new segment.
blocks = [{"address": base, "size": 4 * MiB, "requested_size": 4 * MiB, "state": "active_allocated"},
          {"address": base + 4 * MiB, "size": 6 * MiB, "requested_size": 6 * MiB, "state": "active_allocated"},
          {"address": base + 10 * MiB, "size": 2 * MiB, "requested_size": 0, "state": "inactive"}]
pickle.dump({"segments": [seg(0, base, 12 * MiB, blocks)], "device_traces": [[ev("alloc", base + 4 * MiB, 6 * MiB)]]},
            open(f"{work}/start.pickle", "wb"), protocol=2)

# PyTorch 2.0: blocks without addresses; state only.
pickle.dump({"segments": [seg(0, base, 20 * MiB, [{"size": 2 * MiB, "requested_size": 2 * MiB, "state": "active_allocated"},
                                                  {"size": 4 * MiB, "requested_size": 0, "state": "inactive"},
                                                  {"size": 14 * MiB, "requested_size": 14 * MiB - 7, "state": "active_allocated"}])],
             "device_traces": [[ev("free_completed", base + 6 * MiB, 14 * MiB - 7)]]},
            open(f"{work}/torch20.pickle", "wb"), protocol=2)

# Four devices recorded, the last with nothing: an allocator with nothing to replay.
pickle.dump({"segments": segments, "device_traces": traces + [[]]}, open(f"{work}/idle-device.pickle", "wb"), protocol=2)

# max_non_split_rounding_mb, recorded only in the PYTORCH_CUDA_ALLOC_CONF text: a cached
# 200 MiB block serves 150 MiB (>= max_split_size 100 MiB) unsplit under 64 MiB, where
# PyTorch's default 20 MiB would have made a new segment.
conf = dict(settings, PYTORCH_CUDA_ALLOC_CONF="max_split_size_mb:100,max_non_split_rounding_mb:64", max_split_size=100 * MiB,
            roundup_power2_divisions={})
t = [ev("segment_alloc", base, 200 * MiB), ev("alloc", base, 200 * MiB), ev("free_requested", base, 200 * MiB),
     ev("free_completed", base, 200 * MiB), ev("alloc", base, 150 * MiB)]
pickle.dump({"segments": [], "device_traces": [t], "allocator_settings": conf}, open(f"{work}/non-split.pickle", "wb"), protocol=2)
conf = dict(conf, PYTORCH_CUDA_ALLOC_CONF="max_split_size_mb:100,per_process_memory_fraction:0.5,backend:native")
pickle.dump({"segments": [], "device_traces": [t], "allocator_settings": conf}, open(f"{work}/fraction.pickle", "wb"), protocol=2)
# A newer PyTorch's keys at their defaults change nothing; the 20 MiB large segment made 40 MiB would.
conf = dict(conf, PYTORCH_CUDA_ALLOC_CONF="max_split_size_mb:100,max_non_split_rounding_mb:64,large_segment_size_mb:20,"
            "per_process_memory_fraction:1.0")
pickle.dump({"segments": [], "device_traces": [t], "allocator_settings": conf}, open(f"{work}/defaults.pickle", "wb"), protocol=2)
conf = dict(conf, PYTORCH_CUDA_ALLOC_CONF="max_split_size_mb:100,large_segment_size_mb:40")
pickle.dump({"segments": [], "device_traces": [t], "allocator_settings": conf}, open(f"{work}/large-segment.pickle", "wb"), protocol=2)

# A private pool's segment (torch.cuda.MemPool, a CUDA graph's): segment_pool_id other than (0, 0).
pooled = seg(0, base, 20 * MiB, [{"address": base, "size": 2 * MiB, "requested_size": 2 * MiB, "state": "active_allocated"}])
pooled["segment_pool_id"] = (1, 3)
pickle.dump({"segments": [pooled], "device_traces": [[ev("segment_alloc", base, 20 * MiB), ev("alloc", base, 2 * MiB)]]},
            open(f"{work}/private-pool.pickle", "wb"), protocol=2)
EOF

# --- devices ------------------------------------------------------------------------------
out=$("$fraglab" info "$work/three.pickle"); rc=$?
expect "info: one trace per device, named FILE@cuda:N, its OOMs counted (a line number of 2^64-1 in a frame is no obstacle)" \
  '[[ $rc -eq 0 && $(grep -c "^trace: three.pickle@cuda:" <<<"$out") -eq 3 &&
     $(grep -A6 "^trace: three.pickle@cuda:1" <<<"$out" | grep -c "^recorded_failures: 1") -eq 1 ]]'
out=$("$fraglab" replay "$work/three.pickle" -p pytorch_caching --repeat 0 --format csv); rc=$?
expect "replay: a row per device, each device's peak its own" \
  '[[ $rc -eq 0 && $(grep -c "^three.pickle@cuda:0,pytorch_caching,1,1,0,0,$((20 * MiB))," <<<"$out") -eq 1 &&
     $(grep -c "^three.pickle@cuda:2,pytorch_caching,1,1,0,0,$((60 * MiB))," <<<"$out") -eq 1 ]]'
out=$("$fraglab" replay "$work/three.pickle" -p tlsf --device 1 --repeat 0 --format csv); rc=$?
expect "replay --device 1: that device alone" '[[ $rc -eq 0 && $(tail -n +2 <<<"$out" | wc -l) -eq 1 && $out == *"three.pickle@cuda:1,tlsf,"* ]]'
err=$("$fraglab" replay "$work/three.pickle" -p tlsf --device 5 2>&1); rc=$?
expect "replay --device 5 names the devices the file holds" '[[ $rc -eq 2 && $err == *"no device cuda:5 in it (it holds cuda:0, cuda:1, cuda:2)"* ]]'
err=$("$fraglab" dump "$work/three.pickle" -p tlsf 2>&1); rc=$?
expect "dump of several devices asks for one" '[[ $rc -eq 2 && $err == *"choose one with --device N"* ]]'
out=$("$fraglab" verify "$work/three.pickle"); rc=$?
expect "verify: each device's allocator, and the preset fails where PyTorch ran out of memory" \
  '[[ $rc -eq 0 && $(grep -c "^addresses matched: 1/1" <<<"$out") -eq 3 && $out == *"out-of-memory errors matched: 1/1"* ]]'
out=$("$fraglab" verify "$work/roomy-oom.pickle"); rc=$?
expect "verify: an OOM the preset would have served is a mismatch, named by its trace index" \
  '[[ $rc -eq 1 && $out == *"out-of-memory errors matched: 0/1"* && $out == *"device_traces[1][2]: PyTorch ran out of memory"* ]]'

# --- releases -----------------------------------------------------------------------------
row() { "$fraglab" replay "$@" -p pytorch_caching --repeat 0 --format csv | tail -1; }
col() { awk -F, -v name="$1" 'NR == 1 { for (i = 1; i <= NF; ++i) if ($i == name) c = i } NR == 2 { print $c }'; }
# Every row's cell of column $1, read as CSV (a list value is quoted, with its commas).
cols() { /usr/bin/python3 -c 'import csv, sys; [print(r[sys.argv[1]]) for r in csv.DictReader(sys.stdin)]' "$1"; }
csv=$("$fraglab" replay "$work/emptied.pickle" -p pytorch_caching --repeat 0 --format csv)
expect "empty_cache is replayed: a cache release, and the segment goes back" \
  '[[ $(col cache_releases <<<"$csv") -eq 1 && $(col releases <<<"$csv") -eq 1 && $(col acquisitions <<<"$csv") -eq 2 ]]'
csv=$("$fraglab" replay "$work/emptied.pickle" -p pytorch_caching --repeat 0 --format csv --ignore-releases)
expect "--ignore-releases: the what-if without empty_cache keeps the segment" \
  '[[ $(col cache_releases <<<"$csv") -eq 0 && $(col releases <<<"$csv") -eq 0 && $(col acquisitions <<<"$csv") -eq 1 ]]'
"$fraglab" convert "$work/emptied.pickle" "$work/emptied.trace" 2>/dev/null
"$fraglab" convert "$work/emptied.pickle" "$work/emptied.fbin" 2>/dev/null
expect "a release survives native text and binary" \
  '[[ $(grep -c "^r$" "$work/emptied.trace") -eq 1 && "$(row "$work/emptied.trace" | cut -d, -f2-)" == "$(row "$work/emptied.pickle" | cut -d, -f2-)" &&
     "$(row "$work/emptied.fbin" | cut -d, -f2-)" == "$(row "$work/emptied.pickle" | cut -d, -f2-)" ]]'
err=$("$fraglab" convert "$work/emptied.pickle" "$work/emptied.csv" 2>&1); rc=$?
expect "RMM CSV, which has no action for a release, is refused rather than written without it" \
  '[[ $rc -eq 2 && $err == *"releases the allocator'"'"'s cache, which RMM logging CSV has no action for"* && ! -e $work/emptied.csv ]]'

# --- settings -----------------------------------------------------------------------------
out=$("$fraglab" verify "$work/divisions.pickle"); rc=$?
expect "verify applies roundup_power2_divisions as recorded, per interval" '[[ $rc -eq 0 && $out == *"addresses matched: 2/2"* ]]'
# Replay applies them too: 5 MiB + 1 takes 6 MiB, 1 MiB + 1 takes 1 MiB + 512 (7,340,544 B at
# the peak); under the preset's defaults 5 MiB + 512 and 1 MiB + 512 (6,292,480 B).
csv=$("$fraglab" replay "$work/divisions.pickle" -p pytorch_caching --repeat 0 --format csv 2>"$work/note"); rc=$?
expect "replay under a PyTorch preset applies the recorded roundup_power2_divisions, per interval, and says so" \
  '[[ $rc -eq 0 && $(col peak_allocated_bytes <<<"$csv") -eq 7340544 && $csv == *"roundup_power2_divisions=[1:0,2:0,4:2,8:0,"* &&
     $(cat "$work/note") == *"divisions.pickle was recorded with roundup_power2_divisions[4 MiB]=2; pytorch_caching replays it under those modelled"* ]]'
"$fraglab" replay "$work/divisions.pickle" -p best_fit --backend simulated --repeat 0 --format csv >/dev/null 2>"$work/note"; rc=$?
expect "a policy that reads none of PyTorch's settings gets no note about them" '[[ $rc -eq 0 && ! -s $work/note ]]'
# A list value is one value of --vary: its commas are inside brackets.
csv=$("$fraglab" sweep "$work/divisions.pickle" -p pytorch_caching --vary 'roundup_power2_divisions=[1:0,4:2,>:0],0' --format csv 2>/dev/null); rc=$?
expect "--vary takes a bracketed list as one value" \
  '[[ $rc -eq 0 && $(cols peak_allocated_bytes <<<"$csv" | tr "\n" " ") == "7340544 6292480 " ]]'
csv=$("$fraglab" replay "$work/divisions.pickle" -p pytorch_caching --repeat 0 --format csv --ignore-recorded-settings 2>/dev/null)
expect "--ignore-recorded-settings replays under the preset's defaults" '[[ $(col peak_allocated_bytes <<<"$csv") -eq 6292480 ]]'
csv=$("$fraglab" replay "$work/divisions.pickle" -p pytorch_caching --repeat 0 --format csv --set roundup_power2_divisions=0 2>/dev/null)
expect "--set overrides a recorded setting" '[[ $(col peak_allocated_bytes <<<"$csv") -eq 6292480 ]]'
csv=$("$fraglab" replay "$work/divisions.pickle" -p 'pytorch_caching:roundup_power2_divisions=[1:0,4:2,>:0]@mine' --repeat 0 --format csv 2>/dev/null)
expect "a per-interval setting in -p, commas inside its brackets" '[[ $(col peak_allocated_bytes <<<"$csv") -eq 7340544 && $csv == *mine* ]]'
csv=$("$fraglab" sweep "$work/divisions.pickle" -p pytorch_caching --vary max_split_size_mb=64,128 --format csv 2>/dev/null)
expect "a sweep applies the recorded settings to each cell" '[[ $(tail -n +2 <<<"$csv" | grep -c "roundup_power2_divisions=\[1:0,2:0,4:2") -eq 2 ]]'
err=$("$fraglab" verify "$work/unmodelled.pickle" 2>&1); rc=$?
expect "a setting the preset does not model, at another value than its default, is refused by name" \
  '[[ $rc -eq 2 && $err == *"graph_capture_record_stream_reuse=True"* ]]'

# --- expandable segments ------------------------------------------------------------------
out=$("$fraglab" verify "$work/expandable.pickle"); rc=$?
expect "verify of an expandable recording runs pytorch_expandable and compares its maps and unmaps" \
  '[[ $rc -eq 0 && $out == *"under pytorch_expandable"* && $out == *"addresses matched: 1/1"* && $out == *"maps matched: 2/2"* ]]'
err=$("$fraglab" verify "$work/expandable.pickle" -p pytorch_caching 2>&1); rc=$?
expect "verify -p pytorch_caching of an expandable recording is refused, naming the preset it asks for" \
  '[[ $rc -eq 2 && $err == *"expandable_segments=True, which is pytorch_expandable, not pytorch_caching"* ]]'
csv=$("$fraglab" replay "$work/expandable.pickle" -p pytorch_expandable --repeat 0 --format csv 2>/dev/null)
expect "an unmap is the program emptying the cache: a release in replay" '[[ $(col cache_releases <<<"$csv") -eq 1 ]]'

# --- the start state ----------------------------------------------------------------------
csv=$("$fraglab" replay "$work/start.pickle" -p pytorch_caching,tlsf --backend simulated --repeat 0 --format csv)
expect "under pytorch_caching a replay starts from the recorded segments; another policy allocates the start afresh" \
  '[[ $(grep ",pytorch_caching," <<<"$csv" | cut -d, -f4,9) == "2,$((12 * MiB))" && $(grep ",tlsf," <<<"$csv" | cut -d, -f4) == 2 ]]'
out=$("$fraglab" dump "$work/start.pickle" -p pytorch_caching)
expect "dump starts from the recorded segments as replay does" '[[ $(grep "^reserved_bytes " <<<"$out" | awk "{print \$2}") == $((12 * MiB)) ]]'
ts=$("$fraglab" replay "$work/start.pickle" -p pytorch_caching --repeat 0 --timeseries - -o /dev/null | tail -1 | cut -d, -f3,4)
expect "a restored start is sampled in the time series too" '[[ $ts == "2,$((10 * MiB))" ]]'
out=$("$fraglab" verify "$work/tail.pickle"); rc=$?
expect "a start block's unsplit tail is found from where the next allocation lands" '[[ $rc -eq 0 && $out == *"addresses matched: 2/2"* ]]'

# --- PyTorch 2.0's layout, and nothing to verify ------------------------------------------
out=$("$fraglab" info "$work/torch20.pickle"); rc=$?
expect "PyTorch 2.0's blocks take their addresses from the sizes before them" \
  '[[ $rc -eq 0 && $out == *"allocs: 2"* && $out == *"frees: 1"* ]]'
out=$("$fraglab" verify "$work/torch20.pickle"); rc=$?
expect "verify with no decision recorded says so and exits 3, not 0" '[[ $rc -eq 3 && $out == *"nothing to verify"* ]]'

# --- the real cases -----------------------------------------------------------------------
if [[ -d $cases ]]; then
  out=$("$fraglab" verify "$cases/gpt2xl-fwd-expandable.pickle"); rc=$?
  expect "gpt2xl (expandable segments): every address under pytorch_expandable ($(grep matched <<<"$out" | tr '\n' ' '))" \
    '[[ $rc -eq 0 && $out == *"addresses matched: 2218/2218"* && $out == *"under pytorch_expandable"* ]]'
  out=$("$fraglab" verify "$cases/sqattn-empty-cache.pickle"); rc=$?
  expect "sqattn: every decision, empty_cache included ($(grep matched <<<"$out" | tr '\n' ' '))" \
    '[[ $rc -eq 0 && $out == *"addresses matched: 2912/2912"* && $out == *"segments matched: 840/840"* ]]'
  "$fraglab" replay "$cases/sqattn-empty-cache.pickle" -p pytorch_caching --repeat 0 --format csv \
    --timeseries "$work/series.csv" > "$work/sq.csv"
  falls=$(awk -F, 'NR > 1 { if (seen && $6 < last) n++; last = $6; seen = 1 } END { print n + 0 }' "$work/series.csv")
  expect "sqattn: reserved bytes fall at the empty_cache calls ($falls falls; $(col cache_releases < "$work/sq.csv") releases)" \
    '[[ $falls -gt 10 && $(col cache_releases < "$work/sq.csv") -gt 10 ]]'
  # Replay (not verify) under pytorch_caching gets each segment where PyTorch got it, so that
  # best fit's ties fall as there: every snapshot peaks at the reserved bytes it recorded
  # (the start's segments plus the segment_alloc and segment_free that follow).
  for snap in "$cases"/../pytorch/*.pickle "$cases/sqattn-empty-cache.pickle"; do
    recorded=$(/usr/bin/python3 -c '
import pickle, sys
s = pickle.load(open(sys.argv[1], "rb"))
t = s["device_traces"][0]
cur = peak = 0
for e in t:
    cur += e["size"] if e["action"] == "segment_alloc" else -e["size"] if e["action"] == "segment_free" else 0
    peak = max(peak, cur)
print(sum(g["total_size"] for g in s["segments"] if g.get("device", 0) == 0) - cur + peak)' "$snap")
    peak=$("$fraglab" replay "$snap" -p pytorch_caching --repeat 0 --format csv 2>/dev/null | tail -1 | cut -d, -f9)
    expect "$(basename "$snap") replayed under pytorch_caching peaks at the reserved bytes PyTorch recorded ($recorded; $peak)" \
      '[[ -n $peak && $peak == "$recorded" ]]'
  done
  out=$("$fraglab" info "$cases/layoutediting-2dev-state.pickle" "$cases/opt1.3b-torch2.0-state.pickle"); rc=$?
  expect "the two-device file names its device; the 2.0-era file reads" \
    '[[ $rc -eq 0 && $out == *"trace: layoutediting-2dev-state.pickle@cuda:1"* && $out == *"trace: opt1.3b-torch2.0-state.pickle"* ]]'
  "$fraglab" verify "$cases/opt1.3b-torch2.0-state.pickle" > /dev/null; rc=$?
  expect "the 2.0-era file records no decision: verify exits 3" '[[ $rc -eq 3 ]]'
else
  echo "SKIP: $cases not found; the real snapshot cases need the shared traces (FRAGLAB_SHARED_TRACES, set by meson test)"
fi

out=$("$fraglab" verify "$work/new-oom.pickle" 2>&1); rc=$?
expect "an oom written with device_free and no addr is read, and verified" '[[ $rc -eq 0 && $out == *"out-of-memory errors matched: 1/1"* ]]'
err=$("$fraglab" info "$work/huge-addr.pickle" 2>&1); rc=$?
expect "an address of 2^64 - 1 is named as too large, at its entry" \
  '[[ $rc -eq 2 && $err == *"huge-addr.pickle: device_traces[1][2]: expected a non-negative integer below 2^63 for '"'"'addr'"'"' in an event, got a larger one"* ]]'
err=$("$fraglab" info "$work/no-addr.pickle" 2>&1); rc=$?
expect "a missing key is named at its entry" '[[ $rc -eq 2 && $err == *"no-addr.pickle: device_traces[1][2]: expected key '"'"'addr'"'"' in an event"* ]]'
err=$("$fraglab" info "$work/no-stream.pickle" 2>&1); rc=$?
expect "and in a segment" '[[ $rc -eq 2 && $err == *"no-stream.pickle: segments[2]: expected key '"'"'stream'"'"' in a segment"* ]]'

# --- what recent PyTorch writes ---------------------------------------------------------------
out=$("$fraglab" info "$work/idle-device.pickle" --device 3 2>&1); rc=$?
expect "a device that recorded nothing is an allocator with nothing in it" '[[ $rc -eq 0 && $out == *"idle-device.pickle@cuda:3"* && $out == *"events: 0"* ]]'
out=$("$fraglab" replay "$work/idle-device.pickle" --device 3 -p pytorch_caching --repeat 0 --format csv 2>&1); rc=$?
expect "and replays as a row of nothing" '[[ $rc -eq 0 && $out == *"idle-device.pickle@cuda:3,pytorch_caching,0,0,"* ]]'
"$fraglab" verify "$work/idle-device.pickle" --device 3 > /dev/null 2>&1; rc=$?
expect "verify: nothing to verify there (exit 3)" '[[ $rc -eq 3 ]]'
out=$("$fraglab" verify "$work/idle-device.pickle" 2>&1); rc=$?
expect "without --device, the devices that recorded something, a row each" '[[ $rc -eq 0 && $out != *"@cuda:3"* && $out == *"@cuda:2"* ]]'
out=$("$fraglab" verify "$work/non-split.pickle" 2>&1); rc=$?
expect "max_non_split_rounding_mb in PYTORCH_CUDA_ALLOC_CONF is applied: the cached block serves the oversize request" \
  '[[ $rc -eq 0 && $out == *"addresses matched: 2/2"* ]]'
out=$("$fraglab" replay "$work/non-split.pickle" -p pytorch_caching --repeat 0 2>&1); rc=$?
expect "and named among the recorded settings a replay applies" '[[ $rc -eq 0 && $out == *"recorded with max_split_size=104857600, max_non_split_rounding=67108864"* ]]'
err=$("$fraglab" verify "$work/fraction.pickle" 2>&1); rc=$?
expect "a key of the text no preset models, at a value other than its default, is refused by name" \
  '[[ $rc -eq 2 && $err == *"not model: per_process_memory_fraction=0.5"* && $err != *backend* ]]'
out=$("$fraglab" verify "$work/defaults.pickle" 2>&1); rc=$?
expect "large_segment_size_mb:20 and per_process_memory_fraction:1.0, PyTorch's defaults, are read as such" \
  '[[ $rc -eq 0 && $out == *"addresses matched: 2/2"* ]]'
err=$("$fraglab" verify "$work/large-segment.pickle" 2>&1); rc=$?
expect "large_segment_size_mb at another value is refused by name" '[[ $rc -eq 2 && $err == *"not model: large_segment_size_mb=40"* ]]'
out=$("$fraglab" info "$work/private-pool.pickle" 2>&1); rc=$?
expect "a private pool is named by info" '[[ $rc -eq 0 && $out == *"private pools (segment_pool_id (1, 3))"* ]]'
err=$("$fraglab" replay "$work/private-pool.pickle" -p best_fit 2>&1); rc=$?
expect "and refused by every replay, never mixed with the default pools" '[[ $rc -eq 2 && $err == *"segment_pool_id (1, 3)"* ]]'
err=$("$fraglab" verify "$work/private-pool.pickle" 2>&1); rc=$?
expect "and by verify" '[[ $rc -eq 2 && $err == *"segment_pool_id (1, 3)"* ]]'

out=$("$fraglab" info "$work/unknown.pickle" --device 0 2>&1); rc=$?
expect "entries of an action fraglab does not know are left out, and said so" \
  '[[ $rc -eq 0 && $out == *"notes: 2 entries of action '"'"'memory_fence'"'"', which this fraglab does not know, left out"* ]]'

report snapshots
