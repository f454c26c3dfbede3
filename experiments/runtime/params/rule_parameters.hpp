// The parameters a rule declares (policies/rule_parameter.hpp) as a param_set's KEY=VALUE
// texts: a rule read from the values a user gave (the rest at their defaults), a rule
// rendered as the values that build it, and the rows of the parameter table. The one place
// where a key meets its member.
#pragma once

#include <fraglab/policies/rule_parameter.hpp>
#include <fraglab/runtime/params/param_set.hpp>

#include <cstddef>
#include <span>
#include <string>
#include <string_view>
#include <tuple>
#include <type_traits>

namespace fraglab {

// Texts that read back as the same value: a size exactly in the unit that fits (256MiB), or
// `unlimited` for the largest (param_set::size's word for it); a number in its shortest form
// (0.5, 1, 2); a flag as true or false.
std::string size_text(std::size_t bytes);
std::string real_text(double x);
std::string flag_text(bool b);

namespace rule_parameters_detail {

[[noreturn]] void bad_word(std::string_view key, std::string const& value, std::span<std::string_view const> words);

template <class T>
inline constexpr bool is_words_member = std::is_enum_v<T> || std::is_same_v<T, bool>;

template <class Member>
Member read_value(param_set const& p, std::string_view key, std::span<std::string_view const> words)
{
  if constexpr (is_words_member<Member>) {
    if (!words.empty()) {
      std::string const text = p.text(key);
      for (std::size_t i = 0; i < words.size(); ++i)
        if (words[i] == text) return static_cast<Member>(i);
      bad_word(key, text, words);
    }
  }
  if constexpr (std::is_same_v<Member, bool>) return p.flag(key);
  else if constexpr (std::is_same_v<Member, std::size_t>) return p.size(key);
  else if constexpr (std::is_same_v<Member, double>) return p.real(key);
  else if constexpr (std::is_same_v<Member, unsigned>) return p.count(key);
  else {
    static_assert(std::is_enum_v<Member>, "a rule's parameter is a size_t, a double, an unsigned, a bool or an enum");
    bad_word(key, "", words);  // an enum declared without its words
  }
}

template <class Member>
std::string value_text(Member value, std::span<std::string_view const> words)
{
  if constexpr (is_words_member<Member>)
    if (!words.empty()) return std::string(words[static_cast<std::size_t>(value)]);
  if constexpr (std::is_same_v<Member, bool>) return flag_text(value);
  else if constexpr (std::is_same_v<Member, std::size_t>) return size_text(value);
  else if constexpr (std::is_same_v<Member, double>) return real_text(value);
  else if constexpr (std::is_same_v<Member, unsigned>) return std::to_string(value);
  else return std::to_string(static_cast<std::size_t>(value));
}

template <class Rule, class F>
void for_each_parameter(F&& f)
{
  std::apply([&](auto const&... field) { (f(field), ...); }, Rule::parameters());
}

}  // namespace rule_parameters_detail

// The rule the values give, every member a parameter names read (its default where unset),
// the others as `rule` has them. Throws std::invalid_argument naming a malformed value.
template <class Rule>
Rule rule_from_params(param_set const& p, Rule rule = {})
{
  rule_parameters_detail::for_each_parameter<Rule>([&](auto const& field) {
    using member = typename std::remove_cvref_t<decltype(field)>::member_type;
    rule.*(field.member) = rule_parameters_detail::read_value<member>(p, field.key, field.words);
  });
  return rule;
}

// The values that build `rule` again: rule_from_params(params_of_rule(r)) equals r in every
// member a parameter names.
template <class Rule>
param_set params_of_rule(Rule const& rule)
{
  param_set p;
  rule_parameters_detail::for_each_parameter<Rule>(
      [&](auto const& field) { p.set(field.key, rule_parameters_detail::value_text(rule.*(field.member), field.words)); });
  return p;
}

// Each parameter's key, part, default (a default-constructed rule's member, as text) and
// meaning: the rows of the table `fraglab policies --keys` prints.
template <class Rule, class F>
void for_each_parameter_row(F&& row)
{
  Rule const defaults{};
  rule_parameters_detail::for_each_parameter<Rule>([&](auto const& field) {
    row(field.key, Rule::part, rule_parameters_detail::value_text(defaults.*(field.member), field.words), field.help);
  });
}

}  // namespace fraglab
