#pragma once
// A composition named by position: policy<Index, Fit, Split, ...>, each part after the fit
// defaulting to the generic rule (policies/policy_options.hpp names them in any order). The
// engine takes any type with these members (engine/concepts.hpp); this is the one the presets,
// the registry and the tests write.

#include <fraglab/policies/coalesce_rules.hpp>
#include <fraglab/policies/fits.hpp>
#include <fraglab/policies/growth_rules.hpp>
#include <fraglab/policies/pool_rules.hpp>
#include <fraglab/policies/reclaim_rules.hpp>
#include <fraglab/policies/size_rules.hpp>
#include <fraglab/policies/split_rules.hpp>

namespace fraglab {

// A composition: the types of its parts. Numbers live in allocator::config.
template <class Index, class Fit, class Split = threshold_split, class Coalesce = coalescing,
          class Growth = growth_rule, class Size = quantum_size_rule, class Pools = stream_pool_rule,
          class Reclaim = no_reclaim>
struct policy {
  using index = Index;
  using fit = Fit;
  using split = Split;
  using coalesce = Coalesce;
  using growth = Growth;
  using size = Size;
  using pools = Pools;
  using reclaim = Reclaim;
};

}  // namespace fraglab
