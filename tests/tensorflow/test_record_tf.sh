#!/usr/bin/env bash
# tf_bfc against TensorFlow itself: a small Keras model trained for a few steps, recorded by
# `fraglab record-tf`, then `fraglab verify` exact on every allocation and every region (which
# a change to tf_bfc's split, merge, bin or growth rule breaks), and the recording replayed,
# viewed and planned like any trace. TF comes from the project's .venv (.ci/install-deps
# tests) or FRAGLAB_TF_PYTHON; without it the test is skipped, saying so.
set -u
fraglab=${1:?usage: test_record_tf.sh PATH_TO_FRAGLAB STACKS_LIBRARY|none}
stacks=${2:?usage: test_record_tf.sh PATH_TO_FRAGLAB STACKS_LIBRARY|none}
if [[ $stacks == none ]]; then
  echo "SKIP: sanitizer builds leave out the stack library, without which TF takes minutes a model; the release build runs this"
  exit 77
fi
export FRAGLAB_TF_STACKS=$stacks
root=$(cd "$(dirname "$0")/../.." && pwd)
python=${FRAGLAB_TF_PYTHON:-$root/.venv/bin/python}
if ! "$python" -c 'import tensorflow' 2>/dev/null; then
  echo "SKIP: no TensorFlow in $python (bash .ci/install-deps tests installs it into .venv)"
  exit 77
fi
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
source "$(dirname "$0")/../support/expect.sh"
programs=$root/experiments/scripts/workloads/tensorflow

"$fraglab" record-tf -o "$work/mlp.tflog.zst" -- "$python" "$programs/mlp_train.py" --steps 4 >"$work/out.txt" 2>"$work/err.txt"; rc=$?
expect "record-tf runs the program and keeps its output (exit $rc)" '[[ $rc -eq 0 && $(cat "$work/out.txt") == loss* ]]'
expect "the BFC lines go to the log, not the terminal" '[[ $(grep -c "bfc_allocator.cc" "$work/err.txt") -eq 0 && -s $work/mlp.tflog.zst ]]'
expect "it says how many allocations it logged" 'grep -qE "^fraglab record-tf: [0-9]+ allocations logged to" "$work/err.txt"'

"$fraglab" verify "$work/mlp.tflog.zst" >"$work/verify.txt" 2>&1; rc=$?
cat "$work/verify.txt"
addresses=$(sed -n 's/^addresses matched: \([0-9]*\)\/\([0-9]*\)$/\1 \2/p' "$work/verify.txt")
regions=$(sed -n 's/^regions matched: \([0-9]*\)\/\([0-9]*\)$/\1 \2/p' "$work/verify.txt")
read -r a_ok a_all <<<"$addresses"
read -r r_ok r_all <<<"$regions"
expect "verify is exact on every allocation and region (exit $rc)" '[[ $rc -eq 0 && -n $a_all && $a_ok == "$a_all" && $r_ok == "$r_all" ]]'
expect "the run is large enough to test the rules: $a_all allocations, $r_all regions (growth by doubling)" '[[ ${a_all:-0} -ge 1000 && ${r_all:-0} -ge 3 ]]'
expect "its order is the allocator's: no caveat" '! grep -q "note:" "$work/verify.txt"'

# Like any trace: replayed under other policies, its facts, its best offline placement.
"$fraglab" replay "$work/mlp.tflog.zst" -p tf_bfc,pytorch_caching,tlsf,best_fit --backend simulated --repeat 0 --format csv \
  >"$work/replay.csv" 2>/dev/null; rc=$?
expect "replay under four policies (exit $rc)" '[[ $rc -eq 0 && $(wc -l <"$work/replay.csv") -eq 5 ]]'
"$fraglab" info "$work/mlp.tflog.zst" >"$work/info.txt" 2>&1
expect "info names the format" 'grep -q "format: TensorFlow BFC log" "$work/info.txt"'
"$fraglab" replay "$work/mlp.tflog.zst" -p tf_bfc --offline --repeat 0 --format csv >"$work/offline.csv" 2>/dev/null; rc=$?
expect "the offline bound of the TF run (exit $rc)" '[[ $rc -eq 0 && $(wc -l <"$work/offline.csv") -ge 2 ]]'

# A Python that is not a TF program writes nothing.
"$fraglab" record-tf -o "$work/none.tflog.zst" -- "$python" -c 'print(1)' >/dev/null 2>"$work/none.txt"; rc=$?
expect "a program without TF leaves no file and says why (exit $rc)" \
  '[[ $rc -eq 2 && ! -e $work/none.tflog.zst ]] && grep -q "no BFC allocation was logged" "$work/none.txt"'
report test_record_tf
