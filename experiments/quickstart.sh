#!/usr/bin/env bash
# The main job: install what is needed, build, generate the bundled workload and compare
# the default policies on it, printing the table.
set -euo pipefail
cd "$(dirname "$0")/.."
bash .ci/install-deps
[[ -d build ]] || meson setup build >/dev/null
# The tracer too: `fraglab trace` and the results scripts that trace programs need it.
ninja -C build experiments/fraglab experiments/tracer/libfraglab_tracer.so
mkdir -p build/data
build/experiments/fraglab gen phases --seed 1 -o build/data/phases.trace
build/experiments/fraglab gen random --seed 1 -o build/data/random.trace
echo
build/experiments/fraglab replay build/data/phases.trace build/data/random.trace \
  -p first_fit,next_fit,best_fit,worst_fit,buddy,segregated_pow2,dlmalloc,tlsf,tf_bfc,pytorch_caching --backend heap "$@"
