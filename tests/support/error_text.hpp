// The message of what a call throws, for tests that compare a refusal's whole text.
#pragma once

#include <string>
#include <utility>

namespace fraglab::testing {

// What `call` throws as Error, or "no error" where it returns: a test that expects a refusal
// then fails on a message, not on an escaped exception.
template <class Error, class Call>
std::string error_text(Call&& call)
{
  try {
    std::forward<Call>(call)();
  } catch (Error const& e) {
    return e.what();
  }
  return "no error";
}

}  // namespace fraglab::testing
