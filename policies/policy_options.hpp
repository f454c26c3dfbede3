// A composition named by its parts instead of by position: `policy<I, F, S, C, G, Z, P, R>`
// asks a reader to count to eight, and to spell out every default before the one part that
// differs. `policy_with` takes the parts as named options, in any order, each at most once;
// the index and the fit are required, every other part keeps policy's default.
//
//   using tlsf = policy_with<index_is<tlsf_segregated_index>, fit_is<good_fit>,
//                            coalesce_is<fixed_coalescing<coalesce_mode::immediate>>>;
//   // the same type as policy<tlsf_segregated_index, good_fit, threshold_split,
//   //                         fixed_coalescing<coalesce_mode::immediate>>
//
// An argument that is not one of these options, or an option given twice, does not compile.
#pragma once

#include <fraglab/policies/policy.hpp>

#include <type_traits>

namespace fraglab {

template <class T> struct index_is {};
template <class T> struct fit_is {};
template <class T> struct split_is {};
template <class T> struct coalesce_is {};
template <class T> struct growth_is {};
template <class T> struct size_is {};
template <class T> struct pools_is {};
template <class T> struct reclaim_is {};

namespace detail {

// Option<T> -> T where the argument is that option; `value` says whether it was.
template <template <class> class Option, class Argument>
struct option_value : std::false_type {};
template <template <class> class Option, class T>
struct option_value<Option, Option<T>> : std::true_type {
  using type = T;
};

template <template <class> class Option, class Default, class... Arguments>
struct option_or {
  using type = Default;
};
template <template <class> class Option, class Default, class First, class... Rest>
struct option_or<Option, Default, First, Rest...> {
  using type = typename std::conditional_t<option_value<Option, First>::value, option_value<Option, First>,
                                           option_or<Option, Default, Rest...>>::type;
};

template <template <class> class Option, class... Arguments>
inline constexpr int times_given = (0 + ... + int{option_value<Option, Arguments>::value});

template <class Argument>
inline constexpr int options_in =
    int{option_value<index_is, Argument>::value} + int{option_value<fit_is, Argument>::value} +
    int{option_value<split_is, Argument>::value} + int{option_value<coalesce_is, Argument>::value} +
    int{option_value<growth_is, Argument>::value} + int{option_value<size_is, Argument>::value} +
    int{option_value<pools_is, Argument>::value} + int{option_value<reclaim_is, Argument>::value};

template <class... Options>
struct checked_options {
  static_assert((... && (options_in<Options> == 1)),
                "policy_with takes index_is, fit_is, split_is, coalesce_is, growth_is, size_is, pools_is and "
                "reclaim_is options only");
  static_assert(times_given<index_is, Options...> == 1, "policy_with needs exactly one index_is<...>");
  static_assert(times_given<fit_is, Options...> == 1, "policy_with needs exactly one fit_is<...>");
  static_assert(times_given<split_is, Options...> <= 1 && times_given<coalesce_is, Options...> <= 1 &&
                    times_given<growth_is, Options...> <= 1 && times_given<size_is, Options...> <= 1 &&
                    times_given<pools_is, Options...> <= 1 && times_given<reclaim_is, Options...> <= 1,
                "policy_with: an option is given twice");
  using default_policy = policy<void, void>;
  using type = policy<typename option_or<index_is, void, Options...>::type, typename option_or<fit_is, void, Options...>::type,
                      typename option_or<split_is, typename default_policy::split, Options...>::type,
                      typename option_or<coalesce_is, typename default_policy::coalesce, Options...>::type,
                      typename option_or<growth_is, typename default_policy::growth, Options...>::type,
                      typename option_or<size_is, typename default_policy::size, Options...>::type,
                      typename option_or<pools_is, typename default_policy::pools, Options...>::type,
                      typename option_or<reclaim_is, typename default_policy::reclaim, Options...>::type>;
};

}  // namespace detail

template <class... Options>
using policy_with = typename detail::checked_options<Options...>::type;

}  // namespace fraglab
