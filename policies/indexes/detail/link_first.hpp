// Puts a value first in a Boost.Intrusive list without reading the old first element.
#pragma once

namespace fraglab::detail {

// Boost's push_front links the value before the old first element, and so reads that
// element's link back to the list's header, which is known: a load from another chunk's
// record, often out of the cache, on which the stores after it wait. Linking it after the
// header reads the header alone; the old first element's link is only written.
// (For lists without a constant-time size, which keep no count to update.)
template <class List>
void link_first(List& l, typename List::reference value) noexcept
{
  static_assert(!List::constant_time_size, "link_first keeps no size count");
  List::node_algorithms::link_after(l.end().pointed_node(), List::value_traits::to_node_ptr(value));
}

}  // namespace fraglab::detail
