#!/usr/bin/env bash
# A real one-node Slurm cluster on this machine (Debian's munge, slurmctld and slurmd on
# localhost, from a configuration written here), running what docs/cluster.md tells a user to
# run: experiments/scripts/cluster/submit.sh's job array and dependent merge, for a sweep and for a
# replay, whose merged tables must equal the local --jobs 1 runs; merge refusing a missing,
# repeated or foreign part as a cluster job; a failing task stopping the merge; --shard slurm
# refused outside an array; and the results workflow run through Snakemake's cluster support.
# Skips, saying why, where the daemons cannot be had; stops every daemon it started.
set -u
fraglab=$(realpath "${1:?usage: test_slurm.sh FRAGLAB}")
root=$(cd "$(dirname "$0")/../.." && pwd)
skip() {
  echo "SKIP: $*"
  exit 77
}
source "$root/experiments/scripts/cluster/one_node_cluster.sh"
work=$(mktemp -d /tmp/fraglab-slurm.XXXXXX)
trap 'stop_one_node_cluster; rm -rf "$work"' EXIT
start_one_node_cluster "$work/cluster" || skip "$cluster_error"
echo "a one-node cluster is up ($SLURM_CONF)"
mkdir -p "$work/data"

source "$(dirname "$0")/../support/expect.sh"
# A table without its timing column (ns_per_op), which is all that may differ between runs.
untimed() {
  /usr/bin/python3 - "$1" <<'EOF'
import csv, sys
rows = list(csv.reader(open(sys.argv[1], newline="")))
drop = [i for i, c in enumerate(rows[0]) if c == "ns_per_op"]
for r in rows:
    print(",".join(c for i, c in enumerate(r) if i not in drop))
EOF
}
submit=$root/experiments/scripts/cluster/submit.sh
cd "$work/data"
"$fraglab" gen phases --seed 3 --phases 6 --objects 500 -o phases.fbin
"$fraglab" gen random --seed 4 --allocations 2000 -o random.trace
sweep=(sweep phases.fbin random.trace -p tlsf,best_fit,tf_bfc --backend heap --vary split_ratio=1,2,4 --vary sli=3,5)
replay=(replay phases.fbin random.trace -p tlsf,best_fit,tf_bfc,dlmalloc,first_fit --backend heap --repeat 1)

# --- an array sweep and its merge, against the local sweep --------------------------------
"$fraglab" "${sweep[@]}" --jobs 1 -o local-sweep.csv
cells=$("$fraglab" "${sweep[@]}" --list-cells --format csv | tail -n +2 | wc -l)
SECONDS=0
timeout 180 "$submit" --fraglab "$fraglab" --out run-sweep --tasks 4 --mem 100M --time 5 --wait -- "${sweep[@]}" >submit.out 2>&1
rc=$?
echo "the array sweep of $cells cells in 4 tasks and its merge took $SECONDS s"
expect "submit.sh runs an array sweep and its merge (exit 0)" '[[ $rc -eq 0 ]] || { cat submit.out run-sweep/logs/* 2>/dev/null; false; }'
expect "the sweep's cells were counted before submitting" '[[ $(cat submit.out) == *"4 tasks over $cells cells"* && $cells -eq 24 ]]'
expect "each array task wrote its part" '[[ $(ls run-sweep/parts | wc -l) -eq 4 ]]'
expect "the merged table equals the local --jobs 1 sweep" 'cmp -s <(untimed local-sweep.csv) <(untimed run-sweep/table.csv)'
expect "task 2's part holds the cells of --shard 3/4" \
  '"$fraglab" "${sweep[@]}" --shard 3/4 -o shard3.csv && cmp -s <(untimed shard3.csv) <(untimed run-sweep/parts/part-2.csv)'
expect "submitted.txt records the command and the fraglab that ran it" \
  '[[ $(cat run-sweep/submitted.txt) == *"fraglab "*"-- sweep phases.fbin"* ]]'

# --- an array replay: (trace, policy) pairs as cells ----------------------------------------
"$fraglab" "${replay[@]}" --jobs 1 -o local-replay.csv
timeout 180 "$submit" --fraglab "$fraglab" --out run-replay --tasks 3 --mem 100M --time 5 --wait -- "${replay[@]}" >submit.out 2>&1
rc=$?
expect "submit.sh runs an array replay and its merge" '[[ $rc -eq 0 ]] || { cat submit.out run-replay/logs/* 2>/dev/null; false; }'
expect "the merged replay equals the local --jobs 1 replay, timing aside" \
  '[[ $(head -1 run-replay/table.csv) == trace,policy,* ]] && cmp -s <(untimed local-replay.csv) <(untimed run-replay/table.csv)'

# --- merge refuses a missing, repeated or foreign part as a cluster job ---------------------
merge_job() {  # DIR: the merge job over DIR's parts, as submit.sh submits it; prints its log
  sbatch --wait --parsable --output="$1/merge.log" "$root/experiments/scripts/cluster/merge.sbatch" "$fraglab" "$1" >/dev/null
  local status=$?
  cat "$1/merge.log"
  return $status
}
mkdir -p missing/parts repeated/parts foreign/parts
cp run-sweep/parts/part-{0,1,3}.csv missing/parts/
out=$(merge_job missing 2>&1); rc=$?
expect "the merge job refuses a missing shard" '[[ $rc -ne 0 && $out == *"is missing from every part"* && ! -e missing/table.csv ]]'
cp run-sweep/parts/part-*.csv repeated/parts/ && cp run-sweep/parts/part-1.csv repeated/parts/part-9.csv
out=$(merge_job repeated 2>&1); rc=$?
expect "the merge job refuses a repeated shard" '[[ $rc -ne 0 && $out == *"appears twice"* && ! -e repeated/table.csv ]]'
cp run-sweep/parts/part-{0,1,2}.csv foreign/parts/
"$fraglab" "${sweep[@]/split_ratio=1,2,4/split_ratio=1,2,8}" --shard 4/4 -o foreign/parts/part-3.csv
out=$(merge_job foreign 2>&1); rc=$?
expect "the merge job refuses a shard of another sweep" '[[ $rc -ne 0 && $out == *"another sweep than"* && ! -e foreign/table.csv ]]'

# --- a failing task leaves no table: the merge never starts ---------------------------------
timeout 120 "$submit" --fraglab "$fraglab" --out run-failing --tasks 2 --mem 100M --time 5 --wait \
  --sbatch-arg --export=ALL,FRAGLAB_SHARD=9/2 -- "${sweep[@]}" >submit.out 2>&1
rc=$?
expect "a failed task fails the run, and no table is written" \
  '[[ $rc -ne 0 && ! -e run-failing/table.csv && $(cat run-failing/logs/shard-* 2>/dev/null) == *"--shard: expected I/N"* ]]'
expect "submit.sh refuses an --out that holds a run's parts" \
  '! "$submit" --fraglab "$fraglab" --out run-sweep -- "${sweep[@]}" 2>/dev/null'

# --- --shard slurm outside an array job ---------------------------------------------------
sbatch --wait --quiet --output=plain.log --wrap "$(printf '%q ' "$fraglab" "${sweep[@]}" --shard slurm)" 2>/dev/null
rc=$?
expect "--shard slurm in a job that is no array is refused, naming the job" \
  '[[ $rc -ne 0 && $(cat plain.log) == *"--shard slurm: SLURM_ARRAY_TASK_ID is not set: Slurm job "*" is not an array job"* ]]'

# --- the results workflow on the cluster, through Snakemake's own cluster support ---------
if command -v snakemake >/dev/null; then
  build=$(dirname "$(dirname "$fraglab")")
  SECONDS=0
  (export CI=true; timeout 240 snakemake -s "$root/experiments/Snakefile" --cores 2 --jobs 2 --latency-wait 10 \
    --cluster "sbatch --parsable --cpus-per-task={threads} --mem={resources.mem_mb} --time={resources.runtime} --output=$work/data/snake-%j.out" \
    --config build="$build" rebuild=0 quick=1 out_dir="$work/data/results" work_dir="$work/data/work" state_dir="$work/data" \
    -- gpu_allocators >"$work/data/snake.out" 2>&1)
  rc=$?
  echo "the workflow's gpu_allocators rule through sbatch took $SECONDS s"
  expect "Snakemake runs the workflow's jobs as Slurm jobs" \
    '[[ $rc -eq 0 && -s results/gpu_allocators.md && $(ls snake-*.out | wc -l) -ge 2 ]] || { tail -30 snake.out; false; }'
else
  echo "snakemake is missing (bash .ci/install-deps tests): the workflow on Slurm is not run"
fi

report test_slurm
