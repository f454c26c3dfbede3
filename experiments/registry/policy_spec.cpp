#include "experiments/registry/policy_spec.hpp"

#include "experiments/params/list_items.hpp"

#include <stdexcept>

namespace fraglab {

policy_spec parse_policy_spec(std::string_view text)
{
  auto const refuse = [&](std::string const& why) {
    throw std::invalid_argument("in policy '" + std::string(text) + "': " + why);
  };
  policy_spec out;
  std::string_view body = text;
  if (std::size_t const at = text.find('@'); at != std::string_view::npos) {
    out.label = std::string(text.substr(at + 1));
    body = text.substr(0, at);
    // A label names rows and CSV cells and is split out of -p's list at commas.
    if (out.label.empty() || out.label.find_first_of(",@:=[]") != std::string::npos)
      refuse("expected a label after '@', without , @ : or =, and last in the spec");
  }
  std::size_t const colon = body.find(':');
  out.base = std::string(body.substr(0, colon));
  if (out.base.empty()) refuse("expected a policy name before ':'");
  bool const composed = out.base == compose_name;
  if (colon != std::string_view::npos) {
    std::string_view const rest = body.substr(colon + 1);
    if (rest.empty()) refuse("expected KEY=VALUE after ':'");
    for (std::string_view const kv : list_items(rest)) {
      std::size_t const eq = kv.find('=');
      if (eq == std::string_view::npos || eq == 0) refuse("expected KEY=VALUE, got '" + std::string(kv) + "'");
      std::string_view const key = kv.substr(0, eq);
      // One value a key: with two, the spec (which names the rows) would say both.
      if ((key == "index" && !out.index.empty()) || (key == "fit" && !out.fit.empty()) || out.params.has(key))
        refuse(std::string(key) + " is given twice");
      if (key == "index" || key == "fit") {
        if (!composed) refuse(std::string(key) + " names a part of a compose: spec; " + out.base + " has its own");
        (key == "index" ? out.index : out.fit) = std::string(kv.substr(eq + 1));
      } else {
        out.params.set(key, kv.substr(eq + 1));
      }
    }
  }
  if (composed && (out.index.empty() || out.fit.empty())) refuse("compose: must name index=... and fit=...");
  if (out.label.empty()) out.label = std::string(body);
  return out;
}

}  // namespace fraglab
