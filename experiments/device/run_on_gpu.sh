#!/usr/bin/env bash
# Everything of issue 6 that needs a GPU, in one run, on a machine with a CUDA device:
#
#   bash experiments/device/run_on_gpu.sh [OUT_DIR]
#
#   1. builds with CUDA enabled (build-gpu/) and runs the unit suite, whose CUDA backend
#      tests run for real here instead of skipping;
#   2. trains plugins/pytorch/train_example.py with the plug-in serving tf_bfc,
#      pytorch_caching and best_fit;
#   3. records a snapshot of a small transformer's training (experiments/device/record_snapshot.py)
#      and checks our pytorch_caching preset against it (`fraglab verify`);
#   4. writes results/gpu_speed.{csv,md} (experiments/gpu_speed_table.py), naming the device,
#      over the shared PyTorch snapshots and the new one.
# Steps 2-4 need PyTorch with CUDA (step 4 without it still measures everything but torch).
# Logs, the snapshot and copies of the results go to OUT_DIR (default: $OUT, else build-gpu/out).
# Exits non-zero if any step fails; every step runs regardless, and the summary says which.
set -uo pipefail
cd "$(dirname "$0")/../.."
out=${1:-${OUT:-build-gpu/out}}
mkdir -p "$out"
status=0
step() {  # NAME COMMAND...
  local name=$1
  shift
  echo "=== $name"
  if "$@" >"$out/$name.log" 2>&1; then
    echo "ok: $name"
  else
    local rc=$?
    echo "FAILED ($rc): $name; last lines of $out/$name.log:"
    tail -20 "$out/$name.log"
    status=1
  fi
}

if ! command -v nvidia-smi >/dev/null || ! nvidia-smi -L; then
  echo "run_on_gpu.sh: no NVIDIA GPU here (nvidia-smi -L failed)" >&2
  exit 77
fi
nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv | tee "$out/device.txt"

command -v meson >/dev/null || bash .ci/install-deps
if [[ -d build-gpu ]]; then meson setup --reconfigure build-gpu -Dcuda=enabled >/dev/null
else meson setup build-gpu -Dcuda=enabled >/dev/null; fi
step build ninja -C build-gpu
step unit-tests meson test -C build-gpu --suite unit --print-errorlogs
grep -h "no CUDA device" build-gpu/meson-logs/testlog.txt && { echo "the device tests skipped on a GPU machine"; status=1; }

python=${PYTHON:-python3}
plugin=build-gpu/plugins/libfraglab_pytorch_allocator.so
if "$python" -c 'import torch, sys; sys.exit(0 if torch.cuda.is_available() else 1)' 2>/dev/null; then
  for policy in tf_bfc pytorch_caching best_fit; do
    step "train-$policy" env FRAGLAB_STATS=1 "$python" plugins/pytorch/train_example.py --plugin "$plugin" --policy "$policy"
    grep -h "^policy\|^device" "$out/train-$policy.log"
  done
  step snapshot "$python" experiments/device/record_snapshot.py -o "$out/small-transformer.pickle"
  step verify build-gpu/experiments/fraglab verify "$out/small-transformer.pickle" -p pytorch_caching
  grep -h "matched" "$out/verify.log"
  snapshot=(--snapshot "$out/small-transformer.pickle")
else
  echo "run_on_gpu.sh: PyTorch with CUDA is not importable by $python: skipping the plug-in, the snapshot and the torch column"
  status=1
  snapshot=()
fi
step gpu-speed "$python" experiments/gpu_speed_table.py --build build-gpu "${snapshot[@]}"
cp results/gpu_speed.csv results/gpu_speed.md "$out/" 2>/dev/null
cat results/gpu_speed.md 2>/dev/null | sed -n '/## ns per operation/,$p'
echo "=== run_on_gpu.sh: $([[ $status -eq 0 ]] && echo 'every step passed' || echo 'some steps FAILED') (logs in $out)"
exit $status
