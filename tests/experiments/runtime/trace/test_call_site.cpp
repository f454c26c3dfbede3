// Call sites: the frame a snapshot's stack names as where a block came from, and the reader
// keeping one per allocation (a start block's from its segment's frames, or from the frames
// of the free that ends it, which PyTorch records with the allocation's stack).
#include <fraglab/runtime/pickle/pickle_writer.hpp>
#include <fraglab/runtime/trace/call_site.hpp>
#include <fraglab/runtime/trace/read_trace.hpp>

#include <gtest/gtest.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <vector>

#include <unistd.h>

namespace fraglab::trace {
namespace {

stack_frame const unwind{"torch::unwind::unwind()", "??", 0};
stack_frame const allocator_malloc{"c10::cuda::CUDACachingAllocator::Native::DeviceCachingAllocator::malloc(int, unsigned long)",
                                   "CUDACachingAllocator.cpp", 0};
stack_frame const empty_cuda{"at::detail::empty_cuda(c10::ArrayRef<long>, c10::TensorOptions const&)", "??", 0};
stack_frame const mul_op{"at::_ops::mul_Tensor::call(at::Tensor const&, at::Tensor const&)", "??", 0};
stack_frame const torch_module{"_call_impl", "/venv/lib/python3.12/site-packages/torch/nn/modules/module.py", 1790};
stack_frame const torch_windows{"linear", "D:\\venv\\Lib\\site-packages\\torch\\nn\\functional.py", 2000};
stack_frame const model{"forward", "/home/me/project/model.py", 148};
stack_frame const script{"<module>", "/home/me/project/train.py", 12};

TEST(CallSite, NamesTheInnermostFrameOfTheProgramsOwnPython)
{
  std::vector<stack_frame> const frames{unwind, allocator_malloc, empty_cuda, mul_op, torch_windows, torch_module, model, script};
  EXPECT_EQ(call_site(frames), "model.py:148 forward");
}

TEST(CallSite, FallsBackToPyTorchsPythonWhenTheProgramHasNone)
{
  std::vector<stack_frame> const frames{unwind, allocator_malloc, torch_module, torch_windows};
  EXPECT_EQ(call_site(frames), "module.py:1790 _call_impl");
}

TEST(CallSite, NamesTheAtenOperatorOfACppOnlyStack)
{
  std::vector<stack_frame> const frames{unwind, allocator_malloc, empty_cuda, mul_op};
  EXPECT_EQ(call_site(frames), "at::_ops::mul_Tensor");
}

TEST(CallSite, ElseTheFirstFrameOutsideTheAllocatorWithoutItsParameters)
{
  std::vector<stack_frame> const frames{unwind, allocator_malloc, empty_cuda};
  EXPECT_EQ(call_site(frames), "at::detail::empty_cuda");
  std::vector<stack_frame> const machinery_only{unwind, allocator_malloc};
  EXPECT_EQ(call_site(machinery_only), "");
  EXPECT_EQ(call_site({}), "");
}

TEST(CallSite, ALongNameIsClipped)
{
  std::string const name(1000, 'x');
  std::vector<stack_frame> const frames{{name, "??", 0}};
  EXPECT_EQ(call_site(frames).size(), 200u);
}

// One event's or block's frames: the allocator's, then one Python frame.
void frames(pickle::writer& w, char const* function, char const* file, int line)
{
  w.text("frames");
  w.begin_list();
  w.begin_dict();
  w.entry("name", "torch::unwind::unwind()");
  w.entry("filename", "??");
  w.entry("line", 0);
  w.end_dict();
  w.begin_dict();
  w.entry("name", function);
  w.entry("filename", file);
  w.entry("line", line);
  w.end_dict();
  w.end_list();
}

void block(pickle::writer& w, std::int64_t address, std::int64_t size, bool live, char const* function = nullptr)
{
  w.begin_dict();
  w.entry("address", address);
  w.entry("size", size);
  w.entry("requested_size", live ? size : 0);
  w.entry("state", live ? "active_allocated" : "inactive");
  if (function != nullptr) frames(w, function, "/p/model.py", 7);
  w.end_dict();
}

void event(pickle::writer& w, char const* action, std::int64_t address, std::int64_t size, char const* function)
{
  w.begin_dict();
  w.entry("action", action);
  w.entry("addr", address);
  w.entry("size", size);
  w.entry("stream", 0);
  if (function != nullptr) frames(w, function, "/p/train.py", 30);
  w.end_dict();
}

// A 2 MiB small segment at `base`: at the start `kept` (live to the end, its frames in the
// segment) and `freed` (freed by the trace); the trace frees `freed`, then allocates `fresh`.
std::string snapshot_file(bool with_frames)
{
  constexpr std::int64_t base = 1 << 30, kb = 1024;
  pickle::writer w;
  w.begin_dict();
  w.text("segments");
  w.begin_list();
  w.begin_dict();
  w.entry("address", base);
  w.entry("total_size", 2048 * kb);
  w.entry("stream", 0);
  w.entry("segment_type", "small");
  w.text("blocks");
  w.begin_list();
  block(w, base, 512, true, with_frames ? "kept" : nullptr);
  block(w, base + 512, 512, true, with_frames ? "fresh" : nullptr);
  block(w, base + 1024, 2048 * kb - 1024, false);
  w.end_list();
  w.end_dict();
  w.end_list();
  w.text("device_traces");
  w.begin_list();
  w.begin_list();
  event(w, "free_completed", base + 512, 512, with_frames ? "freed" : nullptr);
  event(w, "alloc", base + 512, 512, with_frames ? "fresh" : nullptr);
  w.end_list();
  w.end_list();
  w.end_dict();
  auto const path = std::filesystem::temp_directory_path() /
                    ("fraglab_call_site_" + std::to_string(with_frames) + "_" + std::to_string(::getpid()) + ".pickle");
  std::ofstream(path, std::ios::binary) << w.finish();
  return path.string();
}

TEST(CallSite, TheReaderKeepsOnePerAllocationStartBlocksIncluded)
{
  std::string const path = snapshot_file(true);
  trace const t = read_trace(path);
  std::filesystem::remove(path);
  ASSERT_EQ(t.events.size(), 4u);  // two start blocks, the free, the allocation
  ASSERT_EQ(t.event_sites.size(), t.events.size());
  auto const site = [&](std::size_t i) { return t.sites.at(t.event_sites[i]); };
  EXPECT_EQ(site(0), "model.py:7 kept");    // live to the end: its block's frames
  EXPECT_EQ(site(1), "train.py:30 freed");  // freed by the trace: the free's frames
  EXPECT_EQ(site(3), "train.py:30 fresh");
  EXPECT_EQ(t.sites.front(), "");
}

TEST(CallSite, ASnapshotWithoutFramesHasNoSites)
{
  std::string const path = snapshot_file(false);
  trace const t = read_trace(path);
  std::filesystem::remove(path);
  EXPECT_EQ(t.events.size(), 4u);
  EXPECT_TRUE(t.sites.empty());
  EXPECT_TRUE(t.event_sites.empty());
}

}  // namespace
}  // namespace fraglab::trace
