// fraglab.policies(), policy(NAME) and parameters(): what `fraglab policies` prints, as data.
#include <fraglab/python/bindings.hpp>

#include <fraglab/runtime/params/param_set.hpp>
#include <fraglab/runtime/registry/composition.hpp>
#include <fraglab/runtime/registry/policy_spec.hpp>

#include <pybind11/stl.h>

#include <algorithm>

namespace fraglab::python {

void bind_policies(py::module_& m)
{
  m.def(
      "policies",
      [] {
        results_table table{{"name", "kind", "index", "fit", "description"}, {}};
        for (auto const& p : preset_list()) table.rows.push_back({std::string(p.name), "preset", "", "", std::string(p.description)});
        for (auto const& n : named_compositions())
          table.rows.push_back({std::string(n.name), "composition", std::string(n.index), std::string(n.fit), std::string(n.description)});
        return data_frame(table);
      },
      R"(Every preset (a real allocator reproduced) and named composition, as `fraglab policies` lists them.

Returns:
    A DataFrame, a row a policy: name, kind ('preset' or 'composition'), index, fit,
    description. 'compose:index=I,fit=F,...' builds the pairs composable_pairs() lists.)");
  m.def(
      "composable_pairs",
      [] {
        std::vector<std::pair<std::string, std::string>> pairs;
        for (auto const& p : composable_pairs()) pairs.emplace_back(p.index, p.fit);
        return pairs;
      },
      R"(The free indexes and fits a composition may pair.

Returns:
    A list of (index, fit) pairs, each one that 'compose:index=I,fit=F' builds.)");
  m.def(
      "policy",
      [](std::string const& spec) {
        policy_summary const s = describe_policy(spec);
        auto const c = make_composition(spec, {}, {});
        results_table parameters{{"key", "value", "default", "meaning"}, {}};
        auto const& known = known_params();
        for (std::string_view const key : s.keys) {
          if (!backend_reads(c->backend().kind, key)) continue;
          auto const spec_of = std::find_if(known.begin(), known.end(), [&](param_spec const& p) { return p.key == key; });
          std::string const value = key == "granularity" && !c->params().has(key) ? std::to_string(c->granularity()) : c->params().text(key);
          parameters.rows.push_back({std::string(key), value, std::string(spec_of->default_value), std::string(spec_of->help)});
        }
        py::dict out;
        out["name"] = s.name;
        out["description"] = s.description;
        out["parts"] = s.parts;
        out["backend"] = c->backend().kind;
        out["granularity"] = c->granularity();
        out["parameters"] = data_frame(parameters);
        return out;
      },
      py::arg("spec"),
      R"(One policy as it runs, what `fraglab policies SPEC` prints.

Args:
    spec: a preset, a composition name or a compose: spec, with its settings ('tlsf:sli=3').

Returns:
    {'name', 'description', 'parts', 'backend' (its default), 'granularity' (bytes), and
    'parameters': a DataFrame of every key it reads with the value it runs with, the default
    and the meaning}.

Raises:
    ValueError: an unknown policy, key or value, in the command line's words.
    TypeError: a spec that is not a str.)");
  m.def(
      "parameters",
      [] {
        results_table table{{"key", "part", "default", "meaning"}, {}};
        for (auto const& p : known_params())
          table.rows.push_back({std::string(p.key), std::string(p.part), std::string(p.default_value), std::string(p.help)});
        return data_frame(table);
      },
      R"(Every parameter a policy can read, as `fraglab policies --keys` lists them.

Returns:
    A DataFrame, a row a key: key, part (the part that reads it), default, meaning.)");
}

}  // namespace fraglab::python
