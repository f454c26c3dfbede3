#!/usr/bin/env bash
# fraglab explain (docs/explain.md) on snapshots whose cause is known by hand
# (experiments/scripts/dev/split_oom_snapshot.py): a cached 530 MiB block split by a live 270 MiB
# weight, then a 400 MiB request with 730 MiB in all for the program (fragmentation), or a
# 600 MiB one (real demand), or no OOM at all (the peak); and docs/explain.md's example is
# this command's output.
set -u
fraglab=$(realpath "${1:?usage: test_explain.sh PATH_TO_FRAGLAB}")
root=$(realpath "$(dirname "$0")/../..")
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
source "$(dirname "$0")/../support/expect.sh"
make=$root/experiments/scripts/dev/split_oom_snapshot.py
/usr/bin/python3 "$make" "$work/split-oom.pickle" && /usr/bin/python3 "$make" "$work/demand-oom.pickle" --real-demand &&
  /usr/bin/python3 "$make" "$work/peak.pickle" --no-oom || exit 1
cd "$work"

out=$("$fraglab" verify split-oom.pickle 2>&1); rc=$?
expect "the constructed snapshot is what PyTorch's allocator does: verify matches it, its OOM included" \
  '[[ $rc -eq 0 && $out == *"addresses matched: 2/2"* && $out == *"out-of-memory errors matched: 1/1"* ]]'

out=$("$fraglab" explain split-oom.pickle --jobs 2 2>&1); rc=$?
expect "the request, and the memory there was: the allocator's 530 MiB reserved and the 200 MiB the device had free" \
  '[[ $rc -eq 0 && $out == *"the request    400 MiB on stream 0, for the large pool"* &&
     $out == *"the memory     730 MiB: 530 MiB reserved by the allocator + 200 MiB the device still had free"* ]]'
expect "the live block, and the free bytes of the large pool: 260 MiB, all in one block" \
  '[[ $out == *"in use         270 MiB requested by 1 live block (270 MiB as blocks)"* &&
     $out == *"large pool, stream 0: 260 MiB free, the largest block 260 MiB"* ]]'
expect "the verdict: fragmentation, 670 MiB of 730 MiB needed" \
  '[[ $out == *"verdict: fragmentation. The live blocks and the request need 670 MiB of the 730 MiB there was"* ]]'
row=$(grep "^large " <<<"$out")
expect "the stranded block: 260 MiB after the 270 MiB weight, in the 530 MiB segment, the weight named by its call site" \
  '[[ $(wc -l <<<"$row") -eq 1 && $row == *" 0x7f4a00000000 "*" 555745280 "*" 0x7f4a10e00000 "*" 272629760 "*
     && $row == *"270 MiB at 0x7f4a00000000 from model.py:42 load_weight"* ]]'

csv=$("$fraglab" explain split-oom.pickle --format csv --jobs 2); rc=$?
served() { grep "^$1,\|^\"$1\"," <<<"$csv" | cut -d, -f"$2"; }
expect "what if: as recorded, the request is not served within that memory" \
  '[[ $rc -eq 0 && $(sed -n 2p <<<"$csv") == "recorded (defaults),pytorch_caching:per_process_memory_fraction=1,no,1,"* ]]'
expect "max_split_size_mb:256 serves it (the 530 MiB block is not split; given back, the 270 and 400 MiB fit)" \
  '[[ $(grep -c "^max_split_size_mb:256,\"pytorch_caching:max_split_size_mb=256,per_process_memory_fraction=1\",yes,0," <<<"$csv") -eq 1 ]]'
expect "and expandable segments serve it; the defaults and max_split_size_mb:1024 (above the block) do not" \
  '[[ $(grep -c "^expandable_segments:True,pytorch_expandable:per_process_memory_fraction=1,yes,0," <<<"$csv") -eq 1 &&
     $(grep -c "^(defaults),pytorch_caching:per_process_memory_fraction=1,no,1," <<<"$csv") -eq 1 &&
     $(grep -c "^max_split_size_mb:1024,\"pytorch_caching:max_split_size_mb=1024,per_process_memory_fraction=1\",no,1," <<<"$csv") -eq 1 ]]'
expect "the settings that serve it come first, one change before two" \
  '[[ $(sed -n 3p <<<"$csv") == max_split_size_mb:*",yes,0,"* && $out == *"PYTORCH_CUDA_ALLOC_CONF=max_split_size_mb:"* ]]'

out=$("$fraglab" explain demand-oom.pickle --jobs 2 2>&1); rc=$?
expect "600 MiB beside the 270 MiB weight, with 730 MiB: real demand, and no setting serves it" \
  '[[ $rc -eq 0 && $out == *"verdict: real demand. The live blocks and the request need 870 MiB, more than the 730 MiB there was"* &&
     $out == *"what if: none of the 112 settings tried serves it within 730 MiB."* ]]'

out=$("$fraglab" explain peak.pickle --jobs 2 2>&1); rc=$?
expect "without an OOM, the first peak of reserved memory: the 530 MiB segment, nothing stranded" \
  '[[ $rc -eq 0 && $out == *"the first peak of reserved memory (after 1 of 3 events)"* && $out == *"reserved       530 MiB"* &&
     $out != *verdict* ]]'

# The same OOM recorded with 500 MiB free on the device: as recorded, the allocator would have
# reserved 400 MiB more (930 of 1030 MiB), so what failed was not the allocator.
/usr/bin/python3 -c '
import pickle
s = pickle.load(open("split-oom.pickle", "rb"))
s["device_traces"][0][-1]["device_free"] = 500 << 20
pickle.dump(s, open("roomy-oom.pickle", "wb"), protocol=2)'
out=$("$fraglab" explain roomy-oom.pickle --jobs 2 2>&1); rc=$?
expect "an OOM the allocator as recorded would have served: not the allocator, and no fragmentation claimed" \
  '[[ $rc -eq 0 && $out == *"verdict: not the allocator. Replayed as recorded within the 1.006 GiB there was, the request is served"* &&
     $out != *"verdict: fragmentation"* ]]'

"$fraglab" explain split-oom.pickle --jobs 2 -o why.html > /dev/null; rc=$?
expect "-o FILE.html: fraglab view's page of the recording, opening at the OOM, the explanation and every row above it" \
  '[[ $rc -eq 0 && $(grep -c "<h2 id=\"explain\" data-event=\"3\">Why it ran out of memory" why.html) -eq 1 &&
     $(grep -c "<tr><td>" why.html) -eq 114 && $(grep -c "id=\"slider\"" why.html) -eq 1 ]]'

err=$("$fraglab" explain split-oom.pickle --oom 2 -o not.html 2>&1); rc=$?
expect "--oom past the recorded errors is refused, and no page is written" \
  '[[ $rc -eq 2 && $err == *"--oom: 2, but split-oom.pickle recorded 1 out-of-memory error"* && ! -e not.html ]]'
"$fraglab" gen random --allocations 50 --seed 1 -o plain.trace 2> /dev/null
err=$("$fraglab" explain plain.trace 2>&1); rc=$?
expect "a trace that no PyTorch allocator recorded is refused: explain replays the allocator that recorded it" \
  '[[ $rc -eq 2 && $err == *"not a PyTorch memory snapshot"* ]]'

# docs/explain.md's example, marked <!-- output of `fraglab explain split-oom.pickle` -->,
# is the head of this output.
doc=$(awk '/<!-- output of `fraglab explain split-oom.pickle` -->/ { on = 1; next }
           on && /^```/ { if (inside) exit; inside = 1; next } inside' "$root/docs/explain.md")
out=$("$fraglab" explain split-oom.pickle --jobs 2 2>&1)
expect "docs/explain.md shows what explain prints" '[[ -n $doc && $(head -n "$(wc -l <<<"$doc")" <<<"$out") == "$doc" ]]'

report explain
