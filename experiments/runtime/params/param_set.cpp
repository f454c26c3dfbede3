#include <fraglab/runtime/params/param_set.hpp>

#include <fraglab/runtime/params/closest_name.hpp>
#include <fraglab/runtime/params/units.hpp>

#include <charconv>
#include <cmath>
#include <limits>
#include <optional>
#include <stdexcept>
#include <vector>

namespace fraglab {
namespace {

param_spec const& spec_of(std::string_view key)
{
  for (auto const& p : known_params())
    if (p.key == key) return p;
  std::string known;
  std::vector<std::string_view> keys;
  for (auto const& p : known_params()) {
    known += (known.empty() ? "" : ", ") + std::string(p.key);
    keys.push_back(p.key);
  }
  std::string const guess = closest_name(key, keys);
  throw std::invalid_argument("unknown parameter '" + std::string(key) + "'" + (guess.empty() ? "" : ": did you mean " + guess + "?") +
                              " (known: " + known + "; `fraglab policies NAME` lists those a policy reads)");
}

[[noreturn]] void bad_value(std::string_view key, std::string const& value, std::string_view expected)
{
  throw std::invalid_argument("parameter " + std::string(key) + ": expected " + std::string(expected) + ", got '" +
                              value + "'");
}

std::optional<bool> flag_value(std::string_view v)
{
  if (v == "true" || v == "1" || v == "yes" || v == "on") return true;
  if (v == "false" || v == "0" || v == "no" || v == "off") return false;
  return std::nullopt;
}

// A finite number: from_chars also reads "nan" and "inf", which pass every range check
// written as a comparison (nan < 0 is false) and then decide nothing or everything.
std::optional<double> real_value(std::string_view v)
{
  double d = 0;
  auto const [end, ec] = std::from_chars(v.data(), v.data() + v.size(), d);
  if (ec != std::errc{} || end != v.data() + v.size() || !std::isfinite(d)) return std::nullopt;
  return d;
}

}  // namespace

bool same_param_value(std::string_view a, std::string_view b)
{
  if (a == b) return true;
  if (auto const x = real_value(a), y = real_value(b); x && y) return *x == *y;
  if (auto const x = parse_size(a), y = parse_size(b); x && y) return *x == *y;
  if (auto const x = flag_value(a), y = flag_value(b); x && y) return *x == *y;
  return false;
}

std::string_view part_of(std::string_view key) { return spec_of(key).part; }

void param_set::set(std::string_view key, std::string_view value)
{
  (void)spec_of(key);
  values_[std::string(key)] = std::string(value);
}

void param_set::set_assignment(std::string_view kv)
{
  std::size_t const eq = kv.find('=');
  if (eq == std::string_view::npos || eq == 0)
    throw std::invalid_argument("expected KEY=VALUE, got '" + std::string(kv) + "'");
  std::string_view const key = kv.substr(0, eq);
  if (has(key)) throw std::invalid_argument(std::string(key) + " is given twice (" + text(key) + ", then " + std::string(kv) + ")");
  set(key, kv.substr(eq + 1));
}

param_set param_set::merged_with(param_set const& over) const
{
  param_set out = *this;
  for (auto const& [k, v] : over.values_) out.values_[k] = v;
  return out;
}

std::string param_set::text(std::string_view key) const
{
  auto it = values_.find(std::string(key));
  return it != values_.end() ? it->second : std::string(spec_of(key).default_value);
}

std::size_t param_set::size(std::string_view key) const
{
  std::string const v = text(key);
  if (v == "unlimited") return std::numeric_limits<std::size_t>::max();
  auto const n = parse_size(v);
  if (!n) bad_value(key, v, "a size such as 4096, 512MiB or 1.5GB, or 'unlimited'");
  return *n;
}

double param_set::real(std::string_view key) const
{
  std::string const v = text(key);
  auto const d = real_value(v);
  if (!d) bad_value(key, v, "a finite number");
  return *d;
}

bool param_set::flag(std::string_view key) const
{
  std::string const v = text(key);
  auto const f = flag_value(v);
  if (!f) bad_value(key, v, "true or false");
  return *f;
}

unsigned param_set::count(std::string_view key) const
{
  std::string const v = text(key);
  unsigned n = 0;
  auto const [end, ec] = std::from_chars(v.data(), v.data() + v.size(), n);
  if (ec != std::errc{} || end != v.data() + v.size()) bad_value(key, v, "a non-negative integer");
  return n;
}

}  // namespace fraglab
