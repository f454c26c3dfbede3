// A malformed input, reported as FILE:LINE: what was expected.
#pragma once

#include <cstddef>
#include <stdexcept>
#include <string>

namespace fraglab {

class input_error : public std::runtime_error {
 public:
  input_error(std::string const& file, std::size_t line, std::string const& what)
      : std::runtime_error(file + ":" + std::to_string(line) + ": " + what)
  {
  }
  explicit input_error(std::string const& what) : std::runtime_error(what) {}
};

}  // namespace fraglab
