// Equivalence: compositions whose rules coincide must make identical decisions, so the
// O(log n) indexes are proved to choose what the classic scans choose, and updating an
// index in place (on a split or a merge) is proved to change no decision.
#include "support/compositions.hpp"
#include "support/fixtures.hpp"
#include "support/random_driver.hpp"

#include <gtest/gtest.h>

namespace fraglab::testing {
namespace {

// Sets the coalescing mode of a configuration whose policy reads it at run time; a policy
// that fixes it in its type (fixed_coalescing) has only that one: false for any other.
template <class Config>
bool set_coalesce_mode(Config& c, coalesce_mode mode)
{
  if constexpr (requires { c.coalesce.mode = mode; }) {
    c.coalesce.mode = mode;
    return true;
  } else {
    return c.coalesce.mode == mode;
  }
}

// The decisions of two compositions on one sequence, with no alignment and one stream so
// that only the index and fit differ; under immediate and deferred coalescing, where both
// compositions have the mode.
template <class P1, class P2>
void expect_same_decisions(std::uint64_t first_seed, int sequences)
{
  int compared = 0;
  for (std::uint64_t seed = first_seed; seed < first_seed + static_cast<std::uint64_t>(sequences); ++seed) {
    sequence_spec s{.seed = seed, .steps = 1500, .shape = static_cast<size_shape>(seed % 3)};
    for (coalesce_mode mode : {coalesce_mode::immediate, coalesce_mode::deferred}) {
      typename alloc_t<P1, heap_backend>::config c1;
      typename alloc_t<P2, heap_backend>::config c2;
      bool const first_has_it = set_coalesce_mode(c1, mode);
      if (!set_coalesce_mode(c2, mode) || !first_has_it) continue;
      alloc_t<P1, heap_backend> a(heap_backend{}, c1);
      alloc_t<P2, heap_backend> b(heap_backend{}, c2);
      auto const da = drive(a, s, false);
      auto const db = drive(b, s, false);
      ASSERT_EQ(da, db) << describe(s) << " coalesce=" << to_string(mode);
      ASSERT_EQ(a.stats().peak_reserved_bytes, b.stats().peak_reserved_bytes);
      // The same cuts and joins, whether the index updates in place or takes the chunk out
      // and puts it back.
      ASSERT_EQ(a.stats().splits, b.stats().splits) << describe(s) << " coalesce=" << to_string(mode);
      ASSERT_EQ(a.stats().merges, b.stats().merges) << describe(s) << " coalesce=" << to_string(mode);
      ++compared;
    }
  }
  EXPECT_GE(compared, sequences) << "a mode both compositions have: immediate, for every sequence";
}

TEST(Equivalence, BestFitIsTheSameChoiceInEveryIndexThatServesIt)
{
  using reference = policy<address_ordered_list_index, best_fit>;  // the O(n) definition
  expect_same_decisions<reference, policy<tree_index, best_fit>>(1, 6);
  expect_same_decisions<reference, policy<bins_index, best_fit>>(1, 6);
  expect_same_decisions<reference, policy<fine_bins_index, best_fit>>(1, 6);
  expect_same_decisions<reference, policy<segregated_index, best_fit>>(1, 6);
}

TEST(Equivalence, AugmentedTreeMakesTheClassicFirstFitAndNextFitDecisions)
{
  expect_same_decisions<policy<address_ordered_list_index, first_fit>, policy<address_ordered_tree_index, first_fit>>(20, 8);
  expect_same_decisions<policy<address_ordered_list_index, next_fit>, policy<address_ordered_tree_index, next_fit>>(40, 8);
}

// An index with its in-place updates hidden: the engine then takes a chunk out and puts it
// back on every split and merge, the literal procedure of the classic descriptions.
template <class Spec>
struct without_in_place_updates : Spec {
  template <class Chunk>
  class index : public Spec::template index<Chunk> {
    using base = typename Spec::template index<Chunk>;

   public:
    using base::base;
    void resized(Chunk&, std::size_t) = delete;
    void exchange(Chunk&, std::size_t, Chunk&) = delete;
  };
};

// The index type an engine builds from a spec, over its chunk type.
template <class Spec>
using index_of = typename Spec::template index<basic_chunk<Spec>>;

TEST(Equivalence, SplittingAndMergingInPlaceChangesNoDecision)
{
  using list = address_ordered_list_index;
  using tree = address_ordered_tree_index;
  static_assert(in_place_index<index_of<tree>, basic_chunk<tree>>);
  static_assert(!in_place_index<index_of<without_in_place_updates<tree>>, basic_chunk<without_in_place_updates<tree>>>);
  expect_same_decisions<policy<without_in_place_updates<list>, first_fit>, policy<tree, first_fit>>(80, 6);
  expect_same_decisions<policy<without_in_place_updates<list>, next_fit>, policy<list, next_fit>>(90, 6);
  expect_same_decisions<policy<without_in_place_updates<tree>, next_fit>, policy<tree, next_fit>>(100, 6);

  // The (size, address) indexes exchange a chunk for its split remainder or merged self
  // in one step, keeping the node where the new key falls in the old one's place.
  static_assert(keyed_in_place_index<index_of<tree_index>, basic_chunk<tree_index>>);
  static_assert(!keyed_in_place_index<index_of<without_in_place_updates<tree_index>>,
                                      basic_chunk<without_in_place_updates<tree_index>>>);
  expect_same_decisions<policy<without_in_place_updates<tree_index>, best_fit>, policy<tree_index, best_fit>>(110, 6);
  expect_same_decisions<policy<without_in_place_updates<tree_index>, worst_fit>, policy<tree_index, worst_fit>>(120, 4);
  expect_same_decisions<policy<without_in_place_updates<bins_index>, best_fit>, policy<bins_index, best_fit>>(130, 6);
  expect_same_decisions<policy<without_in_place_updates<bins_index>, worst_fit>, policy<bins_index, worst_fit>>(140, 4);
  expect_same_decisions<policy<without_in_place_updates<fine_bins_index>, best_fit>, policy<fine_bins_index, best_fit>>(145, 6);
  // TLSF's lists exchange only at a list's head, where erase-then-insert would put the
  // newcomer too: good fit takes heads, so a wrong order changes its decisions.
  using tlsf_lists = segregated_index;
  expect_same_decisions<policy<without_in_place_updates<tlsf_lists>, good_fit>, policy<tlsf_lists, good_fit>>(150, 6);
}

// The registry builds tlsf (seglist with good fit at sli 5, linear_limit 256) on the index
// whose mapping is constants: it must decide exactly as the general one.
TEST(Equivalence, FixedListMappingMakesTheSameDecisions)
{
  expect_same_decisions<policy<segregated_index, good_fit>, policy<tlsf_segregated_index, good_fit>>(160, 9);
}

// The registry builds tlsf's, best_fit's and first_fit's pairs with immediate coalescing
// fixed in their type whenever that is the mode asked for (composition_impl.hpp,
// make_with_immediate_coalescing): each must decide exactly as the pair that reads the mode.
TEST(Equivalence, ImmediateCoalescingFixedInTheTypeMakesTheSameDecisions)
{
  using fixed = fixed_coalescing<coalesce_mode::immediate>;
  expect_same_decisions<policy<tlsf_segregated_index, good_fit>,
                        policy<tlsf_segregated_index, good_fit, threshold_split, fixed>>(170, 9);
  expect_same_decisions<policy<fine_bins_index, best_fit>, policy<fine_bins_index, best_fit, threshold_split, fixed>>(
      180, 9);
  expect_same_decisions<policy<address_ordered_tree_index, first_fit>,
                        policy<address_ordered_tree_index, first_fit, threshold_split, fixed>>(190, 9);
}

TEST(Equivalence, WorstFitIsTheSameChoiceInEveryIndexThatServesIt)
{
  using reference = policy<address_ordered_list_index, worst_fit>;
  expect_same_decisions<reference, policy<tree_index, worst_fit>>(60, 4);
  expect_same_decisions<reference, policy<bins_index, worst_fit>>(60, 4);
  expect_same_decisions<reference, policy<address_ordered_tree_index, worst_fit>>(60, 4);
  expect_same_decisions<reference, policy<segregated_index, worst_fit>>(60, 4);
}

}  // namespace
}  // namespace fraglab::testing
