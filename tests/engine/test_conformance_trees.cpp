// The conformance suite (conformance_suite.hpp) over the tree, bin and segregated-list compositions.
#include "conformance_suite.hpp"

namespace fraglab::testing {

INSTANTIATE_TYPED_TEST_SUITE_P(TreesAndBins, Conformance, tree_and_bin_compositions, composition_names);

}  // namespace fraglab::testing
