// Every (index, fit) composition the engine supports (policies/compositions.hpp), for typed
// suites.
#pragma once

#include <fraglab/policies/compositions.hpp>

#include <gtest/gtest.h>

namespace fraglab::testing {

template <class List>
struct as_gtest_types;
template <class... Policies>
struct as_gtest_types<composition_list<Policies...>> {
  using type = ::testing::Types<Policies...>;
};

// Two halves of policies/compositions.hpp's table, each instantiated by its own translation
// unit of the typed suites (TYPED_TEST_SUITE_P), so that a two-core build compiles them side
// by side: one translation unit over all 23 took a third of the sanitizer build's wall time
// alone. Each half's file instantiates both suites (conformance and randomized invariants):
// most of a composition's compile time is its allocator, which two files would each compile.
using tree_and_bin_compositions = typename as_gtest_types<
    typename concatenated<compositions::bins_and_trees, compositions::segregated>::type>::type;
using list_compositions = typename as_gtest_types<compositions::lists>::type;

// Readable test names: "bins/best".
struct composition_names {
  template <class P>
  static std::string GetName(int)
  {
    return std::string(P::index::name) + "_" + std::string(P::fit::name);
  }
};

}  // namespace fraglab::testing
