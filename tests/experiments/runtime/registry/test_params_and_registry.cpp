// Sizes with units, parameters, compose specs and the registry's errors.
#include <fraglab/engine/allocator.hpp>
#include <fraglab/policies/fits.hpp>
#include <fraglab/policies/indexes/segregated_index.hpp>
#include <fraglab/policies/policy.hpp>
#include <fraglab/runtime/params/param_set.hpp>
#include <fraglab/runtime/params/units.hpp>
#include <fraglab/runtime/registry/composition.hpp>
#include <fraglab/runtime/registry/config_from_params.hpp>
#include <fraglab/runtime/registry/policy_spec.hpp>
#include <fraglab/runtime/trace/native_text.hpp>
#include "support/random_driver.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <map>
#include <sstream>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

namespace fraglab {
namespace {

TEST(Units, ParsesBytesAndDecimalAndBinaryUnits)
{
  EXPECT_EQ(parse_size("4096"), 4096u);
  EXPECT_EQ(parse_size("512MiB"), 512ull << 20);
  EXPECT_EQ(parse_size("80GiB"), 80ull << 30);
  EXPECT_EQ(parse_size("1.5GB"), 1500000000u);
  EXPECT_EQ(parse_size("1.5KiB"), 1536u);
  EXPECT_EQ(parse_size("2M"), 2u << 20);
  EXPECT_EQ(parse_size("10B"), 10u);
  EXPECT_FALSE(parse_size("1.3B"));      // not a whole number of bytes
  EXPECT_FALSE(parse_size("12XB"));
  EXPECT_FALSE(parse_size("-1"));
  EXPECT_FALSE(parse_size(""));
  EXPECT_FALSE(parse_size("99999999999TiB"));  // overflows
}

TEST(Units, ExactSizeTextIsParseSizesInverse)
{
  EXPECT_EQ(exact_size_text(256ull << 20), "256MiB");
  EXPECT_EQ(exact_size_text(3ull << 40), "3TiB");
  EXPECT_EQ(exact_size_text(1536), "1536");  // 1.5KiB is not whole kibibytes
  EXPECT_EQ(exact_size_text(0), "0");
  for (std::size_t const bytes : {std::size_t{1}, std::size_t{4096}, std::size_t{1536}, (std::size_t{5} << 30) + 4096,
                                  std::size_t{1} << 63})
    EXPECT_EQ(parse_size(exact_size_text(bytes)), bytes) << bytes;
}

TEST(ParamSet, AnAssignmentListGivesEachKeyOnceWhileSetReplaces)
{
  param_set p;
  p.set_assignment("sli=4");
  try {
    p.set_assignment("sli=5");
    ADD_FAILURE() << "a second sli was accepted";
  } catch (std::invalid_argument const& e) {
    EXPECT_STREQ(e.what(), "sli is given twice (4, then sli=5)");
  }
  EXPECT_EQ(p.text("sli"), "4");
  p.set("sli", "5");
  EXPECT_EQ(p.text("sli"), "5");
}

TEST(ParamSet, DefaultsComeFromTheTableAndUnknownKeysAreRejected)
{
  param_set p;
  EXPECT_EQ(p.size("quantum"), 16u);
  EXPECT_EQ(p.size("memory_limit"), std::numeric_limits<std::size_t>::max());
  p.set_assignment("memory_limit=2GiB");
  EXPECT_EQ(p.size("memory_limit"), 2ull << 30);
  EXPECT_THROW(p.set_assignment("no_such_key=1"), std::invalid_argument);
  EXPECT_THROW(p.set_assignment("quantum"), std::invalid_argument);
  p.set_assignment("split_ratio=abc");
  EXPECT_THROW((void)p.real("split_ratio"), std::invalid_argument);
  p.set_assignment("release_free_regions=maybe");
  EXPECT_THROW((void)p.flag("release_free_regions"), std::invalid_argument);
}

TEST(Registry, NamesComposeSpecsAndErrors)
{
  backend_choice heap;
  EXPECT_EQ(make_composition("tree_best", {}, heap)->name(), "tree_best");
  EXPECT_NO_THROW(make_composition("compose:index=ao_tree,fit=next,coalesce=deferred", {}, heap));
  EXPECT_THROW(make_composition("nope", {}, heap), std::invalid_argument);
  EXPECT_THROW(make_composition("compose:index=bins,fit=first", {}, heap), std::invalid_argument);  // not served
  EXPECT_THROW(make_composition("compose:index=tree", {}, heap), std::invalid_argument);
  // A key given twice in a spec: the name of its rows would say both values.
  for (char const* twice : {"compose:index=seglist,fit=good,sli=4,sli=5", "compose:index=seglist,index=tree,fit=best",
                            "compose:index=tree,fit=best,fit=worst"}) {
    try {
      (void)make_composition(twice, {}, heap);
      ADD_FAILURE() << twice << " was accepted";
    } catch (std::invalid_argument const& e) {
      EXPECT_NE(std::string(e.what()).find(" is given twice"), std::string::npos) << e.what();
    }
  }
  param_set bad;
  bad.set("growth", "sometimes");
  EXPECT_THROW(make_composition("tree_best", bad, heap), std::invalid_argument);
  param_set q;
  q.set("quantum", "24");
  EXPECT_THROW(make_composition("tree_best", q, heap), std::invalid_argument);  // not a power of two
  backend_choice unknown{"floppy"};
  EXPECT_THROW(make_composition("tree_best", {}, unknown), std::invalid_argument);
  // An index's parameters are refused when the allocator is made, not at its first
  // allocation, which built the first pool's index (fuzz_policy_params).
  for (auto const& settings : std::vector<std::vector<std::string>>{{"bin_base=3"}, {"bin_count=0"},
                                                                      {"bin_base=1GiB", "bin_count=160"},
                                                                      {"min_size=9223372036854775809"}}) {
    param_set bins;
    for (auto const& kv : settings) bins.set_assignment(kv);
    EXPECT_THROW((void)make_composition("compose:index=fine_bins,fit=best", bins, heap)->make(), std::invalid_argument)
        << settings.front();
  }
  // Every named composition builds.
  for (auto const& n : named_compositions()) EXPECT_NO_THROW(make_composition(n.name, {}, heap)) << n.name;
}

// A backend parameter is refused where the chosen backend would not read it, as a policy's
// are, and named with the backends that do; where it is read it is accepted.
TEST(Registry, BackendParametersAreRefusedWhereTheBackendIgnoresThem)
{
  auto const refusal = [](std::string_view kind, std::string const& assignment) -> std::string {
    param_set p;
    p.set_assignment(assignment);
    try {
      check_backend_keys(kind, p);
    } catch (std::invalid_argument const& e) {
      return e.what();
    }
    return "";
  };
  for (std::string_view kind : {"heap", "host", "cuda_pinned"}) {
    EXPECT_EQ(refusal(kind, "merging=true"), "parameter merging applies to the simulated backend, not to backend '" +
                                                 std::string(kind) + "'");
    EXPECT_NE(refusal(kind, "device=1").find("applies to the device backends (cuda, cuda_async, cuda_vmm)"),
              std::string::npos);
    EXPECT_NE(refusal(kind, "device_memory_fraction=0.5").find("give a limit in bytes with --capacity"), std::string::npos);
    EXPECT_EQ(refusal(kind, "granularity=64KiB"), "");
  }
  EXPECT_EQ(refusal("simulated", "merging=false"), "");
  EXPECT_NE(refusal("simulated", "device=0"), "");
  for (std::string_view kind : {"cuda", "cuda_async", "cuda_vmm"}) {
    EXPECT_EQ(refusal(kind, "device=1"), "");
    EXPECT_EQ(refusal(kind, "device_memory_fraction=0.5"), "");
    EXPECT_NE(refusal(kind, "merging=true"), "");
  }
  EXPECT_EQ(refusal("cuda", "granularity=2MiB"), "");
  EXPECT_NE(refusal("cuda_vmm", "granularity=2MiB").find("the device's own granularity"), std::string::npos);

  // make_composition checks them for the backend it resolves: a preset's own default included.
  param_set fraction;
  fraction.set("device_memory_fraction", "0.5");
  EXPECT_THROW((void)make_composition("tf_bfc", fraction, {}), std::invalid_argument);  // the simulated space
  EXPECT_THROW((void)make_composition("tree_best", fraction, backend_choice{"host"}), std::invalid_argument);
  param_set merging;
  merging.set("merging", "true");
  EXPECT_NO_THROW((void)make_composition("tree_best", merging, backend_choice{"simulated"}));
  EXPECT_THROW((void)make_composition("tree_best", merging, {}), std::invalid_argument);  // the heap
}

TEST(Registry, SpecParametersOverrideDefaultsAndSetMayNotRepeatThem)
{
  std::istringstream in("a 1 1000\na 2 1000\nf 1\na 3 100\n");
  auto const t = trace::read_native_text(in, "x");
  backend_choice sim{"simulated"};
  // Quantum 16 vs 4096 changes allocated bytes: 1008+1008+112 vs 4096 * 3.
  auto r16 = make_composition("compose:index=tree,fit=best", {}, sim)->replay(t, {});
  auto r4k = make_composition("compose:index=tree,fit=best,quantum=4096,min_size=4096", {}, sim)->replay(t, {});
  EXPECT_EQ(r16.peak_allocated_bytes, 2016u);
  EXPECT_EQ(r4k.peak_allocated_bytes, 8192u);
  param_set user;
  user.set("quantum", "256");
  user.set("min_size", "256");
  auto r256 = make_composition("compose:index=tree,fit=best", user, sim)->replay(t, {});
  EXPECT_EQ(r256.peak_allocated_bytes, 2048u);
  // A named policy takes its own settings and a label the same way.
  auto const tree = make_composition("tree_best:quantum=4096,min_size=4096@coarse", {}, sim);
  EXPECT_EQ(tree->name(), "coarse");
  EXPECT_EQ(tree->replay(t, {}).peak_allocated_bytes, 8192u);
  // One place per setting: a --set of a key the spec sets already is refused, not ranked.
  try {
    (void)make_composition("compose:index=tree,fit=best,quantum=4096,min_size=4096", user, sim);
    ADD_FAILURE() << "a key set twice was accepted";
  } catch (std::invalid_argument const& e) {
    EXPECT_NE(std::string(e.what()).find("min_size is set both in policy"), std::string::npos) << e.what();
  }
  EXPECT_THROW((void)make_composition("tree_best:index=bins", {}, sim), std::invalid_argument);  // its parts are its own
  EXPECT_THROW((void)make_composition("tree_best@", {}, sim), std::invalid_argument);
  EXPECT_THROW((void)make_composition("tree_best:", {}, sim), std::invalid_argument);
}

// What a policy reads scopes --set: an index's keys to the indexes that read them, a preset's
// to the preset; the results record every key read, as it ran.
TEST(Registry, PoliciesReadTheirOwnKeysAndRecordThem)
{
  auto const reads = [](std::string_view spec, std::string_view key) {
    auto const keys = parameters_read(spec);
    return std::find(keys.begin(), keys.end(), key) != keys.end();
  };
  EXPECT_TRUE(reads("tlsf", "sli"));
  EXPECT_FALSE(reads("best_fit", "sli"));
  EXPECT_TRUE(reads("best_fit", "bin_count"));
  EXPECT_FALSE(reads("tree_best", "bin_count"));
  EXPECT_TRUE(reads("tf_bfc", "split_ratio"));
  EXPECT_FALSE(reads("pytorch_caching", "split_ratio"));
  EXPECT_TRUE(reads("pytorch_caching", "max_split_size_mb"));
  EXPECT_TRUE(reads("dlmalloc", "header"));
  param_set user;
  user.set("split_ratio", "3");
  user.set("max_split_size_mb", "64");
  EXPECT_EQ(scoped_parameters("tf_bfc", user).values(), (std::map<std::string, std::string>{{"split_ratio", "3"}}));
  EXPECT_EQ(scoped_parameters("pytorch_caching", user).values(), (std::map<std::string, std::string>{{"max_split_size_mb", "64"}}));
  param_set sli;
  sli.set("sli", "4");
  EXPECT_THROW((void)make_composition("tree_best", sli, {}), std::invalid_argument);
  auto const tf = make_composition("tf_bfc", {}, {});
  EXPECT_EQ(tf->backend().kind, "simulated");
  EXPECT_EQ(tf->granularity(), 256u);
  EXPECT_EQ(tf->parameters(), "allow_growth=true per_process_gpu_memory_fraction=0 garbage_collection=true merging=false "
                              "memory_limit=unlimited max_internal_fragmentation=128MiB split_ratio=2");
  auto const composed = make_composition("tlsf", {}, {});
  EXPECT_EQ(composed->backend().kind, "heap");
  EXPECT_EQ(composed->granularity(), 4096u);
  EXPECT_NE(composed->parameters().find("sli=5 linear_limit=256"), std::string::npos);
  EXPECT_EQ(composed->parameters().find("merging"), std::string::npos);  // the heap backend does not read it
}

// TF's BFC splits a chunk at twice the request, or where the remainder would be 128 MiB or
// more (kMaxInternalFragmentation): a 300 MiB request from the 512 MiB region its doubling
// makes is split (212 MiB over), so 160 MiB and 100 MiB then fit beside it, never above 300.
TEST(Registry, TfBfcSplitsWhereItWouldWaste128MiB)
{
  std::istringstream in("a 1 314572800\nf 1\na 2 167772160\na 3 104857600\n");
  auto const t = trace::read_native_text(in, "x");
  replay_result const r = make_composition("tf_bfc", {}, {})->replay(t, {});
  EXPECT_EQ(r.peak_allocated_bytes, 314572800u);
  EXPECT_EQ(r.peak_reserved_bytes, 536870912u);
  param_set never;
  never.set("max_internal_fragmentation", "unlimited");
  EXPECT_EQ(make_composition("tf_bfc", never, {})->replay(t, {}).peak_allocated_bytes, 536870912u);
}

TEST(Registry, MadeAllocatorsAreUsableCallByCall)
{
  auto a = make_composition("ao_first", {}, backend_choice{"host"})->make();
  auto x = a->allocate(100);
  ASSERT_TRUE(x);
  static_cast<char*>(x.pointer())[99] = 1;  // real memory
  EXPECT_EQ(a->deallocate(x.address), free_status::ok);
  EXPECT_EQ(a->check_invariants(), "");
  std::size_t chunks = 0;
  a->visit_chunks([&](chunk_view const&) { ++chunks; });
  EXPECT_EQ(chunks, 1u);
}

// best_fit searches fine bins from the least size the size rule makes (or from a set
// bin_base), behind an address bitmap for that size; every address it hands out is the one
// tree's. Random sequences (support/random_driver.hpp) of small sizes, where the least size
// is common, and of sizes up to 1 MiB, over the heap backend (one address space for both).
TEST(Registry, BestFitOverFineBinsHandsOutTheOneTreesAddresses)
{
  backend_choice heap{"heap"};
  struct setting {
    std::vector<char const*> fine;
    char const* tree;
  };
  for (auto const& [fine_params, tree_params] :
       {setting{{}, ""}, setting{{"quantum=64", "min_size=64"}, ",quantum=64,min_size=64"},
        setting{{"quantum=8", "min_size=8"}, ",quantum=8,min_size=8"}, setting{{"bin_base=1KiB", "bin_count=40"}, ""}}) {
    param_set user;
    for (char const* kv : fine_params) user.set_assignment(kv);
    auto const fine = make_composition("best_fit", user, heap);
    auto const tree = make_composition(std::string("compose:index=tree,fit=best,header=0,growth=exact") + tree_params, {}, heap);
    for (std::uint64_t seed = 1; seed <= 3; ++seed)
      for (testing::size_shape shape : {testing::size_shape::small, testing::size_shape::wide}) {
        testing::sequence_spec const s{.seed = seed, .steps = 4000, .shape = shape};
        auto a = fine->make();
        auto b = tree->make();
        ASSERT_EQ(testing::drive(*a, s, false), testing::drive(*b, s, false)) << (fine_params.empty() ? "" : fine_params[0]) << " " << testing::describe(s);
      }
  }
}

TEST(PolicyList, CommasSplitPoliciesButContinueComposeSpecs)
{
  using V = std::vector<std::string>;
  EXPECT_EQ(split_policy_list(V{"a,b", "c"}), (V{"a", "b", "c"}));
  EXPECT_EQ(split_policy_list(V{"tree_best,compose:index=tree,fit=worst,quantum=64,bins_best"}),
            (V{"tree_best", "compose:index=tree,fit=worst,quantum=64", "bins_best"}));
}

}  // namespace
}  // namespace fraglab

namespace fraglab {
namespace {

replay_result replay_text(std::string const& spec, std::string const& text, backend_choice b = {})
{
  std::istringstream in(text);
  return make_composition(spec, {}, b)->replay(trace::read_native_text(in, "hand"), {});
}

constexpr std::size_t MiB = std::size_t{1} << 20;

TEST(Presets, RmmPoolGrowsByThePoolSizeAndHalvesDownToTheRequest)
{
  // 200 MiB fits the 256 MiB initial pool; 100 MiB then needs max(100, 256) MiB more;
  // 300 MiB needs max(300, 512) MiB: 1 GiB held over three acquisitions.
  std::string const t = "a 1 209715200\na 2 104857600\na 3 314572800\n";
  auto r = replay_text("rmm_pool", t);
  EXPECT_EQ(r.peak_reserved_bytes, 1024 * MiB);
  EXPECT_EQ(r.acquisitions, 3u);
  // On a 900 MiB device the third try of 512 MiB is refused; half (256 MiB) is below the
  // request, so RMM tries the request itself: 300 MiB fits.
  auto limited = replay_text("rmm_pool", t, {"simulated", 900 * MiB});
  EXPECT_EQ(limited.failed_allocs, 0u);
  EXPECT_EQ(limited.peak_reserved_bytes, 812 * MiB);
}

// Free chunks of 1040 B and 1056 B, kept apart by live blocks: their addresses.
std::pair<std::uintptr_t, std::uintptr_t> free_1040_and_1056(any_allocator& a)
{
  auto const x = a.allocate(1040);
  a.allocate(16);
  auto const y = a.allocate(1056);
  a.allocate(16);
  a.deallocate(x.address);
  a.deallocate(y.address);
  return {x.address, y.address};
}

TEST(Presets, TlsfTakesTheHeadOfTheFirstClassThatSurelyFits)
{
  // The two chunks sit in TLSF lists [1024, 1056) and [1056, 1088); 1025 B rounds to the
  // list boundary 1056, so TLSF takes the 1056-byte chunk where best fit takes the
  // 1040-byte one.
  auto tlsf = make_composition("tlsf", {}, {})->make();
  auto best = make_composition("best_fit", {}, {})->make();
  for (auto* a : {tlsf.get(), best.get()}) {
    auto const [x, y] = free_1040_and_1056(*a);
    EXPECT_EQ(a->allocate(1025).address, a == tlsf.get() ? y : x);
  }
}

TEST(Presets, TlsfTakesItsMappingFromSli)
{
  // The registry builds tlsf's defaults (sli 5) on an index whose mapping is constants, and
  // any other sli on the general one, which must still apply it: with sli=4 both chunks
  // fall in one list, [1024, 1088), and 1025 B rounds up to 1088, past both.
  param_set coarse_lists;
  coarse_lists.set("sli", "4");
  auto tlsf = make_composition("tlsf", coarse_lists, {})->make();
  auto const [x, y] = free_1040_and_1056(*tlsf);
  std::uintptr_t const got = tlsf->allocate(1025).address;
  EXPECT_NE(got, x);
  EXPECT_NE(got, y);
  EXPECT_NE(got, 0u);
}

// tlsf, best_fit and first_fit are built with immediate coalescing in their type when it is
// asked for (their default), and read the mode at run time otherwise: either way two freed
// neighbours merge exactly when the mode is immediate.
TEST(Presets, TheTargetPresetsCoalesceAsTheirModeSays)
{
  for (char const* preset : {"tlsf", "best_fit", "first_fit"})
    for (char const* mode : {"immediate", "deferred", "never"}) {
      param_set user;
      user.set("coalesce", mode);
      auto a = make_composition(preset, user, {})->make();
      auto const x = a->allocate(1000);
      auto const y = a->allocate(1000);
      auto const z = a->allocate(1000);
      ASSERT_TRUE(x && y && z);
      ASSERT_EQ(y.address, x.address + x.size);
      ASSERT_EQ(z.address, y.address + y.size);
      ASSERT_EQ(a->deallocate(x.block()), free_status::ok);
      ASSERT_EQ(a->deallocate(y.block()), free_status::ok);
      std::vector<std::size_t> free_below_z;
      a->visit_chunks([&](chunk_view const& c) {
        if (!c.in_use && c.address < z.address) free_below_z.push_back(c.size);
      });
      std::ranges::sort(free_below_z);
      std::vector<std::size_t> const expected =
          std::string(mode) == "immediate" ? std::vector{x.size + y.size} : std::vector{x.size, y.size};
      EXPECT_EQ(free_below_z, expected) << preset << " coalesce=" << mode;
      EXPECT_EQ(a->check_invariants(), "") << preset << " coalesce=" << mode;
    }
}

// The registry chooses a type that fixes immediate coalescing only where the parameters ask
// for it, so this refusal cannot be reached through it: a caller that builds such a type's
// configuration itself must not get a composition that coalesces against its parameters.
TEST(Presets, ATypeThatFixesItsCoalescingRefusesParametersAskingForAnother)
{
  using fixed = allocator<policy<segregated_index, good_fit, threshold_split, fixed_coalescing<coalesce_mode::immediate>>, any_backend>;
  EXPECT_EQ(registry_detail::config_from_params<fixed>({}).coalesce.mode, coalesce_mode::immediate);
  for (char const* mode : {"deferred", "never"}) {
    param_set p;
    p.set("coalesce", mode);
    try {
      (void)registry_detail::config_from_params<fixed>(p);
      ADD_FAILURE() << "coalesce=" << mode << " accepted by a type that fixes immediate coalescing";
    } catch (std::invalid_argument const& e) {
      EXPECT_STREQ(e.what(), "parameter coalesce: this composition's type fixes it to immediate") << mode;
    }
  }
}

TEST(Presets, ClassicPresetsChargeTheHeaderToEveryBlock)
{
  param_set header;
  header.set("header", "8");
  std::istringstream in("a 1 100\na 2 100\n");
  auto const tr = trace::read_native_text(in, "h");
  EXPECT_EQ(make_composition("first_fit", {}, {})->replay(tr, {}).peak_allocated_bytes, 224u);      // 112 + 112
  EXPECT_EQ(make_composition("first_fit", header, {})->replay(tr, {}).peak_allocated_bytes, 224u);  // 108 -> 112
  param_set big_header;
  big_header.set("header", "16");
  EXPECT_EQ(make_composition("first_fit", big_header, {})->replay(tr, {}).peak_allocated_bytes, 256u);  // 116 -> 128
}

}  // namespace
}  // namespace fraglab
