#!/usr/bin/env bash
# Runs a fraglab sweep or replay on a Slurm cluster: a job array whose tasks each run one
# shard of the cells (shard.sbatch), and a merge job that starts when every task has succeeded
# and writes the whole table (merge.sbatch). docs/cluster.md says how to size and rerun it.
#
#   experiments/scripts/cluster/submit.sh --out runs/split [--tasks 16] [--cpus-per-task 2] [--mem 4G] \
#       [--time 2:00:00] [--partition P] [--account A] [--sbatch-arg ARG]... [--wait] [--dry-run] \
#       -- sweep big.fbin -p tf_bfc,best_fit --vary split_ratio=1,2,4,8 --backend heap
#
# Before submitting, the run's arguments are checked and its cells counted on this node
# (`fraglab ... --list-cells`), so a typo fails here rather than in a thousand tasks.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
usage() {
  sed -n '2,12p' "$0" | sed 's/^# \{0,1\}//' >&2
  exit 2
}
fail() {
  echo "submit.sh: $*" >&2
  exit 2
}

fraglab="$here/../../../build/experiments/fraglab"
out="" tasks="" cpus=1 mem=2G time=1:00:00 wait=0 dry=0
extra=()
while (($#)); do
  case $1 in
    --out) out=${2:?--out needs a directory}; shift 2 ;;
    --tasks) tasks=${2:?--tasks needs a count}; shift 2 ;;
    --cpus-per-task) cpus=${2:?--cpus-per-task needs a count}; shift 2 ;;
    --mem) mem=${2:?--mem needs a size}; shift 2 ;;
    --time) time=${2:?--time needs a limit}; shift 2 ;;
    --partition) extra+=("--partition=${2:?--partition needs a name}"); shift 2 ;;
    --account) extra+=("--account=${2:?--account needs a name}"); shift 2 ;;
    --sbatch-arg) extra+=("${2:?--sbatch-arg needs an argument}"); shift 2 ;;
    --fraglab) fraglab=${2:?--fraglab needs a path}; shift 2 ;;
    --wait) wait=1; shift ;;
    --dry-run) dry=1; shift ;;
    -h | --help) usage ;;
    --) shift; break ;;
    *) fail "unknown option $1 (the fraglab command goes after --)" ;;
  esac
done
(($#)) || usage
command=$1
shift
[[ $command == sweep || $command == replay ]] || fail "expected sweep or replay after --, got '$command'"
[[ -n $out ]] || fail "--out DIR is required: the parts, the logs and the merged table go there"
for a in "$@"; do
  case $a in
    --shard | --shard=* | -o | --output | --output=* | --format | --format=* | --jobs | --jobs=* | -j | --list-cells)
      fail "give no $a: each task's shard, output and --jobs (its CPUs) are set here" ;;
  esac
done
[[ $tasks =~ ^[1-9][0-9]*$ || -z $tasks ]] || fail "--tasks: expected a whole number of at least 1, got '$tasks'"
[[ $cpus =~ ^[1-9][0-9]*$ ]] || fail "--cpus-per-task: expected a whole number of at least 1, got '$cpus'"
[[ -x $fraglab ]] || fail "$fraglab is not a program: build it (bash experiments/quickstart.sh) or give --fraglab"
fraglab=$(realpath "$fraglab")
mkdir -p "$out"
out=$(realpath "$out")
if compgen -G "$out/parts/part-*.csv" >/dev/null || [[ -e $out/table.csv ]]; then
  fail "$out already holds a run's parts or table: give a new --out"
fi

# The cells, counted from the CSV (a trace's name may hold a comma or a newline, quoted).
listing=$("$fraglab" "$command" "$@" --list-cells --format csv) || fail "fraglab refused the run (above); nothing was submitted"
cells=$(/usr/bin/python3 -c 'import csv, sys; print(sum(1 for _ in csv.reader(sys.stdin)) - 1)' <<<"$listing")
# Slurm's default MaxArraySize is 1001 (ids 0 to 1000): more cells than that share tasks.
tasks=${tasks:-$((cells < 1000 ? cells : 1000))}
((tasks <= cells)) || tasks=$cells

mkdir -p "$out/parts" "$out/logs"
array=(sbatch --parsable --array="0-$((tasks - 1))" --cpus-per-task="$cpus" --mem="$mem" --time="$time"
       --job-name="fraglab-$command" --output="$out/logs/shard-%A_%a.out" "${extra[@]}"
       "$here/shard.sbatch" "$fraglab" "$out" "$command" "$@")
merge=(sbatch --parsable --kill-on-invalid-dep=yes --job-name="fraglab-merge" --output="$out/logs/merge-%j.out"
       "${extra[@]}")
((wait)) && merge+=(--wait)
if ((dry)); then
  printf '%q ' "${array[@]}"
  echo
  printf '%q ' "${merge[@]}" "--dependency=afterok:ARRAY_JOB_ID" "$here/merge.sbatch" "$fraglab" "$out"
  echo
  exit 0
fi
command -v sbatch >/dev/null || fail "sbatch is not on PATH: run this on a Slurm cluster's login node"
array_job=$("${array[@]}")
array_job=${array_job%%;*}  # --parsable prints ID or ID;CLUSTER
{
  echo "# $(date -u +%FT%TZ) on $(hostname): $("$fraglab" --version | head -1)"
  printf '%q ' "$0" --out "$out" --tasks "$tasks" -- "$command" "$@"
  echo
  echo "array job $array_job: $tasks tasks over $cells cells"
} >"$out/submitted.txt"
echo "array job $array_job: $tasks tasks over $cells cells, parts in $out/parts"
if ((wait)); then
  echo "merge job: waiting for it to write $out/table.csv"
  status=0
  "${merge[@]}" --dependency="afterok:$array_job" "$here/merge.sbatch" "$fraglab" "$out" >>"$out/submitted.txt" || status=$?
  if ((status)) || [[ ! -f $out/table.csv ]]; then
    echo "submit.sh: the run failed (exit $status): see $out/logs" >&2
    exit 1
  fi
  echo "table: $out/table.csv"
else
  merge_job=$("${merge[@]}" --dependency="afterok:$array_job" "$here/merge.sbatch" "$fraglab" "$out")
  echo "merge job ${merge_job%%;*}" | tee -a "$out/submitted.txt"
  echo "table (when both are done): $out/table.csv"
fi
