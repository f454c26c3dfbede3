#!/usr/bin/env bash
# Every command of the README's ```sh blocks that runs fraglab, plot.py or the script that writes
# explain's OOM snapshot, in order, in an empty directory: each must succeed, and each table it
# prints for a reader must fit 120 columns. `fraglab trace` needs the programs it traces and is
# run by test_tracer.sh; the 5M-allocation workload is made with 50,000 here; the sharded
# sweep's other three shards are run beside the first, so that its merge has them all.
set -u
fraglab=$(realpath "${1:?usage: test_readme.sh PATH_TO_FRAGLAB}")
root=$(realpath "$(dirname "$0")/../..")
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
passed=0 failed=0
commands=$(awk '/^```sh/{f=1;next} /^```/{f=0} f' "$root/README.md" |
  awk '{ if (sub(/\\$/, "")) { line = line $0; next } print line $0; line = "" }' |
  grep -E '^(build/experiments/fraglab|\$F|/usr/bin/python3 experiments/scripts/(reproduce/plot|dev/split_oom_snapshot)\.py) ' | grep -vE '^(\$F|build/experiments/fraglab) trace ')
# The README draws figures of files its later commands make: plot.py runs last.
commands=$(grep -v plot.py <<<"$commands"; grep plot.py <<<"$commands")
cd "$work" || exit 1
while IFS= read -r line; do
  cmd=${line//build\/experiments\/fraglab/$fraglab}
  cmd=${cmd//\$F /$fraglab }
  cmd=${cmd//experiments\/scripts\/reproduce\/plot.py/$root/experiments/scripts/reproduce/plot.py}
  cmd=${cmd//experiments\/scripts\/dev\/split_oom_snapshot.py/$root/experiments/scripts/dev/split_oom_snapshot.py}
  cmd=${cmd//--allocations 5000000/--allocations 50000}
  if [[ $cmd == *../shared/* ]]; then
    [[ -d ${FRAGLAB_SHARED_TRACES:-/nonexistent} ]] || { echo "SKIP: $line (needs the shared traces)"; continue; }
    cmd=${cmd//..\/shared\/traces/$FRAGLAB_SHARED_TRACES}
  fi
  out=$(eval "$cmd" 2>"$work/stderr"); rc=$?
  if [[ $line == *"--shard 1/4"* ]]; then
    for i in 2 3 4; do
      other=${cmd//1\/4/$i\/4}
      eval "${other//part1.csv/part$i.csv}" >/dev/null 2>&1
    done
  fi
  widest=$(awk '{ if (length($0) > w) w = length($0) } END { print w + 0 }' <<<"$out")
  wide_ok=1
  # A reader's table: replay, sweep and capacity without a machine format.
  if [[ $line =~ (replay|sweep|capacity)\  && $line != *--format* && $line != *" -o "* && $widest -gt 120 ]]; then wide_ok=0; fi
  if [[ $rc -eq 0 && $wide_ok -eq 1 ]]; then
    passed=$((passed + 1))
  else
    failed=$((failed + 1))
    echo "FAIL: $line (exit $rc, widest line $widest)"
    cat "$work/stderr"
  fi
done <<<"$commands"
echo "readme: $passed passed, $failed failed"
((failed == 0 && passed > 10))
