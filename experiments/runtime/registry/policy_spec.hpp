// A policy as `-p` names it:
//
//   NAME[:KEY=VALUE[,KEY=VALUE...]][@LABEL]
//
// NAME is a preset, a named composition, or `compose`, which then names its parts with
// index=I and fit=F among its KEY=VALUEs. The assignments are this policy's own parameters
// (a --set that names one of them again is refused: one place per setting); LABEL, when
// given, names the policy's rows instead of the spec (README, "Using fraglab").
#pragma once

#include <fraglab/runtime/params/param_set.hpp>

#include <string>
#include <string_view>
#include <vector>

namespace fraglab {

struct policy_spec {
  std::string base;        // the NAME
  param_set params;        // the KEY=VALUEs, index and fit of `compose` aside
  std::string index, fit;  // `compose` only
  std::string label;       // the rows' name: LABEL, else the spec less its @LABEL
};

inline constexpr std::string_view compose_name = "compose";

// Throws std::invalid_argument naming the spec and what it expected.
policy_spec parse_policy_spec(std::string_view text);

// Splits -p values: commas separate policies, except that KEY=VALUE pieces after a spec
// with settings (`NAME:KEY=VALUE`, `compose:...`) continue that spec.
std::vector<std::string> split_policy_list(std::vector<std::string> const& values);

}  // namespace fraglab
