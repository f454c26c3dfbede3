// Every (index, fit) composition fraglab builds, in one place: the registry compiles each
// (experiments/runtime/registry/instantiate_*.cpp: `fraglab replay -p compose:index=I,fit=F`, the
// named compositions, `fraglab policies`), and the typed suites run the conformance contract
// and the randomized invariants on each (tests/support/compositions.hpp). A new index or fit
// is composed by adding its pairs here, to the list its index belongs to.
//
// Three lists, one per translation unit of the registry, so that a two-core build compiles
// them side by side.
#pragma once

#include <fraglab/engine/allocator.hpp>
#include <fraglab/policies/fits.hpp>
#include <fraglab/policies/indexes/address_ordered_tree_index.hpp>
#include <fraglab/policies/indexes/bins_index.hpp>
#include <fraglab/policies/indexes/fine_bins_index.hpp>
#include <fraglab/policies/indexes/list_index.hpp>
#include <fraglab/policies/indexes/segregated_index.hpp>
#include <fraglab/policies/indexes/tree_index.hpp>
#include <fraglab/policies/policy.hpp>

namespace fraglab {

template <class... Policies>
struct composition_list {};

template <class A, class B>
struct concatenated;
template <class... As, class... Bs>
struct concatenated<composition_list<As...>, composition_list<Bs...>> {
  using type = composition_list<As..., Bs...>;
};

namespace compositions {

using bins_and_trees = composition_list<                                                       //
    policy<bins_index, best_fit>, policy<fine_bins_index, best_fit>, policy<bins_index, worst_fit>,  //
    policy<tree_index, best_fit>, policy<tree_index, worst_fit>,                                     //
    policy<address_ordered_tree_index, first_fit>, policy<address_ordered_tree_index, next_fit>,     //
    policy<address_ordered_tree_index, worst_fit>>;

using segregated = composition_list<policy<segregated_index, good_fit>, policy<segregated_index, best_fit>,
                                    policy<segregated_index, worst_fit>>;

using lists = composition_list<                                                                  //
    policy<lifo_list_index, first_fit>, policy<lifo_list_index, next_fit>,                        //
    policy<lifo_list_index, best_fit>, policy<lifo_list_index, worst_fit>,                        //
    policy<fifo_list_index, first_fit>, policy<fifo_list_index, next_fit>,                        //
    policy<fifo_list_index, best_fit>, policy<fifo_list_index, worst_fit>,                        //
    policy<address_ordered_list_index, first_fit>, policy<address_ordered_list_index, next_fit>,  //
    policy<address_ordered_list_index, best_fit>, policy<address_ordered_list_index, worst_fit>>;

}  // namespace compositions
}  // namespace fraglab
