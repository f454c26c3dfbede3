#include <fraglab/runtime/inspect/verify_tf_bfc.hpp>

#include <fraglab/backends/recorded_backend.hpp>
#include <fraglab/runtime/io/input_error.hpp>

#include <algorithm>
#include <bit>
#include <deque>
#include <unordered_map>

namespace fraglab {
namespace {

namespace tf = presets::tf;
using alloc_type = allocator<tf::policy, recorded_backend>;

constexpr std::uint64_t mib = std::uint64_t{1} << 20;
constexpr std::uint64_t tf_default_cpu_limit = std::uint64_t{64} << 30;  // TF_CPU_BFC_MEM_LIMIT_IN_MB's default
constexpr std::string_view tf_cpu_allocator = "bfc_cpu_allocator_for_gpu";

}  // namespace

tf::settings settings_for_verify(trace::tf_bfc_log const& log, trace::tf_allocator_log const& a)
{
  tf::settings s;
  s.garbage_collection = a.name.starts_with("GPU_") && a.name.ends_with("_bfc");
  auto const first = std::find_if(a.events.begin(), a.events.end(), [](trace::tf_event const& e) { return e.op == trace::tf_op::region; });
  bool const grows = first == a.events.end() || (first->size % mib == 0 && std::has_single_bit(first->size / mib) && first->size >= 2 * mib);
  s.allow_growth = grows;
  if (!grows) s.memory_limit = first->size;
  else if (a.name == tf_cpu_allocator) s.memory_limit = log.cpu_memory_limit.value_or(tf_default_cpu_limit);
  else s.memory_limit = tf_default_cpu_limit;
  return s;
}

verify_result verify_tf_allocator(trace::tf_allocator_log const& a, tf::settings const& s)
{
  verify_result r;
  alloc_type alloc(recorded_backend(tf::min_allocation), tf::make_config<recorded_backend>(s));
  recorded_backend& backend = alloc.backend();
  std::unordered_map<std::uint64_t, std::uintptr_t> ours;  // TF's address of a live block -> the preset's
  std::deque<trace::tf_event> given_back;                  // regions TF released in the allocation that follows
  auto const compare_released = [&](std::size_t line) {
    auto released = backend.take_released();
    for (trace::tf_event const& g : given_back) {
      auto const same = std::find_if(released.begin(), released.end(), [&](auto const& x) { return x.address == g.address && x.size == g.size; });
      if (same != released.end()) {
        ++r.segments_matched;
        released.erase(same);
      } else {
        r.mismatch(g.line, "TF gave back the region at " + address_text(g.address) + "; the preset did not");
      }
    }
    given_back.clear();
    if (!released.empty()) r.mismatch(line, "the preset gave back the region at " + address_text(released.front().address) + ", which TF kept");
  };
  for (trace::tf_event const& e : a.events) {
    switch (e.op) {
      case trace::tf_op::region:
        ++r.segments_total;
        backend.expect(e.address, e.size);
        break;
      case trace::tf_op::region_free:
        ++r.segments_total;
        given_back.push_back(e);
        break;
      case trace::tf_op::alloc: {
        ++r.addresses_total;
        std::uint64_t const matched_before = backend.matched();
        std::uint64_t const wrong_before = backend.unexpected() + backend.mismatched_size();
        allocation const got = alloc.allocate(e.size);
        if (got.address == e.address) ++r.addresses_matched;
        else r.mismatch(e.line, "alloc of " + std::to_string(e.size) + " B: TF chose " + address_text(e.address) + ", the preset " + (got ? address_text(got.address) : "none"));
        r.segments_matched += backend.matched() - matched_before;
        if (backend.unexpected() + backend.mismatched_size() != wrong_before)
          r.mismatch(e.line, "the preset acquired a region TF did not acquire here");
        if (backend.pending() != 0) {
          r.mismatch(e.line, "TF acquired a region here that the preset did not need");
          backend.discard_pending();
        }
        compare_released(e.line);
        if (got) ours[e.address] = got.address;
        break;
      }
      case trace::tf_op::failed_alloc: {
        ++r.ooms_total;
        allocation const got = alloc.allocate(e.size);
        compare_released(e.line);
        if (!got) {
          ++r.ooms_matched;
        } else {
          r.mismatch(e.line, "TF failed to allocate " + std::to_string(e.size) + " B; the preset served it");
          alloc.deallocate(got.address);
        }
        break;
      }
      case trace::tf_op::free: {
        auto const it = ours.find(e.address);
        if (it == ours.end()) {
          r.mismatch(e.line, "free of " + address_text(e.address) + ", which is not live in the replay");
          break;
        }
        alloc.deallocate(it->second);
        ours.erase(it);
        break;
      }
    }
  }
  if (backend.pending() != 0) r.mismatch(a.events.empty() ? 0 : a.events.back().line, "regions acquired at the end were never asked for");
  return r;
}

}  // namespace fraglab
