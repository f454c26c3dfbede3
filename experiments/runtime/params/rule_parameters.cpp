#include <fraglab/runtime/params/rule_parameters.hpp>

#include <fraglab/runtime/params/units.hpp>

#include <array>
#include <charconv>
#include <limits>
#include <stdexcept>

namespace fraglab {

std::string size_text(std::size_t bytes)
{
  return bytes == std::numeric_limits<std::size_t>::max() ? "unlimited" : exact_size_text(bytes);
}

std::string real_text(double x)
{
  std::array<char, 32> buf{};
  auto const [end, ec] = std::to_chars(buf.data(), buf.data() + buf.size(), x);
  return ec == std::errc{} ? std::string(buf.data(), end) : std::to_string(x);
}

std::string flag_text(bool b) { return b ? "true" : "false"; }

namespace rule_parameters_detail {

void bad_word(std::string_view key, std::string const& value, std::span<std::string_view const> words)
{
  std::string choices;
  for (std::string_view w : words) choices += (choices.empty() ? "" : ", ") + std::string(w);
  throw std::invalid_argument("parameter " + std::string(key) + ": expected one of " + choices + ", got '" + value + "'");
}

}  // namespace rule_parameters_detail
}  // namespace fraglab
