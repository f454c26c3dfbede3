#!/usr/bin/env bash
# The fraglab command end to end: the contract in ../shared/docs/experiments.md that users
# and scripts rely on (column names, exit codes, FILE:LINE errors, no partial output,
# byte-identical output apart from timing).
set -u
fraglab=${1:?usage: test_cli.sh PATH_TO_FRAGLAB}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
source "$(dirname "$0")/../support/expect.sh"

out=$("$fraglab" --version); rc=$?
expect "--version names the version and the commit ($out)" \
  '[[ $rc -eq 0 && $out =~ ^fraglab\ [0-9]+\.[0-9]+\.[0-9]+\ \(commit\ ([0-9a-f]+(-dirty)?|unknown)\)$ ]]'
out=$("$fraglab" policies)
expect "policies lists the compositions" '[[ $out == *bins_best* && $out == *ao_first* && $out == *tree_worst* && $out == *seg_good* ]]'
out=$("$fraglab" policies --keys)
expect "policies --keys lists parameters" '[[ $out == *quantum* && $out == *max_internal_fragmentation* && $out == *memory_limit* ]]'

"$fraglab" gen phases --phases 6 --objects 500 -o "$work/p.trace" 2>/dev/null
expect "gen writes a trace" '[[ -s $work/p.trace ]]'
"$fraglab" gen phases --phases 6 --objects 500 -o "$work/p2.trace" 2>/dev/null
expect "gen is deterministic" 'cmp -s "$work/p.trace" "$work/p2.trace"'
"$fraglab" gen transformer --layers 2 --seq-dist uniform --seq-len 64 --seq-len-max 256 -o "$work/tr.fbin" 2>/dev/null
expect "gen transformer writes a binary trace" '[[ $("$fraglab" info "$work/tr.fbin" | grep -c "^format: native binary") -eq 1 ]]'
"$fraglab" gen llm-serving --layers 2 --requests 5 -o "$work/serve.trace" 2>/dev/null
expect "gen records its full command in a text trace" \
  'grep -q "^# fraglab gen llm-serving --seed 1 --layers 2 .*--kv-layout contiguous .*--requests 5 " "$work/serve.trace"'
"$fraglab" gen -o "$work/first.trace" --seed 3 phases --phases 2 2>/dev/null
expect "gen finds the kind after options and their values" '[[ -s $work/first.trace ]]'
err=$("$fraglab" gen phases --layers 3 -o "$work/x.trace" 2>&1); rc=$?
expect "gen refuses an option of another kind" '[[ $rc -ne 0 && $err == *layers* && ! -e $work/x.trace ]]'
err=$("$fraglab" gen transformer --dtype fp64 -o "$work/x.trace" 2>&1); rc=$?
expect "gen names the option with a bad value" '[[ $rc -ne 0 && $err == *--dtype*fp64* && ! -e $work/x.trace ]]'
err=$("$fraglab" gen transformer --seq-dist uniform -o "$work/x.trace" 2>&1); rc=$?
expect "gen says a varied length needs a range" '[[ $rc -ne 0 && $err == *seq-len-max* ]]'
err=$("$fraglab" gen random --max-size 20 -o "$work/x.trace" 2>&1); rc=$?
expect "gen refuses an abbreviated option rather than guess it (--max-size for --max-size-log2)" \
  '[[ $rc -eq 2 && $err == *"unrecognised option '"'"'--max-size'"'"'"* && ! -e $work/x.trace ]]'
out=$("$fraglab" gen --help)
expect "gen --help lists every kind's options" '[[ $out == *transformer:* && $out == *--checkpointing* && $out == *llm-serving:* && $out == *--kv-layout* && $out == *phases:* ]]'

"$fraglab" replay "$work/p.trace" -p bins_best,tree_best,ao_first,tree_worst --format csv -o "$work/r.csv"
header=$(head -1 "$work/r.csv")
expect "csv header has the contract's columns in order" \
  '[[ $header == trace,policy,events,allocs,frees,failed_allocs,peak_live_bytes,peak_allocated_bytes,peak_reserved_bytes,frag1,frag2,frag3,frag4,ext_frag_at_peak,* && $header == *,ns_per_op,backend,granularity,parameters ]]'
expect "one row per policy" '[[ $(wc -l < "$work/r.csv") -eq 5 ]]'
live=$(awk -F, 'NR>1{print $7}' "$work/r.csv" | sort -u | wc -l)
expect "every policy sees the same peak live bytes" '[[ $live -eq 1 ]]'
reserved=$(awk -F, 'NR>1 && $2=="ao_first"{print $9}' "$work/r.csv")
expect "peak reserved is reported" '[[ $reserved -gt 0 ]]'

"$fraglab" replay "$work/p.trace" -p bins_best,ao_first --format csv | cut -d, -f1-20 > "$work/a"
"$fraglab" replay "$work/p.trace" -p bins_best,ao_first --format csv | cut -d, -f1-20 > "$work/b"
expect "output is identical apart from timing" 'cmp -s "$work/a" "$work/b"'
"$fraglab" replay "$work/p.trace" -p bins_best,ao_first --repeat 2 --warm --format csv -o "$work/warm.csv"; rc=$?
expect "replay --warm changes only the timing" '[[ $rc -eq 0 ]] && cmp -s "$work/a" <(cut -d, -f1-20 "$work/warm.csv")'
"$fraglab" replay "$work/p.trace" -p bins_best,ao_first --repeat 2 --free-by address --format csv -o "$work/by_address.csv"; rc=$?
expect "replay --free-by address changes only the timing" '[[ $rc -eq 0 ]] && cmp -s "$work/a" <(cut -d, -f1-20 "$work/by_address.csv")'
out=$("$fraglab" replay "$work/p.trace" -p ao_first --free-by pointer 2>&1); rc=$?
expect "replay --free-by refuses what it does not know" '[[ $rc -ne 0 && $out == *"--free-by: expected reference or address, got '"'"'pointer'"'"'"* ]]'

out=$("$fraglab" replay "$work/p.trace" -p tree_best)
expect "table output names the metrics" '[[ $out == *"peak live"* && $out == *"peak reserved"* ]]'
for f in json md; do
  "$fraglab" replay "$work/p.trace" -p tree_best --format $f > "$work/o.$f"
  expect "$f output" '[[ -s $work/o.$f ]]'
done

printf 'a 1 100\na 2 abc\n' > "$work/bad.trace"
err=$("$fraglab" replay "$work/bad.trace" -p tree_best -o "$work/never.csv" 2>&1); rc=$?
expect "bad trace exits non-zero" '[[ $rc -ne 0 ]]'
expect "bad trace names FILE:LINE" '[[ $err == *bad.trace:2:*expected\ a\ size* ]]'
expect "no output file after an error" '[[ ! -e $work/never.csv ]]'
expect "no temporary left after an error" '[[ -z $(ls "$work" | grep tmp) ]]'

: > "$work/empty.trace"
err=$("$fraglab" replay "$work/empty.trace" -p tree_best -o "$work/never.csv" 2>&1); rc=$?
expect "an empty trace file is an error naming it" '[[ $rc -eq 2 && $err == *empty.trace:1:\ empty\ file* && ! -e $work/never.csv ]]'

"$fraglab" replay "$work/p.trace" -p no_such_policy >/dev/null 2>&1; rc=$?
expect "unknown policy exits 2" '[[ $rc -eq 2 ]]'
"$fraglab" replay "$work/p.trace" -p tree_best --set bogus=1 >/dev/null 2>&1; rc=$?
expect "unknown parameter exits 2" '[[ $rc -eq 2 ]]'
"$fraglab" replay "$work/p.trace" -p tree_best --capacity 12XB >/dev/null 2>&1; rc=$?
expect "bad capacity exits 2" '[[ $rc -eq 2 ]]'
err=$("$fraglab" replay "$work/p.trace" -p tree_best --capacity 0 -o "$work/zero.csv" 2>&1); rc=$?
expect "a capacity of 0 is refused, not read as unlimited nor run to a table of failures" \
  '[[ $rc -eq 2 && $err == *"--capacity: expected at least one byte, got 0"* && ! -e $work/zero.csv ]]'
"$fraglab" replay "$work/missing.trace" -p tree_best >/dev/null 2>&1; rc=$?
expect "missing trace exits non-zero" '[[ $rc -ne 0 ]]'

out=$("$fraglab" replay "$work/p.trace" -p tree_best --backend simulated --capacity 64KiB --format csv)
failed_allocs=$(echo "$out" | awk -F, 'NR==2{print $6}')
expect "a small capacity makes allocations fail" '[[ $failed_allocs -gt 0 ]]'
# A CUDA backend where no device can serve it (this machine) or fraglab was built without
# the toolkit: the reason, a non-zero exit, and no output file.
err=$("$fraglab" replay "$work/p.trace" -p tf_bfc --backend cuda -o "$work/cuda.csv" 2>&1); rc=$?
if [[ $rc -eq 0 ]]; then
  expect "a CUDA backend replays where there is a device" '[[ -s $work/cuda.csv ]]'
else
  expect "a CUDA backend without a device says why" \
    '[[ $err == *"backend cuda: "* && ( $err == *cudaGetDeviceCount* || $err == *"CUDA Toolkit"* ) && ! -e $work/cuda.csv ]]'
fi
err=$("$fraglab" replay "$work/p.trace" -p tf_bfc --backend floppy 2>&1); rc=$?
expect "an unknown backend lists the known ones" '[[ $rc -eq 2 && $err == *"known: simulated, heap, host, cuda, cuda_async, cuda_vmm, cuda_pinned"* ]]'
out=$("$fraglab" replay "$work/p.trace" -p 'compose:index=ao_tree,fit=next,coalesce=deferred' --format csv)
expect "compose specs run" '[[ $out == *compose:index=ao_tree* ]]'

out=$("$fraglab" replay "$work/p.trace" -p pytorch_caching,bins_best --backend simulated --format csv)
expect "presets replay beside compositions on one backend" \
  '[[ $(echo "$out" | grep -c pytorch_caching) -eq 1 && $(echo "$out" | tail -n +2 | grep -c ,simulated,) -eq 2 ]]'
err=$("$fraglab" replay "$work/p.trace" -p tf_bfc,pytorch_caching,tlsf,best_fit -o "$work/mixed.csv" 2>&1); rc=$?
expect "policies of different default backends are refused, with the choice spelled out, and no file is made" \
  '[[ $rc -eq 2 && $err == *"heap for tlsf best_fit; simulated for tf_bfc pytorch_caching"* && $err == *"give --backend heap or --backend simulated"* && ! -e $work/mixed.csv ]]'
out=$("$fraglab" replay "$work/p.trace" -p tlsf,best_fit --repeat 0 --format csv)
expect "every row names its backend, its granularity and the parameters it ran with" \
  '[[ $(echo "$out" | head -1) == *,backend,granularity,parameters && $(echo "$out" | grep -c ",heap,4096,quantum=16 ") -eq 2 && $out == *"sli=5 linear_limit=256"* ]]'
# --set and --vary apply to the policies that read the key; a key none reads is refused.
csv=$("$fraglab" replay "$work/p.trace" -p tf_bfc,pytorch_caching --set split_ratio=4 --repeat 0 --format csv 2>"$work/note")
expect "--set of a key one policy reads applies to it alone, and says so" \
  '[[ $(grep -c "split_ratio=4" <<<"$csv") -eq 1 && $(grep tf_bfc <<<"$csv") == *split_ratio=4* && $(cat "$work/note") == *"--set split_ratio applies to tf_bfc only; pytorch_caching does not read it"* ]]'
out=$("$fraglab" sweep "$work/p.trace" -p tf_bfc,pytorch_caching --vary split_ratio=1,2 --vary max_split_size_mb=64,256 --repeat 0 --format csv 2>/dev/null); rc=$?
expect "a scoped --vary over two presets runs each over the axes it reads (2 + 2 cells)" \
  '[[ $rc -eq 0 && $(tail -n +2 <<<"$out" | cut -d, -f3-5 | paste -sd" ") == "tf_bfc,1, tf_bfc,2, pytorch_caching,,64 pytorch_caching,,256" ]]'
err=$("$fraglab" sweep "$work/p.trace" -p tf_bfc,pytorch_caching --vary sli=3,4 2>&1); rc=$?
expect "a --vary key no policy reads is refused, naming the policies" '[[ $rc -eq 2 && $err == *"--vary sli: no policy of this run reads it (tf_bfc, pytorch_caching"* ]]'
# A policy's own settings and a label in -p.
out=$("$fraglab" replay "$work/p.trace" -p tlsf,tlsf:sli=3,linear_limit=64@coarse,compose:index=tree,fit=best,quantum=64@tree64 --repeat 0 --format csv); rc=$?
expect "-p NAME:KEY=VALUE,...@LABEL runs the policy with its own settings under its label" \
  '[[ $rc -eq 0 && $(tail -n +2 <<<"$out" | cut -d, -f2 | paste -sd" ") == "tlsf coarse tree64" && $(grep ^p.trace,coarse, <<<"$out") == *"sli=3 linear_limit=64"* && $(grep ^p.trace,tree64, <<<"$out") == *quantum=64* ]]'
err=$("$fraglab" replay "$work/p.trace" -p tlsf:sli=3 --set sli=4 2>&1); rc=$?
expect "a key set both in -p and by --set is refused" '[[ $rc -eq 2 && $err == *"sli is set both in policy"* ]]'
err=$("$fraglab" replay "$work/p.trace" -p tlsf@a,best_fit@a 2>&1); rc=$?
expect "two policies of one label are refused" '[[ $rc -eq 2 && $err == *"two policies are labelled a"* ]]'
err=$("$fraglab" replay "$work/p.trace" -p best_fit --set sli=4 2>&1); rc=$?
expect "an index's key is refused for a policy whose index does not read it" '[[ $rc -eq 2 && $err == *"sli: no policy of this run reads it"* ]]'
out=$("$fraglab" policies tf_bfc); rc=$?
expect "policies tf_bfc prints its parts, backend and effective parameters (TF's 128 MiB rule, split at 2x)" \
  '[[ $rc -eq 0 && $out == *"policies/presets/tf_bfc.hpp"* && $out == *"simulated by default (granularity 256 B"* && $out =~ max_internal_fragmentation\ +128MiB && $out =~ split_ratio\ +2 && $out != *mmap_threshold* ]]'
err=$("$fraglab" replay "$work/p.trace" -p tlfs 2>&1); rc=$?
expect "a mistyped policy gets a suggestion" '[[ $rc -eq 2 && $err == *"did you mean tlsf?"* ]]'
err=$("$fraglab" replay "$work/p.trace" -p pytorch_caching --set max_split_size=64MiB 2>&1); rc=$?
expect "max_split_size given to PyTorch points to max_split_size_mb" '[[ $rc -eq 2 && $err == *"did you mean max_split_size_mb?"* ]]'
err=$("$fraglab" replay "$work/p.trace" -p best_fit:max_split_size_mb=64 2>&1); rc=$?
expect "max_split_size_mb given to a composition points to max_split_size, in bytes" '[[ $rc -eq 2 && $err == *"which reads max_split_size (in bytes) instead"* ]]'
err=$("$fraglab" replay "$work/p.trace" -p tlsf --set quantun=32 2>&1); rc=$?
expect "a mistyped key gets a suggestion" '[[ $rc -eq 2 && $err == *"did you mean quantum?"* ]]'
err=$("$fraglab" replya "$work/p.trace" 2>&1); rc=$?
expect "a mistyped command gets a suggestion" '[[ $rc -eq 2 && $err == *"did you mean replay?"* ]]'
# Bash completion asks fraglab itself, so it offers what the commands define.
complete_words() {  # WORD...: what completing the last word offers
  bash -c 'source <("$1" completion bash) 2>/dev/null; shift; COMP_WORDS=("$@"); COMP_CWORD=$(($# - 1)); _fraglab 2>/dev/null; echo "${COMPREPLY[*]}"' _ "$fraglab" "$fraglab" "$@"
}
expect "completion offers commands, a command's options, policies in a list and parameter keys" \
  '[[ $(complete_words sw) == sweep && $(complete_words sweep --va) == --vary && $(complete_words replay x -p best_fit,tl) == "best_fit,tlsf" && $(complete_words replay x --set split_r) == split_ratio= ]]'
out=$("$fraglab" help sweep); rc=$?
expect "help COMMAND is COMMAND --help, with examples" '[[ $rc -eq 0 && $out == *"fraglab sweep run.trace"* && $out == *--vary* ]]'
# The table a reader sees: the columns that matter, in units, within 120 columns.
"$fraglab" gen phases --seed 1 -o "$work/phases.trace" 2>/dev/null
"$fraglab" gen random --seed 1 -o "$work/random.trace" 2>/dev/null
out=$("$fraglab" replay "$work/phases.trace" "$work/random.trace" --backend heap \
  -p first_fit,next_fit,best_fit,worst_fit,buddy,segregated_pow2,dlmalloc,tlsf,tf_bfc,pytorch_caching)
widest=$(awk '{ if (length($0) > w) w = length($0) } END { print w }' <<<"$out")
expect "the README's main table fits 120 columns ($widest) and reads in units" \
  '[[ $widest -le 120 && $(head -1 <<<"$out") == "trace"*"policy"*"backend"*"peak live"*"peak reserved"*"frag4"*"ext frag"*"failed"*"ns/op" && $out == *" MiB"* && $out == *"%"* && $(sed -n 2p <<<"$out") == *" heap "* ]]'
out=$("$fraglab" replay "$work/p.trace" -p tlsf,best_fit,buddy --repeat 0 --sort frag4:desc --columns policy,frag4 --format csv)
expect "--sort and --columns pick and order the rows and columns" \
  '[[ $(head -1 <<<"$out") == policy,frag4 && $(tail -n +2 <<<"$out" | cut -d, -f2 | sort -rn | paste -sd" ") == "$(tail -n +2 <<<"$out" | cut -d, -f2 | paste -sd" ")" ]]'
out=$("$fraglab" replay "$work/p.trace" -p tlsf --repeat 0 --explain)
expect "--explain adds a legend of the columns shown" '[[ $out == *"frag4  "*"peak reserved / peak live - 1"* && $out != *ns_per_op* ]]'
out=$("$fraglab" replay "$work/p.trace" -p tlsf --repeat 0 --all)
expect "--all shows every column raw" '[[ $(head -1 <<<"$out") == trace*policy*events*ns_per_op*backend*granularity*parameters ]]'
err=$("$fraglab" replay "$work/p.trace" -p tlsf --repeat 0 --sort frag5 2>&1); rc=$?
expect "--sort of no column is refused with a suggestion" '[[ $rc -eq 2 && $err == *"did you mean frag"* ]]'
"$fraglab" replay "$work/p.trace" -p pytorch_caching --set split_ratio=2 >/dev/null 2>&1; rc=$?
expect "a composition key given to a preset exits 2" '[[ $rc -eq 2 ]]'
err=$("$fraglab" replay "$work/p.trace" -p tlsf --backend host --set device_memory_fraction=0.5 2>&1); rc=$?
expect "a CUDA backend's key over host memory exits 2, naming who reads it" \
  '[[ $rc -eq 2 && $err == *"device_memory_fraction applies to the device backends"* ]]'
# Counts are parsed strictly: Boost's own unsigned parsing read --repeat -1 as 4294967295.
err=$(timeout 60 "$fraglab" replay "$work/p.trace" -p tlsf --repeat -1 2>&1); rc=$?
expect "--repeat -1 exits 2 at once, not four billion runs later" '[[ $rc -eq 2 && $err == *"--repeat: expected a whole number, got '"'"'-1'"'"'"* ]]'
err=$("$fraglab" replay "$work/p.trace" -p tlsf --repeat 4294967296 2>&1); rc=$?
expect "--repeat beyond an unsigned exits 2" '[[ $rc -eq 2 && $err == *"--repeat: expected at most 4294967295"* ]]'
for cmd in "replay $work/p.trace -p tlsf" "sweep $work/p.trace -p tlsf --vary sli=3,4" "capacity $work/p.trace -p tlsf"; do
  err=$(timeout 60 "$fraglab" $cmd --jobs 0 2>&1); rc=$?
  expect "${cmd%% *} --jobs 0 exits 2" '[[ $rc -eq 2 && $err == *"--jobs: expected at least 1, got 0"* ]]'
  err=$(timeout 60 "$fraglab" $cmd -j -1 2>&1); rc=$?
  expect "${cmd%% *} -j -1 exits 2" '[[ $rc -eq 2 && $err == *"--jobs: expected a whole number"* ]]'
done

out=$("$fraglab" dump "$work/p.trace" -p tf_bfc --at peak); rc=$?
expect "dump prints TF's memory log" '[[ $rc -eq 0 && $out == *"Bin (256): "*"Chunks in use"* && $out == *"InUse at 0x"* && $out == *"Occupancy:"* ]]'
out=$("$fraglab" dump "$work/p.trace" -p pytorch_caching --at 100 --set max_split_size_mb=64); rc=$?
expect "dump prints PyTorch's memory_stats" '[[ $rc -eq 0 && $out == *"after 100 of"* && $out == *inactive_split_bytes* && $out == *num_alloc_retries* ]]'
"$fraglab" dump "$work/p.trace" -p tf_bfc --at soon >/dev/null 2>&1; rc=$?
expect "dump --at rejects a bad point" '[[ $rc -eq 2 ]]'
events=$("$fraglab" info "$work/p.trace" | sed -n 's/^events: //p')
out=$("$fraglab" dump "$work/p.trace" -p tf_bfc --at "$events" | head -1)
expect "dump --at the trace's last event dumps there" '[[ $out == *"after $events of $events events"* ]]'
err=$("$fraglab" dump "$work/p.trace" -p tf_bfc --at $((events + 1)) 2>&1); rc=$?
expect "dump --at past the trace's end is refused with the trace's length" '[[ $rc -eq 2 && $err == *"--at: $((events + 1)) events, but p.trace has $events"* ]]'
err=$("$fraglab" dump "$work/p.trace" -p pytorch_caching --set max_split_size_mb=20 2>&1); rc=$?
expect "max_split_size_mb <= 20 is refused as PyTorch does" '[[ $rc -eq 2 && $err == *"greater than 20"* ]]'
"$fraglab" replay "$work/p.trace" -p pytorch_caching --set garbage_collection_threshold=0.6 >/dev/null 2>&1; rc=$?
expect "garbage_collection_threshold without a memory fraction is refused" '[[ $rc -eq 2 ]]'
"$fraglab" replay "$work/p.trace" -p pytorch_caching --capacity 80GiB \
  --set per_process_memory_fraction=0.5 --set garbage_collection_threshold=0.6 >/dev/null; rc=$?
expect "garbage_collection_threshold with a memory fraction runs" '[[ $rc -eq 0 ]]'

out=$("$fraglab" info "$work/p.trace" "$work/p.trace" --format json 2>&1); rc=$?
expect "info refuses one trace given twice" '[[ $rc -eq 2 ]]'
"$fraglab" info "$work/p.trace" -o "$work/info.json"; rc=$?
expect "info --format json (here from -o's extension): one object per trace with every statistic" \
  '[[ $rc -eq 0 ]] && /usr/bin/python3 -c "import json,sys; r=json.load(open(sys.argv[1])); assert len(r)==1 and r[0][\"format\"]==\"native text\" and r[0][\"events\"]>0" "$work/info.json"'
printf 'a 1 100\na 2 50\nf 1\n' > "$work/chunks.trace"
out=$("$fraglab" dump "$work/chunks.trace" -p first_fit --format csv 2>&1); rc=$?
expect "dump --format csv lists the chunks" '[[ $rc -eq 0 && $(head -1 <<<"$out") == address,size,requested,in_use,stream,region,pool && $(tail -n +2 <<<"$out" | cut -d, -f2-4 | paste -sd" ") == "112,0,0 64,50,1 3920,0,0" ]]'
out=$("$fraglab" info "$work/p.trace"); rc=$?
expect "info prints key: value statistics" '[[ $rc -eq 0 && $out == *"events: "* && $out == *"peak_live_bytes: "* && $out == *"size_median: "* && $out == *"lifetime_median_events: "* ]]'
printf 'a 1 100\na 2 50\nf 1\na 3 70\n' > "$work/tiny.trace"
out=$("$fraglab" info "$work/tiny.trace")
expect "info counts peak live bytes and blocks never freed" '[[ $out == *"peak_live_bytes: 150"* && $out == *"never_freed: 2"* ]]'

grid=(-p tf_bfc,best_fit --backend simulated --vary split_ratio=1,2,4 --vary max_internal_fragmentation=128MiB,1KiB --set memory_limit=1GiB --format csv)
"$fraglab" sweep "$work/p.trace" "${grid[@]}" -o "$work/sweep1.csv"; rc=$?
header=$(head -1 "$work/sweep1.csv")
expect "sweep adds a column per varied key" '[[ $rc -eq 0 && $header == cell,trace,policy,split_ratio,max_internal_fragmentation,events,* ]]'
expect "sweep runs every cell of the grid" '[[ $(wc -l < "$work/sweep1.csv") -eq 13 ]]'
"$fraglab" sweep "$work/p.trace" "${grid[@]}" --jobs 2 -o "$work/sweep2.csv"
expect "sweep --jobs 2 gives the rows of --jobs 1" 'cmp -s <(cut -d, -f1-18 "$work/sweep1.csv") <(cut -d, -f1-18 "$work/sweep2.csv")'
"$fraglab" sweep "$work/p.trace" "${grid[@]}" --warm -o "$work/sweep3.csv"
expect "sweep --warm gives the rows of a fresh sweep" 'cmp -s <(cut -d, -f1-18 "$work/sweep1.csv") <(cut -d, -f1-18 "$work/sweep3.csv")'
for i in 1 2 3; do "$fraglab" sweep "$work/p.trace" "${grid[@]}" --shard $i/3 -o "$work/part$i.csv"; done
"$fraglab" merge "$work/part3.csv" "$work/part1.csv" "$work/part2.csv" --format csv -o "$work/merged.csv"; rc=$?
expect "merge joins the shards into the unsharded table" '[[ $rc -eq 0 ]] && cmp -s <(cut -d, -f1-18 "$work/sweep1.csv") <(cut -d, -f1-18 "$work/merged.csv")'
err=$("$fraglab" merge "$work/part1.csv" "$work/part3.csv" 2>&1); rc=$?
expect "merge refuses a missing shard" '[[ $rc -eq 2 && $err == *"is missing"* ]]'
err=$("$fraglab" merge "$work/part1.csv" "$work/part1.csv" 2>&1); rc=$?
expect "merge refuses a duplicated cell with FILE:LINE" '[[ $rc -eq 2 && $err == *part1.csv:2:*appears\ twice* ]]'
expect "a shard's part names its sweep and the sweep's cell count" '[[ $(head -1 "$work/part1.csv") == *,sweep_cells,sweep_id && $(sed -n 2p "$work/part1.csv") == *,12,???????????????? ]]'
expect "merge drops the parts' sweep columns" '[[ $(head -1 "$work/merged.csv") == "$(head -1 "$work/sweep1.csv")" ]]'
pair=(-p tf_bfc --vary split_ratio=1,2 --repeat 0 --format csv)
"$fraglab" sweep "$work/p.trace" "${pair[@]}" --shard 1/2 -o "$work/pair1.csv"
err=$("$fraglab" merge "$work/pair1.csv" 2>&1); rc=$?
expect "merge refuses parts without the last shard's cells" '[[ $rc -eq 2 && $err == *"cell 1 of the sweep'"'"'s 2 is missing"* ]]'
"$fraglab" sweep "$work/p.trace" "${pair[@]}" --shard 2/2 --set memory_limit=1GiB -o "$work/pair2.csv"
err=$("$fraglab" merge "$work/pair1.csv" "$work/pair2.csv" 2>&1); rc=$?
expect "merge refuses the parts of two different sweeps" '[[ $rc -eq 2 && $err == *pair2.csv:2:*"another sweep than"*pair1.csv:2* ]]'
err=$("$fraglab" merge "$work/sweep1.csv" 2>&1); rc=$?
expect "merge refuses a CSV that is not a shard's part" '[[ $rc -eq 2 && $err == *sweep1.csv:1:*sweep_cells* ]]'
err=$("$fraglab" merge "$work" 2>&1); rc=$?
expect "merge refuses a directory as a part" '[[ $rc -eq 2 && $err == *"a directory; expected a CSV part of a sharded run"* ]]'
{ head -1 "$work/pair1.csv"; tail -n +2 "$work/pair1.csv" | sed $'1s/^0,/\x1b[2J,/'; } > "$work/badcell.csv"
err=$("$fraglab" merge "$work/badcell.csv" 2>&1); rc=$?
expect "merge quotes a bad field, control bytes escaped" '[[ $rc -eq 2 && $err == *badcell.csv:2:*"a cell number, got '"'"'\x1b[2J'"'"'"* ]]'
"$fraglab" sweep "$work/p.trace" -p best_fit --vary split_ratio=0.5 >/dev/null 2>&1; rc=$?
expect "sweep rejects a bad grid value before running" '[[ $rc -eq 2 ]]'
err=$("$fraglab" sweep "$work/p.trace" -p tlsf --vary sli=3 --vary sli=4 --repeat 0 2>&1); rc=$?
expect "sweep refuses one key on two axes, whose first column would report values that never ran" \
  '[[ $rc -eq 2 && $err == *"--vary: sli is given twice"* ]]'
err=$("$fraglab" replay "$work/p.trace" -p , 2>&1); rc=$?
expect "-p naming no policy exits 2, not an empty table" '[[ $rc -eq 2 && $err == *"no policy given"* ]]'
"$fraglab" sweep "$work/p.trace" "${grid[@]}" --shard 4/3 >/dev/null 2>&1; rc=$?
expect "sweep rejects a bad shard" '[[ $rc -eq 2 ]]'

# --shard slurm: the shard from the array task's place among the array's ids (the variables
# Slurm sets in each task), as docs/cluster.md's job script uses it.
slurm_task() {  # ID MIN MAX COUNT STEP, then the command: run as that task of a Slurm array
  local id=$1 least=$2 most=$3 count=$4 step=$5
  shift 5
  env SLURM_JOB_ID=77 SLURM_ARRAY_JOB_ID=70 SLURM_ARRAY_TASK_ID="$id" SLURM_ARRAY_TASK_MIN="$least" \
    SLURM_ARRAY_TASK_MAX="$most" SLURM_ARRAY_TASK_COUNT="$count" ${step:+SLURM_ARRAY_TASK_STEP="$step"} "$@"
}
for i in 0 1 2; do slurm_task $i 0 2 3 1 "$fraglab" sweep "$work/p.trace" "${grid[@]}" --shard slurm -o "$work/slurm$i.csv"; done
expect "--shard slurm in task i of an array 0-2 is --shard i+1/3" \
  'cmp -s "$work/slurm0.csv" "$work/part1.csv" && cmp -s "$work/slurm1.csv" "$work/part2.csv" && cmp -s "$work/slurm2.csv" "$work/part3.csv"'
slurm_task 4 1 7 3 "" "$fraglab" sweep "$work/p.trace" "${grid[@]}" --shard slurm --list-cells > "$work/stepped.csv"
expect "an array 1-7:3 without SLURM_ARRAY_TASK_STEP: task 4 is the second of three" \
  '[[ $(cut -d, -f1 "$work/stepped.csv" | tr "\n" " ") == "cell 1 4 7 10 " ]]'
slurm_task 7 1 7 3 3 "$fraglab" sweep "$work/p.trace" "${grid[@]}" --shard slurm --list-cells > "$work/stepped.csv"
expect "an array 1-7:3: task 7 is the third of three" '[[ $(cut -d, -f1 "$work/stepped.csv" | tr "\n" " ") == "cell 2 5 8 11 " ]]'
err=$(slurm_task 4 1 5 3 1 "$fraglab" sweep "$work/p.trace" "${grid[@]}" --shard slurm -o "$work/uneven.csv" 2>&1); rc=$?
expect "an array of ids not evenly spaced (1,4,5) is refused, and no file is made" \
  '[[ $rc -eq 2 && $err == *"task 4 of an array of 3 tasks from 1 to 5"*"not evenly spaced"* && ! -e $work/uneven.csv ]]'
err=$(env -u SLURM_ARRAY_TASK_ID SLURM_JOB_ID=12 "$fraglab" sweep "$work/p.trace" "${grid[@]}" --shard slurm 2>&1); rc=$?
expect "--shard slurm in a Slurm job that is no array is refused, naming the job" \
  '[[ $rc -eq 2 && $err == *"SLURM_ARRAY_TASK_ID is not set: Slurm job 12 is not an array job"* ]]'
err=$(env -u SLURM_ARRAY_TASK_ID -u SLURM_JOB_ID "$fraglab" replay "$work/p.trace" -p tlsf --shard slurm 2>&1); rc=$?
expect "--shard slurm outside Slurm is refused, saying what to do" \
  '[[ $rc -eq 2 && $err == *"this is not a Slurm job; submit it with sbatch --array=0-N"*"or give --shard I/N"* ]]'
err=$(slurm_task 2 0 3 4 1 env SLURM_ARRAY_TASK_MAX=x "$fraglab" replay "$work/p.trace" -p tlsf --shard slurm 2>&1); rc=$?
expect "a Slurm variable that is no number is named" '[[ $rc -eq 2 && $err == *"expected a whole number in SLURM_ARRAY_TASK_MAX, got '"'"'x'"'"'"* ]]'
err=$(slurm_task 2 0 3 4 1 "$fraglab" replay "$work/no-such.trace" -p tlsf --shard slurm 2>&1); rc=$?
expect "a task's bad trace is still named, the shard being sound" '[[ $rc -eq 2 && $err == *"no-such.trace"* ]]'

# --list-cells: what a cluster job must be sized for, without running anything.
out=$("$fraglab" sweep "$work/p.trace" "${grid[@]}" --list-cells); rc=$?
expect "sweep --list-cells lists every cell with its trace's events" \
  '[[ $rc -eq 0 && $(head -1 <<<"$out") == cell,trace,policy,split_ratio,max_internal_fragmentation,events && $(wc -l <<<"$out") -eq 13 ]]'
out=$("$fraglab" sweep "$work/p.trace" "${grid[@]}" --list-cells --shard 2/5)
expect "with --shard, only that shard's cells" '[[ $(cut -d, -f1 <<<"$out" | tr "\n" " ") == "cell 1 6 11 " ]]'
out=$("$fraglab" replay "$work/p.trace" "$work/tiny.trace" -p tlsf,best_fit --list-cells)
expect "replay --list-cells lists its (trace, policy) pairs as a table" \
  '[[ $(head -1 <<<"$out") == "cell  trace       policy    events" && $(wc -l <<<"$out") -eq 5 && $(tail -1 <<<"$out") == *"3  tiny.trace  best_fit"* ]]'

# replay --shard: (trace, policy) pairs as cells; merged parts are the unsharded table.
rgrid=("$work/p.trace" "$work/tiny.trace" -p tlsf,best_fit,tf_bfc --backend heap --repeat 0 --format csv)
"$fraglab" replay "${rgrid[@]}" -o "$work/replay-whole.csv"
for i in 1 2 4; do "$fraglab" replay "${rgrid[@]}" --shard $i/4 -o "$work/rpart$i.csv"; done
expect "a replay's part starts with its cells and ends with replay_cells and replay_id" \
  '[[ $(head -1 "$work/rpart2.csv") == cell,trace,policy,*,replay_cells,replay_id && $(sed -n 2p "$work/rpart2.csv") == 1,*,6,???????????????? ]]'
err=$("$fraglab" merge "$work/rpart1.csv" "$work/rpart2.csv" "$work/rpart4.csv" 2>&1); rc=$?
expect "merge refuses a replay without shard 3" '[[ $rc -eq 2 && $err == *"cell 2 of the replay'"'"'s 6 is missing"* ]]'
"$fraglab" replay "${rgrid[@]}" --shard 3/4 -o "$work/rpart3.csv"
"$fraglab" merge "$work"/rpart{4,2,3,1}.csv -o "$work/replay-merged.csv"; rc=$?
expect "merged replay parts are the unsharded replay's table, without the cell column" \
  '[[ $rc -eq 0 ]] && cmp -s "$work/replay-whole.csv" "$work/replay-merged.csv"'
err=$("$fraglab" merge "$work/rpart1.csv" "$work/part2.csv" 2>&1); rc=$?
expect "merge refuses a sweep's part among a replay's" '[[ $rc -eq 2 && $err == *part2.csv:1:*"header differs"* ]]'
"$fraglab" replay "${rgrid[@]}" --strict --shard 3/4 -o "$work/rstrict3.csv"
err=$("$fraglab" merge "$work"/rpart{1,2,4}.csv "$work/rstrict3.csv" 2>&1); rc=$?
expect "a part run under other replay options is another replay's" '[[ $rc -eq 2 && $err == *rstrict3.csv:2:*"another replay than"* ]]'

out=$("$fraglab" capacity "$work/tiny.trace" -p first_fit,pytorch_caching --backend heap --format csv); rc=$?
expect "capacity finds the smallest serving capacity to the granularity" \
  '[[ $rc -eq 0 && $out == *"tiny.trace,first_fit,4096,4096,4096,"* && $out == *"tiny.trace,pytorch_caching,2097152,"* ]]'
out=$("$fraglab" capacity "$work/p.trace" -p tf_bfc --format csv | tail -1)
min=$(echo "$out" | cut -d, -f3)
one_less=$("$fraglab" replay "$work/p.trace" -p tf_bfc --capacity $((min - 256)) --format csv | tail -1 | cut -d, -f6)
served=$("$fraglab" replay "$work/p.trace" -p tf_bfc --capacity "$min" --format csv | tail -1 | cut -d, -f6)
expect "capacity is exact: one granule less fails ($min)" '[[ $one_less -gt 0 && $served -eq 0 ]]'

# -o names its format by its extension, as gen's does; --format may agree, never contradict.
"$fraglab" replay "$work/p.trace" -p tlsf --repeat 0 -o "$work/by-extension.csv"; rc=$?
expect "-o out.csv writes CSV without --format" '[[ $rc -eq 0 && $(head -1 "$work/by-extension.csv") == trace,policy,events,* ]]'
"$fraglab" replay "$work/p.trace" -p tlsf --repeat 0 -o "$work/by-extension.json"; rc=$?
expect "-o out.json writes JSON" '[[ $rc -eq 0 ]] && /usr/bin/python3 -c "import json,sys; json.load(open(sys.argv[1]))" "$work/by-extension.json"'
err=$("$fraglab" replay "$work/p.trace" -p tlsf --repeat 0 --format json -o "$work/contradiction.csv" 2>&1); rc=$?
expect "--format json with -o out.csv is refused before any work, and no file is made" \
  '[[ $rc -eq 2 && $err == *"--format json contradicts -o"* && ! -e $work/contradiction.csv ]]'
parts=$("$fraglab" sweep "$work/p.trace" -p tlsf --vary sli=4,5 --repeat 0 --shard 1/1 -o "$work/one-part.csv" && head -1 "$work/one-part.csv")
expect "a sweep part written to .csv is CSV, as merge needs" '[[ $parts == cell,* ]]'

# TF's own GPU BFC test ExerciseCoalescing (gpu_bfc_allocator_test.cc), from its documented
# expectations: under a 1 GiB limit and TF's GPU defaults (one region of the whole limit),
# 1,024 rounds of four allocations freed again peak at the sum of the four (TF's
# peak_bytes_in_use), and coalescing gives the first allocation's address back at the end.
/usr/bin/python3 -c '
lines = ["a 0 4096", "f 0"]
for i in range(1024):
    b = 1 + 4 * i
    lines += ["a %d 4096" % b, "a %d 8388608" % (b + 1), "a %d 16384" % (b + 2), "a %d 41943040" % (b + 3)]
    lines += ["f %d" % (b + j) for j in range(4)]
print("\n".join(lines + ["a 99999 4096"]))' > "$work/coalescing.trace"
out=$("$fraglab" dump "$work/coalescing.trace" -p tf_bfc --capacity 1GiB --style tf); rc=$?
expect "tf_bfc under a memory limit is TF's GPU allocator: ExerciseCoalescing's stats and first pointer" \
  '[[ $rc -eq 0 && $out == *"MaxInUse:         50352128"* && $out == *"NumAllocs:        4098"* &&
     $out == *"MaxAllocSize:     41943040"* && $out == *"InUse at 0x10000000000 of size 4096"* &&
     $out == *"PeakReserved:     1073741824"* ]]'
out=$("$fraglab" dump "$work/coalescing.trace" -p tf_bfc --capacity 1GiB --set allow_growth=true --style tf)
expect "tf_bfc with allow_growth=true (the research setting) grows regions instead" \
  '[[ $out != *"MaxInUse:         50352128"* && $out != *"PeakReserved:     1073741824"* ]]'

# TF's TestCustomMemoryLimit: under a 2 MiB limit, 256 B is served and 4 MiB is not.
printf 'a 1 256\na 2 4194304\n' > "$work/limit.trace"
out=$("$fraglab" replay "$work/limit.trace" -p tf_bfc --capacity 2MiB --repeat 0 --format csv | tail -1 | cut -d, -f4,6,7)
expect "tf_bfc under a 2 MiB limit serves 256 B and refuses 4 MiB (TestCustomMemoryLimit)" '[[ $out == "1,1,256" ]]'

# The bar for pytorch_caching: every decision PyTorch recorded, where the shared traces exist.
snapshots=${FRAGLAB_SHARED_TRACES:-/nonexistent}/pytorch
if [[ -d $snapshots ]]; then
  for snap in "$snapshots"/*.pickle; do
    out=$("$fraglab" verify "$snap" -p pytorch_caching); rc=$?
    addr=$(echo "$out" | sed -n 's/^addresses matched: //p')
    segs=$(echo "$out" | sed -n 's/^segments matched: //p')
    expect "verify $(basename "$snap"): all addresses ($addr)" '[[ $rc -eq 0 && -n $addr && ${addr%/*} == "${addr#*/}" ]]'
    expect "verify $(basename "$snap"): all segments ($segs)" '[[ -n $segs && ${segs%/*} == "${segs#*/}" ]]'
  done
else
  echo "SKIP: $snapshots not found; the PyTorch snapshot comparison needs the shared traces (FRAGLAB_SHARED_TRACES, set by meson test)"
fi
host=${FRAGLAB_SHARED_TRACES:-/nonexistent}/host
if [[ -d $host ]]; then
  policies=$("$fraglab" policies --names | paste -sd, -)
  out=$("$fraglab" replay "$host"/*.csv -p "$policies" --backend simulated --format csv); rc=$?
  rows=$(echo "$out" | tail -n +2 | wc -l)
  expected=$(( $(ls "$host"/*.csv | wc -l) * $(echo "$policies" | tr , '\n' | wc -l) ))
  expect "host traces replay under every policy ($rows rows)" '[[ $rc -eq 0 && $rows -eq $expected && $rows -gt 0 ]]'
  expect "host replays serve every allocation" '[[ -z $(echo "$out" | awk -F, '"'"'NR>1 && $6!=0'"'"') ]]'
else
  echo "SKIP: $host not found; the host trace replay needs the shared traces (FRAGLAB_SHARED_TRACES, set by meson test)"
fi
# The native binary format: convert between every writable format, replay streamed.
"$fraglab" convert "$work/p.trace" "$work/p.fbin" 2>/dev/null; rc=$?
expect "convert writes the native binary format" '[[ $rc -eq 0 && $(head -c 7 "$work/p.fbin") == FLTRACE ]]'
expect "native binary is smaller than text" '[[ $(stat -c %s "$work/p.fbin") -lt $(( $(stat -c %s "$work/p.trace") / 2 )) ]]'
"$fraglab" convert "$work/p.fbin" "$work/p.csv" 2>/dev/null && "$fraglab" convert "$work/p.csv" "$work/p.txt" --to text 2>/dev/null &&
  "$fraglab" convert "$work/p.txt" "$work/p3.fbin" 2>/dev/null
expect "binary -> RMM CSV -> text -> binary gives the same bytes" 'cmp -s "$work/p.fbin" "$work/p3.fbin"'
out=$("$fraglab" info "$work/p.fbin")
expect "info reads native binary" '[[ $out == *"format: native binary"* && $out == *"peak_live_bytes: "* ]]'
"$fraglab" replay "$work/p.trace" -p tf_bfc,tlsf,dlmalloc --backend heap --format csv | tail -n +2 | cut -d, -f2-21 > "$work/text.rows"
"$fraglab" replay "$work/p.fbin" -p tf_bfc,tlsf,dlmalloc --backend heap --format csv --timeseries "$work/ts.csv" 2> "$work/stderr" |
  tail -n +2 | cut -d, -f2-21 > "$work/binary.rows"
expect "replay from binary equals replay from text" '[[ -s $work/text.rows ]] && cmp -s "$work/text.rows" "$work/binary.rows"'
expect "no progress bar when stderr is not a terminal" '[[ ! -s $work/stderr ]]'
expect "--timeseries writes the columns" \
  '[[ $(head -1 "$work/ts.csv") == trace,policy,event,live_bytes,allocated_bytes,reserved_bytes,largest_free_bytes,free_chunks,max_live_bytes,max_reserved_bytes ]]'
events=$(awk -F, 'NR==2{print $3}' "$work/r.csv")
last=$(awk -F, '$2=="tlsf"{e=$3} END{print e}' "$work/ts.csv")
expect "the time series ends at the last event ($last of $events)" '[[ -n $last && $last -eq $events ]]'
expect "the time series has at most 4096 samples a replay" '[[ $(grep -c ",tlsf," "$work/ts.csv") -le 4096 ]]'
if command -v script >/dev/null; then
  out=$(script -qec "'$fraglab' replay '$work/p.fbin' -p tree_best --repeat 20 -o '$work/tty.csv'" /dev/null)
  expect "a progress bar on a terminal" '[[ $out == *"] "*"% "*" events"* ]]'
fi
plot=$(dirname "$0")/../../experiments/scripts/reproduce/plot.py
if /usr/bin/python3 -c 'import matplotlib' 2>/dev/null; then
  /usr/bin/python3 "$plot" sweep "$work/sweep1.csv" -x split_ratio -y frag4 -o "$work/sweep.png"; rc=$?
  expect "plot.py draws a sweep as PNG" '[[ $rc -eq 0 && $(head -c 4 "$work/sweep.png" | tail -c 3) == PNG ]]'
  /usr/bin/python3 "$plot" timeseries "$work/ts.csv" -o "$work/ts1.svg" && /usr/bin/python3 "$plot" timeseries "$work/ts.csv" -o "$work/ts2.svg"
  expect "plot.py draws a time series as SVG, identical from run to run" '[[ -s $work/ts1.svg ]] && cmp -s "$work/ts1.svg" "$work/ts2.svg"'
  /usr/bin/python3 "$plot" bars "$work/r.csv" -y frag4 -o "$work/bars.png"; rc=$?
  expect "plot.py draws a replay table as bars" '[[ $rc -eq 0 && -s $work/bars.png ]]'
  err=$(/usr/bin/python3 "$plot" sweep "$work/sweep1.csv" -x no_such_key -y frag4 -o "$work/never.png" 2>&1); rc=$?
  expect "plot.py names a missing column with FILE:LINE" '[[ $rc -eq 2 && $err == *sweep1.csv:1:*no_such_key* && ! -e $work/never.png ]]'
  "$fraglab" sweep "$work/p.trace" -p tf_bfc,pytorch_caching --vary split_ratio=1,2 --repeat 0 -o "$work/scoped.csv" 2>/dev/null
  /usr/bin/python3 "$plot" sweep "$work/scoped.csv" -x split_ratio -y frag4 -o "$work/scoped.svg"; rc=$?
  expect "plot.py draws a policy that does not read the varied key as a flat line" \
    '[[ $rc -eq 0 ]] && grep -q "pytorch_caching (does not read split_ratio)" "$work/scoped.svg"'
  printf 'workload,policy,max_split_size,frag4\nw,p,64MiB,0.5\nw,p,1.5GB,0.25\nw,p,unlimited,0.125\n' > "$work/units.csv"
  err=$(/usr/bin/python3 "$plot" sweep "$work/units.csv" -x max_split_size -y frag4 -o "$work/units.png" 2>&1); rc=$?
  expect "plot.py reads sizes with units, unlimited and a workload column" \
    '[[ $rc -eq 0 && -s $work/units.png && $err == *"max_split_size=unlimited has no place on the axis"* ]]'
  # -o is checked as the command is read: it once drew the figure and then failed with a
  # traceback over a missing directory.
  mkdir -p "$work/figs"
  for bad in "$work/figs|is a directory" "$work/no-such-dir/f.svg|does not exist" "$work/figs/f.gif|expected a .png, .svg or .pdf"; do
    err=$(/usr/bin/python3 "$plot" bars "$work/r.csv" -y frag4 -o "${bad%%|*}" 2>&1); rc=$?
    expect "plot.py refuses -o ${bad%%|*} up front" '[[ $rc -eq 2 && $err == *"-o/--output: "*"${bad#*|}"* && -z $(ls "$work/figs") ]]'
  done
else
  echo "SKIP: /usr/bin/python3 has no matplotlib (.ci/install-deps installs python3-matplotlib)"
fi
head -c 100 "$work/p.fbin" > "$work/cut.fbin"
err=$("$fraglab" replay "$work/cut.fbin" -p tlsf -o "$work/never2.csv" --timeseries "$work/never2.ts" 2>&1); rc=$?
expect "a truncated binary trace names its byte offset" '[[ $rc -eq 2 && $err == *"cut.fbin: byte 16: the header promises "*" events, more than "* ]]'
expect "no output or time series after a bad binary trace" '[[ ! -e $work/never2.csv && ! -e $work/never2.ts ]]'
"$fraglab" convert "$work/p.trace" "$work/p.trace" >/dev/null 2>&1; rc=$?
expect "convert refuses to overwrite its input" '[[ $rc -eq 2 ]]'
"$fraglab" convert "$work/p.trace" "$work/./p.trace" >/dev/null 2>&1; rc=$?
expect "convert refuses its input under another spelling of its path" '[[ $rc -eq 2 ]]'

# Output paths are checked before any work, with the option named.
mkdir -p "$work/d1" "$work/d2"
cp "$work/p.trace" "$work/d1/same.trace"
cp "$work/first.trace" "$work/d2/same.trace"
err=$("$fraglab" replay "$work/d1/same.trace" "$work/d2/same.trace" -p tlsf 2>&1); rc=$?
expect "replay refuses two traces of one file name, which would label rows alike" \
  '[[ $rc -eq 2 && $err == *"d1/same.trace and "*"d2/same.trace have the same file name, same.trace"* ]]'
err=$("$fraglab" sweep "$work/p.trace" "$work/p.trace" -p tlsf --vary sli=3,4 2>&1); rc=$?
expect "sweep refuses a trace given twice" '[[ $rc -eq 2 && $err == *"p.trace is given twice"* ]]'
snapshot=$(ls "$snapshots"/*.pickle 2>/dev/null | head -1)
if [[ -n $snapshot ]]; then
  err=$("$fraglab" verify "$snapshot" "$snapshot" 2>&1); rc=$?
  expect "verify refuses a snapshot given twice" '[[ $rc -eq 2 && $err == *"is given twice"* ]]'
fi
err=$("$fraglab" replay "$work/p.trace" -p tlsf,tf_bfc -p tlsf 2>&1); rc=$?
expect "replay refuses a policy given twice, whose rows could not be told apart" '[[ $rc -eq 2 && $err == *"policy tlsf is given twice"* ]]'
err=$("$fraglab" sweep "$work/p.trace" -p tlsf --vary sli=3,4,3 2>&1); rc=$?
expect "sweep refuses a value given twice on an axis" '[[ $rc -eq 2 && $err == *"--vary: sli=3 is given twice"* ]]'
err=$("$fraglab" replay "$work/p.trace" -p tlsf --set sli=4 --set sli=5 2>&1); rc=$?
expect "replay refuses a key given twice to --set" '[[ $rc -eq 2 && $err == *"--set: sli is given twice (4, then sli=5)"* ]]'
err=$("$fraglab" sweep "$work/p.trace" -p tlsf --set sli=4 --vary sli=3,5 2>&1); rc=$?
expect "sweep refuses a key both set and varied" '[[ $rc -eq 2 && $err == *"--set sli and --vary sli"* ]]'
err=$("$fraglab" replay "$work/p.trace" -p tlsf --timeseries "$work/both.csv" -o "$work/./both.csv" 2>&1); rc=$?
expect "replay refuses --output and --timeseries naming one file" \
  '[[ $rc -eq 2 && $err == *"--output and --timeseries name the same file"* && ! -e $work/both.csv ]]'
err=$("$fraglab" replay "$work/p.trace" -p tlsf -o "$work/d1" 2>&1); rc=$?
expect "replay refuses a directory as its output" '[[ $rc -eq 2 && $err == *"--output: $work/d1: is a directory"* ]]'
err=$("$fraglab" replay "$work/p.trace" -p tlsf --timeseries "$work/missing/ts.csv" -o "$work/never3.csv" 2>&1); rc=$?
expect "replay refuses an output in a missing directory, and writes nothing" \
  '[[ $rc -eq 2 && $err == *"--timeseries: $work/missing/ts.csv: $work/missing does not exist"* && ! -e $work/never3.csv ]]'
for command in "sweep $work/p.trace -p tlsf --vary sli=3" "capacity $work/p.trace -p tlsf" "merge $work/part1.csv" \
               "dump $work/p.trace -p tlsf" "gen random"; do
  err=$("$fraglab" $command -o "" 2>&1); rc=$?
  expect "${command%% *} refuses an empty output name" '[[ $rc -eq 2 && $err == *"--output: the file name is empty"* ]]'
done
err=$("$fraglab" convert "$work/p.trace" "$work/d1" 2>&1); rc=$?
expect "convert refuses a directory as OUT" '[[ $rc -eq 2 && $err == *"$work/d1: is a directory"* ]]'
err=$("$fraglab" trace -o "$work/p.trace" -- true 2>&1); rc=$?
expect "trace refuses a file as its output directory" '[[ $rc -eq 2 && $err == *"--output: $work/p.trace is not a directory"* ]]'
"$fraglab" convert "$work/p.trace" "$work/x.out" --to pickle >/dev/null 2>&1; rc=$?
expect "convert refuses an unknown format" '[[ $rc -eq 2 && ! -e $work/x.out ]]'
printf 'a 1 100 256\nf 1\n' > "$work/aligned.trace"
err=$("$fraglab" convert "$work/aligned.trace" "$work/aligned.csv" 2>&1); rc=$?
expect "convert refuses to drop an alignment RMM's CSV cannot hold, and writes nothing" \
  '[[ $rc -eq 2 && $err == *"aligned.csv: event 1 asks for alignment 256"* && ! -e $work/aligned.csv ]]'

printf '\x80\x02cos\nsystem\n(S"echo pwned"\ntR.' > "$work/evil.pickle"
err=$("$fraglab" verify "$work/evil.pickle" 2>&1); rc=$?
expect "a pickle that imports is refused with its byte offset" '[[ $rc -eq 2 && $err == *"byte 2: refused opcode '"'"'GLOBAL'"'"'"* ]]'
err=$("$fraglab" verify "$work/p.trace" 2>&1); rc=$?
expect "verify names another format as not a snapshot, rather than reading it as a pickle" \
  '[[ $rc -eq 2 && $err == *"p.trace: native text, not a PyTorch memory snapshot"* ]]'

# gmlake: stitching keeps a variable-length transformer's footprint below PyTorch's, and a
# backend that cannot map a page twice is refused before anything runs.
"$fraglab" gen transformer --layers 2 --seq-dist long-tail --seq-len 128 --seq-len-max 2048 -o "$work/varlen.fbin" >/dev/null
out=$("$fraglab" replay "$work/varlen.fbin" -p pytorch_caching,gmlake --format csv 2>&1); rc=$?
peaks=$(echo "$out" | awk -F, 'NR == 1 { for (i = 1; i <= NF; i++) if ($i == "peak_reserved_bytes") c = i } NR > 1 { print $c }')
expect "gmlake reserves less than pytorch_caching where sequence lengths vary" \
  '[[ $rc -eq 0 && $(echo "$peaks" | sed -n 2p) -lt $(echo "$peaks" | sed -n 1p) ]]'
expect "replay reports GMLake's utilization for every policy" '[[ $(echo "$out" | head -1) == *",utilization,"* ]]'
err=$("$fraglab" replay "$work/varlen.fbin" -p gmlake --backend host -o "$work/gm.csv" 2>&1); rc=$?
expect "gmlake over host memory is refused, saying why, and writes nothing" \
  '[[ $rc -eq 2 && $err == *"only the simulated and cuda_vmm backends can"* && ! -e $work/gm.csv ]]'

# Not-a-number and infinity pass every range check written as a comparison: each parameter
# that takes a number refuses them by name, before anything runs.
"$fraglab" gen random --seed 1 --allocations 200 -o "$work/nan.trace" 2>/dev/null
for a in "-p best_fit --set backoff=nan" "-p best_fit --set growth_factor=inf" "-p pytorch_caching --set garbage_collection_threshold=nan" \
         "-p pytorch_caching --set per_process_memory_fraction=nan --capacity 1GiB" \
         "-p tf_bfc --set per_process_gpu_memory_fraction=NaN --capacity 1GiB" "-p tf_bfc --set split_ratio=-infinity"; do
  err=$("$fraglab" replay "$work/nan.trace" $a --repeat 0 2>&1 >/dev/null); rc=$?
  key=${a#*--set }; key=${key%%=*}
  expect "$key: a non-finite value is refused ($a)" '[[ $rc -eq 2 && $err == *"parameter $key: expected a finite number, got"* ]]'
done

# gen refuses counts that cannot be written in a sane time or space (unless --unbounded) and
# values its shapes cannot take, before writing anything.
for a in "random --min-size-log2 4294967296:expected at most 39" "random --allocations 18446744073709551615:at most 200000000 without --unbounded" \
         "llm-serving --output-max 1000000000 --requests 2:at most 4194304 without --unbounded" "transformer --layers 4294967296:at most 1024 without --unbounded"; do
  err=$("$fraglab" gen ${a%%:*} -o "$work/huge.trace" 2>&1); rc=$?
  expect "gen ${a%%:*} is refused (${a#*:})" '[[ $rc -eq 2 && $err == *"${a#*:}"* && ! -e $work/huge.trace ]]'
done

# Sums past 2^64 are bad input with their place, never a wrapped number.
printf 'a 1 18446744073709551615\na 2 16\n' > "$work/wrap.trace"
err=$("$fraglab" info "$work/wrap.trace" 2>&1); rc=$?
expect "info: live bytes past 2^64 are refused at their event" '[[ $rc -eq 2 && $err == *"wrap.trace: event 2: the blocks live at once pass 2^64 bytes"* ]]'
printf 'a 1 9223372036854775807\na 2 9223372036854775807\nf 1\nf 2\na 3 16\n' > "$work/mean.trace"
out=$("$fraglab" info "$work/mean.trace" 2>&1)
expect "info: the mean of sizes whose sum passes 2^64 is right" '[[ $out == *"size_mean: 6148914691236517210"* && $out == *"peak_live_bytes: 18446744073709551614"* ]]'
printf 'id,lower,upper,size\n0,0,2,18446744073709551615\n1,1,3,5\n' > "$work/wrap.csv"
for cmd in "plan $work/wrap.csv" "plan $work/wrap.trace" "replay $work/wrap.trace -p best_fit --offline --repeat 0"; do
  err=$("$fraglab" $cmd 2>&1); rc=$?
  expect "${cmd%% *}: buffers no memory can hold are bad input (${cmd##*/})" '[[ $rc -eq 2 && $err == *"need 2^62 bytes or more: no placement can address them"* ]]'
done

# Messages that say what is wrong, where a wrong reading or a puzzle was.
err=$("$fraglab" replay "$work/nan.trace" -p 'compose:index=tree,fit=best,quantum' --repeat 0 2>&1); rc=$?
expect "a compose key without its value is named as such" '[[ $rc -eq 2 && $err == *"'"'"'quantum'"'"' after '"'"'compose:index=tree,fit=best'"'"' is a parameter without its value: expected quantum=VALUE"* ]]'
printf '"Thread","Time","Action","Pointer","Size","Stream"\n"1","08:00:00.000001","allocate","0x10","64","0"\n' > "$work/quoted.csv"
out=$("$fraglab" info "$work/quoted.csv" 2>&1); rc=$?
expect "an RMM CSV a spreadsheet saved with quotes is read as RMM CSV" '[[ $rc -eq 0 && $out == *"format: RMM logging CSV"* && $out == *"allocs: 1"* ]]'
printf 'Thread,Time,Action,Pointer,Size,Stream\n1,99:99:99.000001,allocate,0x10,64,0\n' > "$work/time.csv"
err=$("$fraglab" info "$work/time.csv" 2>&1); rc=$?
expect "an RMM time of 99:99:99 is refused" '[[ $rc -eq 2 && $err == *"time.csv:2: expected a time HH:MM:SS.ffffff, got '"'"'99:99:99.000001'"'"'"* ]]'
printf 'f 1\nf 2\n' > "$work/frees.trace"
err=$("$fraglab" replay "$work/frees.trace" -p tlsf 2>&1); rc=$?
expect "a trace of frees alone is refused, not replayed as zeros" '[[ $rc -eq 2 && $err == *"no allocation in it, only 2 frees"* ]]'
err=$(cat "$work/nan.trace" | "$fraglab" info - /dev/stdin 2>&1); rc=$?
expect "standard input named twice is refused" '[[ $rc -eq 2 && $err == *"- and /dev/stdin both name standard input"* ]]'

# view's page is capped (its states, all policies together), and names the cap.
err=$("$fraglab" view "$work/nan.trace" -p tlsf,best_fit --states 20000 -o "$work/big-view.html" 2>&1); rc=$?
expect "a view of more states than a page holds is refused before any work" \
  '[[ $rc -eq 2 && $err == *"--states 20000 with 2 policies asks for a page of 40002 states; a page holds at most 30000"* && ! -e $work/big-view.html ]]'

report cli
