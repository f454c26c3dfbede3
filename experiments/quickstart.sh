#!/usr/bin/env bash
# The main job: install what is needed, build, generate the bundled workload and compare
# the default policies on it, printing the table.
set -euo pipefail
cd "$(dirname "$0")/.."
bash .ci/install-deps
# Reconfigured when it exists: a build made before pybind11 was installed finds it now.
if [[ -d build ]]; then meson setup --reconfigure build >/dev/null 2>&1 || meson setup --reconfigure build; else meson setup build >/dev/null; fi
# The tracer too: `fraglab trace` and the results scripts that trace programs need it; and
# the Python module (PYTHONPATH=build/experiments/python), where the build found what it needs.
ninja -C build experiments/fraglab experiments/tracer/libfraglab_tracer.so \
  $(ninja -C build -t targets all 2>/dev/null | grep -o '^python-package:' | tr -d : || true)
mkdir -p build/data
build/experiments/fraglab gen phases --seed 1 -o build/data/phases.trace
build/experiments/fraglab gen random --seed 1 -o build/data/random.trace
echo
build/experiments/fraglab replay build/data/phases.trace build/data/random.trace \
  -p first_fit,next_fit,best_fit,worst_fit,buddy,segregated_pow2,dlmalloc,tlsf,tf_bfc,pytorch_caching --backend heap "$@"
