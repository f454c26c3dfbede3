#!/usr/bin/env bash
# The installed headers: `meson install` puts engine/, policies/ and backends/ under
# include/fraglab/ with a pkg-config file, and the README's C++ example, its includes written
# <fraglab/...>, compiles against them alone (no source tree on its path) and runs.
set -u
build=${1:?usage: test_install.sh BUILD_DIR CXX}
cxx=${2:?usage: test_install.sh BUILD_DIR CXX}
root=$(realpath "$(dirname "$0")/../..")
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
source "$(dirname "$0")/../support/expect.sh"

meson install -C "$build" --destdir "$work/root" --tags devel --no-rebuild >"$work/install.log" 2>&1; rc=$?
expect "meson install puts the headers and fraglab.pc in place (exit $rc)" \
  '[[ $rc -eq 0 && -f $(find "$work/root" -name fraglab.pc | head -1) && -f $(find "$work/root" -path "*/include/fraglab/engine/allocator.hpp" | head -1) ]]'
pc=$(find "$work/root" -name fraglab.pc | head -1)
prefix=$(sed -n 's/^prefix=//p' "$pc")
cflags=$(PKG_CONFIG_PATH=$(dirname "$pc") pkg-config --define-variable=prefix="$work/root$prefix" --cflags fraglab)
expect "pkg-config names the installed include directory ($cflags)" '[[ $cflags == *"$work/root"*/include* && $cflags != *include/fraglab* ]]'
cp "$root/tests/docs/readme_example.cpp" "$work/example.cpp"
expect "the example includes <fraglab/...> only" '! grep -q "#include \"" "$work/example.cpp" && grep -q "#include <fraglab/engine/allocator.hpp>" "$work/example.cpp"'
# shellcheck disable=SC2086
(cd "$work" && "$cxx" -std=c++20 -O1 $cflags example.cpp -o example) 2>"$work/compile.log"; rc=$?
expect "it compiles against the installed headers alone (exit $rc)" '[[ $rc -eq 0 ]]' || cat "$work/compile.log"
out=$("$work/example" 2>&1); rc=$?
expect "and runs ($out)" '[[ $rc -eq 0 && $out == *"bytes reserved at the peak"* ]]'
report test_install
