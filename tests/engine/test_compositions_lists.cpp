// The conformance suite (conformance_suite.hpp) and the randomized invariants
// (randomized_invariants_suite.hpp) over the classic list compositions, in one translation
// unit for the reason test_compositions_trees.cpp gives.
#include "conformance_suite.hpp"
#include "randomized_invariants_suite.hpp"

namespace fraglab::testing {

INSTANTIATE_TYPED_TEST_SUITE_P(Lists, Conformance, list_compositions, composition_names);
INSTANTIATE_TYPED_TEST_SUITE_P(Lists, RandomizedInvariants, list_compositions, composition_names);

}  // namespace fraglab::testing
