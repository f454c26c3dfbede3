# The checks of the shell test scripts (sourced): `expect DESCRIPTION CONDITION` evaluates
# CONDITION in the caller's shell and counts it passed, or failed with its description
# printed; `report NAME` prints the counts and fails if any check failed.
passed=0 failed=0
pass() { passed=$((passed + 1)); }
fail() { failed=$((failed + 1)); echo "FAIL: $*"; }
expect() { if eval "$2"; then pass; else fail "$1"; fi; }
report() {
  echo "$1: $passed passed, $failed failed"
  ((failed == 0))
}
