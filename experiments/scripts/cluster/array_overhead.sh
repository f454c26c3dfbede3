#!/usr/bin/env bash
# What a cell costs on the array path (experiments/scripts/cluster/submit.sh: one Slurm task a cell,
# then the merge job) against a local sweep of the same cells, on a one-node cluster started
# here (one_node_cluster.sh; run as root, with Debian's munge and Slurm):
#
#   bash experiments/scripts/cluster/array_overhead.sh [--fraglab PATH] [--cells N] [--phases K]
#       [--scheduler-parameters S]   (Slurm's SchedulerParameters; "" for its defaults)
#
# Prints the wall time of the local sweep with --jobs 1 and with one job per CPU, of the array
# path from submission to merged table, and of one task's fraglab alone (its start, reading
# every trace, checking every cell, and its one cell), and the overhead per cell: the array's
# time less the local sweep's on as many CPUs, over the cells. A benchmark, not a test: the
# machine's load moves every number.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
fraglab=$here/../../../build/experiments/fraglab
cells=16 phases=24 scheduling=batch_sched_delay=0
while (($#)); do
  case $1 in
    --fraglab) fraglab=$2; shift 2 ;;
    --cells) cells=$2; shift 2 ;;
    --phases) phases=$2; shift 2 ;;
    --scheduler-parameters) scheduling=$2; shift 2 ;;
    *) echo "array_overhead.sh: unknown option $1" >&2; exit 2 ;;
  esac
done
fraglab=$(realpath "$fraglab")
source "$here/one_node_cluster.sh"
work=$(mktemp -d /tmp/fraglab-overhead.XXXXXX)
trap 'stop_one_node_cluster; rm -rf "$work"' EXIT
start_one_node_cluster "$work/cluster" 4096 "$scheduling" || { echo "array_overhead.sh: $cluster_error" >&2; exit 1; }
cd "$work"
"$fraglab" gen phases --seed 5 --phases "$phases" -o w.fbin >/dev/null
events=$("$fraglab" info w.fbin | sed -n 's/^events: //p')
ratios=$(seq -s, 1 "$cells")
sweep=(sweep w.fbin -p tlsf --vary split_ratio="$ratios" --backend heap)
cpus=$(nproc)
now() { date +%s.%N; }
elapsed() { /usr/bin/python3 -c "import sys; print(f'{float(sys.argv[2]) - float(sys.argv[1]):.2f}')" "$1" "$2"; }

t0=$(now); "$fraglab" "${sweep[@]}" --jobs 1 -o local1.csv; t1=$(now)
local1=$(elapsed "$t0" "$t1")
t0=$(now); "$fraglab" "${sweep[@]}" --jobs "$cpus" -o localn.csv; t1=$(now)
localn=$(elapsed "$t0" "$t1")
t0=$(now); "$fraglab" "${sweep[@]}" --shard 1/"$cells" -o one-task.csv; t1=$(now)
task=$(elapsed "$t0" "$t1")
t0=$(now)
bash "$here/submit.sh" --fraglab "$fraglab" --out run --tasks "$cells" --mem 200M --time 10 --wait -- "${sweep[@]}" >/dev/null
t1=$(now)
array=$(elapsed "$t0" "$t1")
cmp -s <(cut -d, -f1-14 local1.csv) <(cut -d, -f1-14 run/table.csv) || { echo "array_overhead.sh: the tables differ" >&2; exit 1; }

echo "$cells cells of tlsf over a ${events}-event trace (gen phases --phases $phases), on $cpus CPUs ($(hostname), $(date -u +%F));"
echo "SchedulerParameters=${scheduling:-(the defaults)}; $(( (cells + cpus - 1) / cpus )) waves of $cpus tasks"
printf '%-44s %8s s\n' "local sweep, --jobs 1" "$local1" "local sweep, --jobs $cpus" "$localn" \
  "one task's fraglab (--shard 1/$cells)" "$task" "array of $cells tasks + merge, submit to table" "$array"
/usr/bin/python3 -c "
import sys
cells, local1, localn, array = int(sys.argv[1]), *map(float, sys.argv[2:])
print(f'a cell: {local1 / cells:.3f} s locally; the array path adds {(array - localn) / cells:.3f} s a cell '
      f'({array / localn:.1f}x the local sweep on as many CPUs)')" "$cells" "$local1" "$localn" "$array"
