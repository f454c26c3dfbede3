// The table param_set.hpp's known_params() returns. Apart from param_set.cpp, whose checks
// read it, because its rows come from the rules' declared parameters
// (rule_parameters.hpp), which read a param_set in turn.
#include <fraglab/runtime/params/param_set.hpp>

#include <fraglab/policies/coalesce_rules.hpp>
#include <fraglab/policies/growth_rules.hpp>
#include <fraglab/policies/indexes/bins_index.hpp>
#include <fraglab/policies/indexes/segregated_index.hpp>
#include <fraglab/policies/pool_rules.hpp>
#include <fraglab/policies/presets/dlmalloc.hpp>
#include <fraglab/policies/presets/gmlake.hpp>
#include <fraglab/policies/size_rules.hpp>
#include <fraglab/policies/split_rules.hpp>
#include <fraglab/runtime/params/rule_parameters.hpp>

#include <array>
#include <deque>
#include <string>
#include <type_traits>
#include <vector>

namespace fraglab {
namespace {

constexpr std::array<param_spec, 5> pytorch_table{{
    {"max_split_size_mb", "pytorch_caching", "unlimited", "blocks at least this large (MiB) are never split; smaller requests never take them"},
    {"max_non_split_rounding_mb", "pytorch_caching", "20", "a request >= max_split_size takes an unsplit block at most this much larger (MiB)"},
    {"roundup_power2_divisions", "pytorch_caching", "0", "N equal steps between powers of two when rounding sizes above 512 x N (0 or 1: off); per interval as PyTorch takes it, [1:4,256:2,>:1] (SIZE in MiB)"},
    {"per_process_memory_fraction", "pytorch_caching", "0", "memory limit as a fraction of the device (--capacity, or the device itself with a CUDA backend); 0: unset"},
    {"garbage_collection_threshold", "pytorch_caching", "0", "free old cached segments when reserved exceeds this fraction of the memory fraction (0: off)"},
}};

constexpr std::array<param_spec, 3> tf_table{{
    {"allow_growth", "tf_bfc", "auto", "false: one region of the whole memory limit (TF's GPU default); true: doubling regions from 2 MiB; auto: false where a memory limit is known, else true"},
    {"per_process_gpu_memory_fraction", "tf_bfc", "0", "memory limit as a fraction of the device (--capacity, or the device itself with a CUDA backend); 0: unset"},
    {"garbage_collection", "tf_bfc", "true", "after a failed growth, release free regions when that makes room (TF_ENABLE_GPU_GARBAGE_COLLECTION, on by default)"},
}};

constexpr std::array<param_spec, 4> backend_table{{
    {"granularity", "backend", "backend's own", "acquisitions round up to this (simulated 256, heap 4096, host 4096, cuda 256, cuda_pinned 4096; cuda_vmm takes the device's own)"},
    {"merging", "backend", "false", "simulated: consecutive acquisitions are adjacent and may merge"},
    {"device", "backend", "0", "cuda, cuda_async, cuda_vmm: the device's ordinal"},
    {"device_memory_fraction", "backend", "0", "cuda, cuda_async, cuda_vmm: at most this fraction of the device's memory (0: unset; --capacity gives bytes)"},
}};

// Every known key: the generic parts' from their rules (each declares its own,
// policies/rule_parameter.hpp), then the presets' and the backends' own. dlmalloc's and
// GMLake's settings declare theirs; PyTorch's and TF's keys are written here, as their
// texts are not a member's value (sizes in MiB, fractions of a device, `auto`, lists of
// intervals) and are read in experiments/runtime/registry/instantiate_presets.cpp.
struct parameter_table {
  std::deque<std::string> defaults;  // the declared keys' defaults, rendered from their rules and settings
  std::vector<param_spec> rows;
};

parameter_table const& all()
{
  static parameter_table const table = [] {
    parameter_table t;
    auto const rows_of = [&]<class Rule>(std::type_identity<Rule>) {
      for_each_parameter_row<Rule>([&](std::string_view key, std::string_view part, std::string value, std::string_view help) {
        t.defaults.push_back(std::move(value));
        t.rows.push_back({key, part, t.defaults.back(), help});
      });
    };
    rows_of(std::type_identity<quantum_size_rule>{});
    rows_of(std::type_identity<threshold_split>{});
    rows_of(std::type_identity<coalescing>{});
    rows_of(std::type_identity<growth_rule>{});
    rows_of(std::type_identity<bins_index_params>{});
    rows_of(std::type_identity<segregated_index_params>{});
    rows_of(std::type_identity<stream_pool_rule>{});
    t.rows.insert(t.rows.end(), pytorch_table.begin(), pytorch_table.end());
    t.rows.insert(t.rows.end(), tf_table.begin(), tf_table.end());
    rows_of(std::type_identity<presets::dlmalloc::settings>{});
    rows_of(std::type_identity<presets::gmlake::settings>{});
    t.rows.insert(t.rows.end(), backend_table.begin(), backend_table.end());
    return t;
  }();
  return table;
}

}  // namespace

std::span<param_spec const> known_params() { return all().rows; }

}  // namespace fraglab
