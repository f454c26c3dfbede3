// The randomized invariants (randomized_invariants_suite.hpp) over the tree, bin and segregated-list compositions.
#include "randomized_invariants_suite.hpp"

namespace fraglab::testing {

INSTANTIATE_TYPED_TEST_SUITE_P(TreesAndBins, RandomizedInvariants, tree_and_bin_compositions, composition_names);

}  // namespace fraglab::testing
