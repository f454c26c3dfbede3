#!/usr/bin/env bash
# Instructions per operation of every fraglab subject in results/speed_instructions.csv,
# counted under callgrind in this build, must stay within 2% of the record
# (experiments/check_instructions.py): a slower engine or policy fails here, whatever the
# machine's noise, since a count is exact for one build of one commit.
#
# A count is exact only within one toolchain, so the test runs where the build is the kind
# the record was counted with: a release build by the same g++ version (the record's
# `input g++` line: speed_table.py traces the system's g++ compiling, the compiler Meson
# builds with unless CXX names another), with valgrind installed and the record's host
# trace in ../shared/traces. Anywhere else it skips and says why. A change that costs
# instructions on purpose is recorded by running experiments/speed_table.py again
# (docs/performance.md, "The benchmark suite").
set -uo pipefail
build=$(realpath "${1:?usage: test_instruction_record.sh BUILD_DIR GCC_VERSION}")
gcc_version=${2:?}
root=$(cd "$(dirname "$0")/../.." && pwd)
record=$root/results/speed_instructions.csv
skip() { echo "SKIP: $*"; exit 77; }

command -v valgrind > /dev/null || skip "valgrind is not installed (bash .ci/install-deps installs it)"
[[ -f $record ]] || { echo "FAIL: $record is missing"; exit 1; }
compiler=$(sed -n 's/^# input g++: //p' "$record")
[[ -n $compiler ]] || { echo "FAIL: $record has no '# input g++:' line naming the compiler it was counted with"; exit 1; }
[[ $compiler == *" $gcc_version" ]] ||
  skip "the record was counted in a build by '$compiler'; this build's compiler is gcc $gcc_version, and counts compare only within one toolchain"
trace=$(grep -v -e '^#' -e '^subject,' "$record" | head -1 | cut -d, -f3)
[[ -f $root/../shared/traces/host/$trace.csv ]] || skip "the record's trace ../shared/traces/host/$trace.csv is not here"

/usr/bin/python3 "$root/experiments/check_instructions.py" --build "$build" --record "$record"
status=$?
((status == 0)) || echo "FAIL: check_instructions.py exited $status (why: above). If a subject costs more" \
  "instructions than results/speed_instructions.csv records and that is the price of the change," \
  "regenerate the record with experiments/speed_table.py"
exit $status
