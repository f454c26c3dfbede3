// Runtime parameters of a composition, as `KEY=VALUE` strings from `--set` and from
// `compose:` specs, checked against one table of every known key.
//
// The table is the single source of each key's default and meaning: `fraglab policies
// --keys` prints it, and a key that is not in it is an error naming the known keys. The
// generic parts' keys come from their rules, which declare them (policies/rule_parameter.hpp);
// dlmalloc's and GMLake's from their settings; PyTorch's, TF's and the backends' are
// written in parameter_table.cpp.
#pragma once

#include <cstddef>
#include <map>
#include <span>
#include <string>
#include <string_view>

namespace fraglab {

struct param_spec {
  std::string_view key;
  std::string_view part;           // index, split, coalesce, growth, size, pools, backend
  std::string_view default_value;  // as a user would type it
  std::string_view help;
};

std::span<param_spec const> known_params();

// The part a known key belongs to; throws std::invalid_argument for an unknown key.
std::string_view part_of(std::string_view key);

// Whether two values a key could be given are one setting however the key reads them: the
// same text, number (`1` and `1.0`), size (`1MiB` and `1048576`) or flag (`1` and `true`).
// A sweep over both would run one cell twice under two labels.
bool same_param_value(std::string_view a, std::string_view b);

class param_set {
 public:
  // Throws std::invalid_argument for an unknown key or a malformed KEY=VALUE. set()
  // replaces a value; set_assignment(), which reads what a user listed (--set,
  // FRAGLAB_SET), refuses a key the set holds already, whose second value would silently
  // replace the first.
  void set(std::string_view key, std::string_view value);
  void set_assignment(std::string_view key_equals_value);

  // A later set overrides an earlier one; `over` wins over *this.
  [[nodiscard]] param_set merged_with(param_set const& over) const;

  [[nodiscard]] bool has(std::string_view key) const { return values_.count(std::string(key)) != 0; }
  [[nodiscard]] std::string text(std::string_view key) const;
  [[nodiscard]] std::size_t size(std::string_view key) const;     // accepts units: 2MiB
  [[nodiscard]] double real(std::string_view key) const;
  [[nodiscard]] bool flag(std::string_view key) const;            // true/false/1/0/yes/no
  [[nodiscard]] unsigned count(std::string_view key) const;

  [[nodiscard]] std::map<std::string, std::string> const& values() const noexcept { return values_; }

 private:
  std::map<std::string, std::string> values_;
};

}  // namespace fraglab
