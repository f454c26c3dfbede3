// allocator's diagnosis of a free that names no live block: what the address is (inside a
// live block, inside a free one, outside every region), so that the caller learns a double
// free from a stray pointer. Cold paths: the hot frees reach them only on misuse.
#pragma once

namespace fraglab {

template <class Policy, backend Backend>
auto allocator<Policy, Backend>::misused_reference(block_ref b, chunk const* c) -> free_status
{
  if (c->in_use() && c->address == b.address) {  // live, but another allocator's
    count_misuse();
    return free_status::unknown_pointer;
  }
  free_status const s = diagnosed_misuse(b.address);
  return s == free_status::interior_pointer ? free_status::double_free : s;
}

template <class Policy, backend Backend>
auto allocator<Policy, Backend>::diagnosed_misuse(std::uintptr_t address) noexcept -> free_status
{
  ++stats_.misuses;
  return diagnose(address);
}

template <class Policy, backend Backend>
auto allocator<Policy, Backend>::diagnose(std::uintptr_t address) const noexcept -> free_status
{
  chunk const* const c = detail::find_chunk(regions_, address);
  if (c == nullptr) return free_status::unknown_pointer;
  return c->in_use() ? free_status::interior_pointer : free_status::double_free;
}

}  // namespace fraglab
