// The conformance suite (conformance_suite.hpp) over the classic list compositions.
#include "conformance_suite.hpp"

namespace fraglab::testing {

INSTANTIATE_TYPED_TEST_SUITE_P(Lists, Conformance, list_compositions, composition_names);

}  // namespace fraglab::testing
