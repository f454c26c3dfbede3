#!/usr/bin/env bash
# Everything that needs a GPU, in one run, on a machine with a CUDA device:
#
#   bash experiments/scripts/device/run_on_gpu.sh [--prebuilt DIR] [--only PARTS] [OUT_DIR]
#
#   1. tests: builds with CUDA enabled (build-gpu/) and runs the unit suite, whose CUDA
#      backend tests run for real here instead of skipping;
#   2. sanitizer: runs the CUDA backends' tests again under compute-sanitizer's memcheck,
#      which fails on a device access out of bounds and on device memory still allocated at
#      exit (needs a runtime where compute-sanitizer works: Firecracker, not gVisor);
#   3. train: trains plugins/pytorch/train_example.py with PyTorch's own allocator, then
#      with the plug-in serving tf_bfc, pytorch_caching, best_fit and gmlake (over cuda_vmm),
#      each of which must learn and reproduce the first run's first losses;
#   4. snapshot: records a snapshot of a small transformer's training
#      (experiments/scripts/device/record_snapshot.py) and checks our pytorch_caching preset
#      against it (`fraglab verify`);
#   5. speed: writes results/gpu_speed.{csv,md} (experiments/scripts/device/gpu_speed_table.py), naming
#      the device, over the shared PyTorch snapshots and the new one;
#   and at the end results/gpu_checks.md (experiments/scripts/device/gpu_checks.py): every step's
#   outcome and what it printed, with the device and the commit.
# Steps 3-5 need PyTorch with CUDA (step 5 without it still measures everything but torch).
# --only takes a comma-separated subset of tests,sanitizer,train,snapshot,speed (default: all).
# --prebuilt DIR runs the binaries experiments/scripts/device/pack_prebuilt.sh packed into DIR
# instead of building: for a GPU machine without the build's dependencies. The unit
# programs then run one by one, as meson test would run them.
# Logs, the snapshot and copies of the results go to OUT_DIR (default: $OUT, else build-gpu/out).
# Exits non-zero if any step fails; every step runs regardless, and the summary says which.
set -uo pipefail
cd "$(dirname "$0")/../../.."
prebuilt=
parts=tests,sanitizer,train,snapshot,speed
while [[ $# -gt 0 ]]; do
  case $1 in
    --prebuilt) prebuilt=$2; shift 2 ;;
    --only) parts=$2; shift 2 ;;
    -*) echo "run_on_gpu.sh: unknown option $1" >&2; exit 2 ;;
    *) break ;;
  esac
done
wants() { [[ ,$parts, == *,$1,* ]]; }
out=${1:-${OUT:-build-gpu/out}}
mkdir -p "$out"
rm -f "$out/steps.txt"
status=0
step() {  # NAME COMMAND...
  local name=$1
  shift
  echo "=== $name"
  if "$@" >"$out/$name.log" 2>&1; then
    echo "ok: $name"
    echo "$name ok" >>"$out/steps.txt"
  else
    local rc=$?
    echo "$name failed $rc" >>"$out/steps.txt"
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

if [[ -n $prebuilt ]]; then
  build=$prebuilt
  export LD_LIBRARY_PATH=$PWD/$prebuilt/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
  # The tests and the GPU table look for ../shared/traces, which does not travel.
  [[ -d ../shared/traces ]] || { mkdir -p ../shared && cp -r "$prebuilt/shared/traces" ../shared/; }
  echo "prebuilt at commit $(cat "$prebuilt/commit" 2>/dev/null || echo unknown)" | tee "$out/binaries.txt"
  if wants tests; then
    echo "=== unit tests (in parallel)"
    for t in "$build"/tests/test_*; do
      name=unit-$(basename "$t")
      (env MESON_SOURCE_ROOT="$PWD" FRAGLAB_PLUGIN="$PWD/$build/plugins/libfraglab_pytorch_allocator.so" \
         "$t" >"$out/$name.log" 2>&1; echo $? >"$out/$name.rc") &
    done
    wait
    for rc in "$out"/unit-*.rc; do
      name=$(basename "$rc" .rc)
      if [[ $(cat "$rc") == 0 ]]; then echo "ok: $name"; echo "$name ok" >>"$out/steps.txt"
      else
        echo "$name failed $(cat "$rc")" >>"$out/steps.txt"
        echo "FAILED ($(cat "$rc")): $name; last lines of $out/$name.log:"; tail -20 "$out/$name.log"; status=1
      fi
      rm "$rc"
    done
    grep -h "no CUDA device" "$out"/unit-*.log && { echo "the device tests skipped on a GPU machine"; status=1; }
    grep -h "^\[  PASSED\|^\[  SKIPPED\|^\[  FAILED" "$out"/unit-*.log
  fi
else
  build=build-gpu
  command -v meson >/dev/null || bash .ci/install-deps
  if [[ -d build-gpu ]]; then meson setup --reconfigure build-gpu -Dcuda=enabled >/dev/null
  else meson setup build-gpu -Dcuda=enabled >/dev/null; fi
  step build ninja -C build-gpu
  if wants tests; then
    step unit-tests meson test -C build-gpu --suite unit --print-errorlogs
    grep -h "no CUDA device" build-gpu/meson-logs/testlog.txt && { echo "the device tests skipped on a GPU machine"; status=1; }
  fi
fi

if wants sanitizer; then
  # The out-of-memory tests' refusals are CUDA API errors on purpose, and each test checks the
  # error it expects, so memcheck's report of API errors is off: what fails this step is a bad
  # device access or a leak. Without compute-sanitizer on the PATH the step fails (127) like
  # any other, its log saying so.
  step sanitizer compute-sanitizer --tool memcheck --leak-check full --report-api-errors no --error-exitcode 1 \
    "$build/tests/test_cuda_backends"
  grep -h "ERROR SUMMARY\|LEAK SUMMARY" "$out/sanitizer.log"
fi

python=${PYTHON:-python3}
plugin=$build/plugins/libfraglab_pytorch_allocator.so
if "$python" -c 'import torch, sys; sys.exit(0 if torch.cuda.is_available() else 1)' 2>/dev/null; then
  if wants train; then
    # PyTorch's own allocator first: its losses are what the plug-in's runs must reproduce.
    step train-native "$python" plugins/pytorch/train_example.py --policy native --losses-out "$out/losses-native.json"
    grep -h "^policy\|^device" "$out/train-native.log"
    for policy in tf_bfc pytorch_caching best_fit; do
      step "train-$policy" env FRAGLAB_STATS=1 "$python" plugins/pytorch/train_example.py --plugin "$plugin" \
        --policy "$policy" --reference "$out/losses-native.json"
      grep -h "^policy\|^device\|^against" "$out/train-$policy.log"
    done
    # GMLake's stitching maps device pages a second time: cuda_vmm's pages, not cudaMalloc's.
    step train-gmlake env FRAGLAB_STATS=1 FRAGLAB_BACKEND=cuda_vmm "$python" plugins/pytorch/train_example.py \
      --plugin "$plugin" --policy gmlake --reference "$out/losses-native.json"
    grep -h "^policy\|^device\|^against" "$out/train-gmlake.log"
  fi
  snapshot=()
  if wants snapshot; then
    step snapshot "$python" experiments/scripts/device/record_snapshot.py -o "$out/small-transformer.pickle"
    step verify "$build/experiments/fraglab" verify "$out/small-transformer.pickle" -p pytorch_caching
    grep -h "matched" "$out/verify.log"
  fi
  [[ -f $out/small-transformer.pickle ]] && snapshot=(--snapshot "$out/small-transformer.pickle")
else
  echo "run_on_gpu.sh: PyTorch with CUDA is not importable by $python: skipping the plug-in, the snapshot and the torch column"
  status=1
  snapshot=()
fi
if wants speed; then
  step gpu-speed "$python" experiments/scripts/device/gpu_speed_table.py --build "$build" "${snapshot[@]}"
  cp results/gpu_speed.csv results/gpu_speed.md "$out/" 2>/dev/null
  cat results/gpu_speed.md 2>/dev/null | sed -n '/## ns per operation/,$p'
fi
"$python" experiments/scripts/device/gpu_checks.py "$out" && cp results/gpu_checks.md "$out/"
echo "=== run_on_gpu.sh: $([[ $status -eq 0 ]] && echo 'every step passed' || echo 'some steps FAILED') (logs in $out)"
exit $status
