#include <fraglab/plugins/pytorch/plugin_config.hpp>

#include <fraglab/runtime/params/units.hpp>
#include <fraglab/runtime/registry/composition.hpp>

#include <cstdlib>
#include <stdexcept>
#include <string_view>

namespace fraglab::plugin {

environment process_environment()
{
  return [](char const* name) -> std::optional<std::string> {
    char const* v = std::getenv(name);
    if (v == nullptr || *v == '\0') return std::nullopt;
    return std::string(v);
  };
}

plugin_config read_config(environment const& env)
{
  plugin_config c;
  if (auto v = env("FRAGLAB_POLICY")) c.policy = *v;
  if (auto v = env("FRAGLAB_SET")) {
    // ';' separates assignments because values such as split specs may contain commas.
    std::string_view rest = *v;
    while (!rest.empty()) {
      std::size_t const end = rest.find(';');
      std::string_view const kv = rest.substr(0, end);
      try {
        if (!kv.empty()) c.params.set_assignment(kv);
      } catch (std::invalid_argument const& e) {
        throw std::invalid_argument(std::string("FRAGLAB_SET: ") + e.what());
      }
      rest = end == std::string_view::npos ? std::string_view{} : rest.substr(end + 1);
    }
  }
  if (auto v = env("FRAGLAB_BACKEND")) {
    if (*v != "cuda" && *v != "cuda_async" && *v != "cuda_vmm" && *v != "host")
      throw std::invalid_argument("FRAGLAB_BACKEND: expected cuda, cuda_async, cuda_vmm or host, got '" + *v + "'");
    c.backend = *v;
  }
  if (auto v = env("FRAGLAB_CAPACITY")) {
    auto const n = parse_size(*v);
    if (!n) throw std::invalid_argument("FRAGLAB_CAPACITY: expected a size such as 8GiB, got '" + *v + "'");
    c.capacity = *n;
  }
  if (auto v = env("FRAGLAB_STATS")) {
    if (*v != "0" && *v != "1") throw std::invalid_argument("FRAGLAB_STATS: expected 0 or 1, got '" + *v + "'");
    c.print_stats = *v == "1";
  }
  return c;
}

void validate(plugin_config const& c)
{
  // The backend's own parameters against the backend chosen, which may need a device that
  // is not there yet; the rest against the simulated one, which accepts every policy.
  check_backend_keys(c.backend, c.params);
  param_set policy_params;
  for (auto const& [key, value] : c.params.values())
    if (part_of(key) != "backend" || key == "granularity") policy_params.set(key, value);
  (void)make_composition(c.policy, policy_params, backend_choice{"simulated"});
}

}  // namespace fraglab::plugin
