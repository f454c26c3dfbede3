// The plain data a pickle may hold when fraglab reads it: None, bool, int, float, str,
// bytes, list, tuple, dict (and set). Nothing that names or calls Python code exists here.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <variant>
#include <vector>

namespace fraglab::pickle {

struct value;
using value_ptr = std::shared_ptr<value>;  // shared: the memo lets one object appear twice

struct list_value {
  std::vector<value_ptr> items;
};
struct dict_value {
  std::vector<std::pair<value_ptr, value_ptr>> items;  // in insertion order
};
struct none_value {};

struct value {
  enum class kind { none, boolean, integer, real, text, bytes, list, tuple, dict };
  std::variant<none_value, bool, std::int64_t, double, std::string, std::vector<std::uint8_t>, list_value, dict_value> v;
  bool is_tuple = false;  // list_value holding a tuple

  [[nodiscard]] bool is_none() const { return std::holds_alternative<none_value>(v); }
  [[nodiscard]] bool is_int() const { return std::holds_alternative<std::int64_t>(v); }
  [[nodiscard]] bool is_text() const { return std::holds_alternative<std::string>(v); }
  [[nodiscard]] bool is_list() const { return std::holds_alternative<list_value>(v); }
  [[nodiscard]] bool is_dict() const { return std::holds_alternative<dict_value>(v); }

  [[nodiscard]] std::int64_t as_int() const { return std::get<std::int64_t>(v); }
  [[nodiscard]] std::string const& as_text() const { return std::get<std::string>(v); }
  [[nodiscard]] std::vector<value_ptr> const& as_list() const { return std::get<list_value>(v).items; }

  // The value under a string key of a dict, or null when absent (or not a dict).
  [[nodiscard]] value const* get(std::string_view key) const
  {
    auto const* d = std::get_if<dict_value>(&v);
    if (d == nullptr) return nullptr;
    for (auto const& [k, val] : d->items)
      if (k->is_text() && k->as_text() == key) return val.get();
    return nullptr;
  }
};

}  // namespace fraglab::pickle
