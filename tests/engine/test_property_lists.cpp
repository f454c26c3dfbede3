// The randomized invariants (randomized_invariants_suite.hpp) over the classic list compositions.
#include "randomized_invariants_suite.hpp"

namespace fraglab::testing {

INSTANTIATE_TYPED_TEST_SUITE_P(Lists, RandomizedInvariants, list_compositions, composition_names);

}  // namespace fraglab::testing
