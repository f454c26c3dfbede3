#include <fraglab/runtime/registry/policy_spec.hpp>

#include <fraglab/runtime/params/list_items.hpp>

#include <algorithm>
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

std::vector<std::string> split_policy_list(std::vector<std::string> const& values)
{
  std::vector<std::string> specs;
  for (std::string const& value : values) {
    for (std::string_view const piece : list_items(value)) {
      // `tlsf:sli=4,linear_limit=128`: a KEY=VALUE continues the settings of the spec before
      // it; a piece with its own NAME: starts a spec.
      bool const continues_settings = !specs.empty() && specs.back().find(':') != std::string::npos &&
                                      piece.find('=') != std::string_view::npos && piece.find(':') == std::string_view::npos;
      if (continues_settings) {
        specs.back() += ',';
        specs.back() += piece;
        continue;
      }
      // `compose:index=tree,fit=best,quantum`: a key without its value, not a policy named quantum.
      bool const key_without_value =
          !specs.empty() && specs.back().find(':') != std::string::npos && piece.find_first_of("=:@") == std::string_view::npos &&
          std::any_of(known_params().begin(), known_params().end(), [&](param_spec const& p) { return p.key == piece; });
      if (key_without_value)
        throw std::invalid_argument("-p: '" + std::string(piece) + "' after '" + specs.back() + "' is a parameter without its value: expected " +
                                    std::string(piece) + "=VALUE");
      if (!piece.empty()) specs.emplace_back(piece);
    }
  }
  return specs;
}

}  // namespace fraglab
