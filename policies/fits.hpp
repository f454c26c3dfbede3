// Fit rules: which free chunk of at least the request's size to take.
//
// A fit is a compile-time tag that calls the one capability of the index its rule needs.
// An index that lacks it cannot be composed with that fit, so `serves<Index, Fit>` is the
// table of meaningful pairs; the registry instantiates exactly those.
//
// | fit   | rule (Wilson et al. 1995, section 3.5)                       | served by              |
// |-------|--------------------------------------------------------------|------------------------|
// | best  | smallest chunk that fits; lowest address (list order) on ties | bins, tree, seglist, lists |
// | first | first chunk that fits in the index's order                   | ao_tree, lists         |
// | next  | first fit, resuming where the previous search stopped        | ao_tree, lists         |
// | worst | largest chunk, if it fits                                    | bins, tree, ao_tree, seglist, lists |
// | good  | any chunk of the first size class whose every chunk fits      | seglist (TLSF)         |
#pragma once

#include <fraglab/engine/part_interface.hpp>

#include <cstddef>
#include <string_view>

namespace fraglab {

struct best_fit {
  static constexpr std::string_view name = "best";
  template <class Ix>
  static auto* select(Ix& ix, std::size_t n) requires requires { ix.find_best(n); }
  {
    return ix.find_best(n);
  }
};

struct first_fit {
  static constexpr std::string_view name = "first";
  template <class Ix>
  static auto* select(Ix& ix, std::size_t n) requires requires { ix.find_first(n); }
  {
    return ix.find_first(n);
  }
};

struct next_fit {
  static constexpr std::string_view name = "next";
  template <class Ix>
  static auto* select(Ix& ix, std::size_t n) requires requires { ix.find_next(n); }
  {
    return ix.find_next(n);
  }
};

// Every index can name its largest chunk (lowest address among equals), so worst fit needs
// no capability of its own.
struct worst_fit {
  static constexpr std::string_view name = "worst";
  template <class Ix>
  static auto* select(Ix& ix, std::size_t n) requires requires { ix.largest(); }
  {
    auto* c = ix.largest();
    return c != nullptr && c->size >= n ? c : nullptr;
  }
};

struct good_fit {
  static constexpr std::string_view name = "good";
  template <class Ix>
  static auto* select(Ix& ix, std::size_t n) requires requires { ix.find_good(n); }
  {
    return ix.find_good(n);
  }
  // A chunk is only found once it reaches the next size-class boundary above n.
  template <class Ix>
  static std::size_t findable_size(Ix const& ix, std::size_t n)
  {
    return ix.good_fit_size(n);
  }
};

}  // namespace fraglab
