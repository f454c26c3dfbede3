#!/usr/bin/env bash
# Packs a CUDA-enabled build for a GPU machine that cannot build fraglab itself (no Boost,
# GoogleTest or Google Benchmark there, and nothing can be installed), so that
#
#   bash experiments/scripts/device/pack_prebuilt.sh [BUILD] [DEST]      # here, where it was built
#   bash experiments/scripts/device/run_on_gpu.sh --prebuilt DEST [OUT]   # there, in the same checkout
#
# runs everything run_on_gpu.sh runs, from these binaries instead of a new build.
#
# DEST (default .gpu, which .git/info/exclude should name) gets, in the build's own layout:
# the unit test programs, fraglab, bench_allocators and the PyTorch plug-in, stripped; in
# DEST/lib the shared libraries they load that are not the C and C++ runtimes (those of
# the target machine are newer, which is what glibc and libstdc++ allow); and in
# DEST/shared/traces a copy of ../shared/traces, which the tests and the GPU table read and
# which does not travel with a checkout.
set -euo pipefail
cd "$(dirname "$0")/../../.."
build=${1:-build}
dest=${2:-.gpu}
programs=(tests/test_engine_units tests/test_presets tests/test_compositions
          tests/test_experiments tests/test_pytorch_plugin tests/test_cuda_backends
          experiments/fraglab benchmarks/bench_allocators plugins/libfraglab_pytorch_allocator.so)
for p in "${programs[@]}"; do
  [[ -f $build/$p ]] || { echo "pack_prebuilt.sh: $build/$p is missing: build with CUDA first (meson setup $build -Dcuda=enabled)" >&2; exit 1; }
done
rm -rf "$dest"
mkdir -p "$dest/lib" "$dest/shared"
for p in "${programs[@]}"; do
  mkdir -p "$dest/$(dirname "$p")"
  strip -o "$dest/$p" "$build/$p"
  ldd "$build/$p" | awk '$3 ~ /^\// {print $3}' | while read -r lib; do
    case $(basename "$lib") in
      libc.so*|libm.so*|libstdc++.so*|libgcc_s.so*|libpthread.so*|libdl.so*|librt.so*|ld-linux*) ;;
      *) cp -Ln "$lib" "$dest/lib/" ;;
    esac
  done
done
cp -r ../shared/traces "$dest/shared/"
git rev-parse HEAD >"$dest/commit"
du -sh "$dest"
