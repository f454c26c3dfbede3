// Replays one allocator of a TensorFlow BFC log (tf_bfc_log.hpp) under the tf_bfc preset and
// compares every decision with the one TF recorded: each allocation's address (the preset's
// regions are TF's, taken from the log as the preset asks for them, so an address matches
// where its offset in its region does), each region acquisition (matched when the preset asks
// for exactly that size then), each region given back by garbage collection (matched when the
// preset gives it back in the same allocation), and each failed allocation (matched when the
// preset, under the same memory limit, fails too).
#pragma once

#include <fraglab/policies/presets/tf_bfc.hpp>
#include <fraglab/runtime/inspect/verify_snapshot.hpp>
#include <fraglab/runtime/trace/tf_bfc_log.hpp>

namespace fraglab {

// The allocator's settings as its log shows them: a first region of 2^k MiB is allow_growth's
// (TF's CPU allocator and TF_FORCE_GPU_ALLOW_GROWTH), any other the whole memory limit acquired
// at once (TF's GPU default). Under allow_growth the limit is the recorder's
// TF_CPU_BFC_MEM_LIMIT_IN_MB for the CPU allocator, else TF's default of 64 GiB. GPU
// allocators (GPU_N_bfc) collect garbage, as TF_ENABLE_GPU_GARBAGE_COLLECTION defaults to.
presets::tf::settings settings_for_verify(trace::tf_bfc_log const& log, trace::tf_allocator_log const& a);

// The counts under verify_result's names: addresses (allocations), segments (regions acquired
// and given back), ooms (failed allocations); mismatches are numbered by the log's line.
verify_result verify_tf_allocator(trace::tf_allocator_log const& a, presets::tf::settings const& s);

}  // namespace fraglab
