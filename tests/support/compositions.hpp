// Every (index, fit) composition the engine supports, for typed suites.
#pragma once

#include "engine/allocator.hpp"
#include "policies/fits.hpp"
#include "policies/indexes/address_ordered_tree_index.hpp"
#include "policies/indexes/bins_index.hpp"
#include "policies/indexes/fine_bins_index.hpp"
#include "policies/indexes/list_index.hpp"
#include "policies/indexes/segregated_index.hpp"
#include "policies/indexes/tree_index.hpp"

#include <gtest/gtest.h>

namespace fraglab::testing {

// Two halves, each instantiated by its own translation unit of the typed suites
// (TYPED_TEST_SUITE_P), so that a two-core build compiles them side by side: one
// translation unit over all 22 took a third of the sanitizer build's wall time alone.
// Each half's file instantiates both suites (conformance and randomized invariants): most
// of a composition's compile time is its allocator, which two files would each compile.
// A new composition joins the half its index belongs to.
using tree_and_bin_compositions = ::testing::Types<
    policy<bins_index, best_fit>, policy<bins_index, worst_fit>,                                  //
    policy<fine_bins_index, best_fit>,                                                            //
    policy<tree_index, best_fit>, policy<tree_index, worst_fit>,                                  //
    policy<address_ordered_tree_index, first_fit>, policy<address_ordered_tree_index, next_fit>,  //
    policy<address_ordered_tree_index, worst_fit>,                                                //
    policy<segregated_index, good_fit>, policy<segregated_index, best_fit>,                       //
    policy<segregated_index, worst_fit>>;

using list_compositions = ::testing::Types<
    policy<lifo_list_index, first_fit>, policy<lifo_list_index, next_fit>,                        //
    policy<lifo_list_index, best_fit>, policy<lifo_list_index, worst_fit>,                        //
    policy<fifo_list_index, first_fit>, policy<fifo_list_index, next_fit>,                        //
    policy<fifo_list_index, best_fit>, policy<fifo_list_index, worst_fit>,                        //
    policy<address_ordered_list_index, first_fit>, policy<address_ordered_list_index, next_fit>,  //
    policy<address_ordered_list_index, best_fit>, policy<address_ordered_list_index, worst_fit>>;

// Readable test names: "bins/best".
struct composition_names {
  template <class P>
  static std::string GetName(int)
  {
    return std::string(P::index::name) + "_" + std::string(P::fit::name);
  }
};

}  // namespace fraglab::testing
