// A rule's runtime parameters, declared once, in the rule.
//
// A rule with parameters names its part and lists them:
//
// | expression              | type                                   | meaning                                   |
// |-------------------------|----------------------------------------|-------------------------------------------|
// | `Rule::part`            | `std::string_view`                     | the part the keys belong to (`split`)     |
// | `Rule::parameters()`    | a `std::tuple` of `rule_parameter<Rule, M>` | each key, the member it sets, its meaning |
//
// A member is a size (`std::size_t`), a number (`double`), a count (`unsigned`), a flag
// (`bool`), or one of a few words (a `bool` or an enum with `words`: the values' names in the
// order of the values, false before true). Its default is the member's initializer, and only
// that: the registry renders a default-constructed rule for the table `fraglab policies
// --keys` prints, reads `--set` values into the members, and renders a preset's rule back as
// the values that build it (experiments/runtime/params/rule_parameters.hpp).
#pragma once

#include <span>
#include <string_view>

namespace fraglab {

template <class Rule, class Member>
struct rule_parameter {
  using rule_type = Rule;
  using member_type = Member;

  std::string_view key;
  Member Rule::*member;
  std::string_view help;
  std::span<std::string_view const> words{};  // a bool's or an enum's values as typed, in order
};

template <class Rule, class Member>
constexpr rule_parameter<Rule, Member> parameter(std::string_view key, Member Rule::*member, std::string_view help,
                                                 std::span<std::string_view const> words = {})
{
  return {key, member, help, words};
}

}  // namespace fraglab
