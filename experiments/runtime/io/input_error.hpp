// A malformed input, reported as FILE:LINE: what was expected.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

namespace fraglab {

class input_error : public std::runtime_error {
 public:
  input_error(std::string const& file, std::size_t line, std::string const& what)
      : std::runtime_error(file + ":" + std::to_string(line) + ": " + what)
  {
  }
  explicit input_error(std::string const& what) : std::runtime_error(what) {}
};

// Text from an input as a message quotes it: between single quotes, a byte that is not
// printable ASCII as \xNN, and cut after 60 characters, so that a binary file or a long
// line shows what it is rather than filling the terminal with its bytes.
inline std::string quoted(std::string_view text)
{
  constexpr std::size_t shown = 60;
  std::string out = "'";
  for (std::size_t i = 0; i < text.size() && i < shown; ++i) {
    auto const c = static_cast<unsigned char>(text[i]);
    if (c >= 0x20 && c < 0x7f) {
      out += static_cast<char>(c);
    } else {
      char hex[5];
      std::snprintf(hex, sizeof hex, "\\x%02x", c);
      out += hex;
    }
  }
  out += text.size() > shown ? "'... (" + std::to_string(text.size()) + " bytes)" : "'";
  return out;
}

// Names as a message lists them: a, b, c.
inline std::string listed(std::vector<std::string> const& names)
{
  std::string out;
  for (std::size_t i = 0; i < names.size(); ++i) out += (i == 0 ? "" : ", ") + names[i];
  return out;
}

// An address as messages show it: 0x7f3a00000000.
inline std::string address_text(std::uint64_t address)
{
  char buf[24];
  std::snprintf(buf, sizeof buf, "0x%llx", static_cast<unsigned long long>(address));
  return buf;
}

}  // namespace fraglab
