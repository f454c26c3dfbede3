// The conformance suite (conformance_suite.hpp) and the randomized invariants
// (randomized_invariants_suite.hpp) over the tree, bin and segregated-list compositions.
// Both suites in one translation unit, so that each composition's allocator is compiled
// once for the two of them (tests/support/compositions.hpp says why that matters).
#include "conformance_suite.hpp"
#include "randomized_invariants_suite.hpp"

namespace fraglab::testing {

INSTANTIATE_TYPED_TEST_SUITE_P(TreesAndBins, Conformance, tree_and_bin_compositions, composition_names);
INSTANTIATE_TYPED_TEST_SUITE_P(TreesAndBins, RandomizedInvariants, tree_and_bin_compositions, composition_names);

}  // namespace fraglab::testing
