#!/usr/bin/env bash
# experiments/Snakefile, the workflow that rebuilds results/: a dry run schedules every rule,
# the smallest table (gpu_allocators, quick) is made for real into a scratch directory, and a
# second run redoes only what a changed input reaches. Skips where Snakemake is not installed.
set -u
fraglab=$(realpath "${1:?usage: test_workflow.sh FRAGLAB}")
root=$(cd "$(dirname "$0")/../.." && pwd)
command -v snakemake >/dev/null || { echo "SKIP: snakemake is not installed (bash .ci/install-deps tests)"; exit 77; }
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
source "$(dirname "$0")/../support/expect.sh"
build=$(dirname "$(dirname "$fraglab")")
# Everything the runs write goes under $work: the tables, their inputs, Snakemake's records.
snake() {
  (cd "$work" && snakemake -s "$root/experiments/Snakefile" --cores 2 \
    --config build="$build" out_dir="$work/results" work_dir="$work/work" state_dir="$work/state" "$@" 2>&1)
}

rules=$(cd "$work" && snakemake -s "$root/experiments/Snakefile" --list --config state_dir="$work/state" 2>/dev/null | sort)
planned=$(snake rebuild=1 -n --forceall -- all gpu)
scheduled=$(awk '/^Job stats:/{on=1; next} on && /^total/{exit} on && NR>0 && $2 ~ /^[0-9]+$/ {print $1}' <<<"$planned" | sort)
expect "the workflow has a rule per results script, the shared inputs, the build and the targets" \
  '[[ $(wc -l <<<"$rules") -eq 17 ]] && grep -qx speed_table <<<"$rules" && grep -qx offline_gap <<<"$rules" && grep -qx gmlake <<<"$rules" && grep -qx host_ratios <<<"$rules"'
expect "a dry run of all and gpu schedules every rule" '[[ -n $rules && $scheduled == "$rules" ]] || { echo "$planned" | tail -30; false; }'
gpu_planned=$(snake rebuild=1 -n --forceall -- gpu)
expect "the gpu target measures the host ratios there too, once" '[[ $(awk '"'"'$1 == "host_ratios" {print $2}'"'"' <<<"$gpu_planned" | head -1) == 1 ]]'

out=$(snake rebuild=0 quick=1 -- gpu_allocators); rc=$?
expect "the smallest rule runs for real (gpu_allocators, quick)" '[[ $rc -eq 0 ]] || { echo "$out" | tail -30; false; }'
expect "it writes the table, its Markdown and its figure" \
  '[[ -s $work/results/gpu_allocators.csv && -s $work/results/gpu_allocators.md ]] && grep -q "<svg" "$work/results/gpu_allocators.svg"'
expect "the table records the command from the repository" \
  'grep -q "^# command: experiments/scripts/reproduce/gpu_allocators.py --fraglab .* --quick --jobs 2$" "$work/results/gpu_allocators.csv"'
expect "its inputs were made by their own rule first" '[[ $out == *"rule dl_workloads:"* && -s $work/work/dl-quick/gpt2-fixed.fbin ]]'
expect "nothing of the workflow's is left in the repository" '[[ ! -e $root/.snakemake ]]'

again=$(snake rebuild=0 quick=1 -n -- gpu_allocators)
expect "a second run with nothing changed does nothing" '[[ $again == *"Nothing to be done"* ]]'
# As if the workloads had been made again (Snakemake dates a directory by the stamp it leaves there).
touch "$work/work/dl-quick/.snakemake_timestamp"
again=$(snake rebuild=0 quick=1 -n -- gpu_allocators)
expect "a changed input reruns the rules it reaches and no other" \
  '[[ $again == *"rule gpu_allocators:"* && $again != *"rule dl_workloads:"* ]]'

report test_workflow
