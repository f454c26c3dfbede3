// TensorFlow's BFC log: the lines read, the allocator's order recovered from the lines written
// under its lock, the statements of what a log cannot stand for, bad input, and tf_bfc
// verified against a log whose every decision is worked out by hand.
#include <fraglab/runtime/inspect/verify_tf_bfc.hpp>
#include <fraglab/runtime/io/input_error.hpp>
#include <fraglab/runtime/run/verify_file.hpp>
#include <fraglab/runtime/trace/read_trace.hpp>
#include <fraglab/runtime/trace/tf_bfc_log.hpp>
#include "support/error_text.hpp"

#include <gtest/gtest.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <string>
#include <unistd.h>

namespace fraglab::trace {
namespace {

class TfLogFile {
 public:
  explicit TfLogFile(std::string const& text)
      : path_((std::filesystem::temp_directory_path() / ("tf_bfc_log_" + std::to_string(::getpid()) + "_" + std::to_string(count_++) + ".log")).string())
  {
    std::ofstream(path_, std::ios::binary) << text;
  }
  ~TfLogFile() { std::remove(path_.c_str()); }
  [[nodiscard]] std::string const& path() const { return path_; }

 private:
  static inline int count_ = 0;
  std::string path_;
};

// One line of absl's logging, as TF writes it, from thread `thread`.
std::string line(int thread, std::string const& message)
{
  return "I0000 00:00:1796613341.070621    " + std::to_string(thread) + " bfc_allocator.cc:328] " + message + "\n";
}

std::string stack(std::initializer_list<char const*> frames)
{
  std::string s = "*** Begin stack trace ***\n";
  for (char const* f : frames) s += std::string("\t") + f + "\n";
  return s + "*** End stack trace ***\n";  // line() ends the entry with TF's blank line
}

std::string hex(std::uint64_t x)
{
  char buf[24];
  std::snprintf(buf, sizeof buf, "0x%llx", static_cast<unsigned long long>(x));
  return buf;
}

// An allocation as TF logs it at verbosity 4: the lock's Returning line, then the entry.
std::string alloc(int thread, char const* name, std::uint64_t bytes, std::uint64_t ptr, std::string const& frames = stack({}))
{
  return line(thread, "Returning: " + hex(ptr)) + line(thread, "A: **__") +
         line(thread, "[mem-debug] AllocateRaw," + std::string(name) + "," + std::to_string(bytes) + "," + hex(ptr) + "," + frames);
}

std::string free_of(int thread, char const* name, std::uint64_t bytes, std::uint64_t ptr)
{
  return line(thread, "[mem-debug] DeallocateRaw," + std::string(name) + "," + std::to_string(bytes) + "," + hex(ptr) + "," + stack({})) +
         line(thread, "F: ____");
}

std::string region(int thread, char const* name, std::uint64_t base, std::uint64_t bytes)
{
  return line(thread, "Extending allocation by 2.00MiB bytes for " + std::string(name) + ".") +
         line(thread, "Allocated memory at " + hex(base) + " to " + hex(base + bytes));
}

constexpr char const* cpu = "bfc_cpu_allocator_for_gpu";
constexpr std::uint64_t base = 0x7f0000000040;  // TF's CPU regions come from a 64-byte aligned malloc
constexpr std::uint64_t mib = 1 << 20;

std::vector<tf_op> ops(tf_allocator_log const& a)
{
  std::vector<tf_op> out;
  for (auto const& e : a.events) out.push_back(e.op);
  return out;
}

TEST(TfBfcLog, ReadsAllocationsFreesAndRegionsAndSkipsEveryOtherLine)
{
  TfLogFile const f("WARNING: All log messages before absl::InitializeLog() is called are written to STDERR\n"
                    "I0000 00:00:1.0 1 cpu_feature_guard.cc:227] This TensorFlow binary is optimized\n"
                    "epoch 1/2 loss 0.5\n" +
                    region(7, cpu, base, 2 * mib) + alloc(7, cpu, 1000, base) + line(7, "Merging c 0x1 into c->prev 0x2") +
                    free_of(7, cpu, 1000, base) + "some output of the program\n");
  tf_bfc_log const log = read_tf_bfc_log(f.path());
  ASSERT_EQ(log.allocators.size(), 1u);
  tf_allocator_log const& a = log.allocators[0];
  EXPECT_EQ(a.name, cpu);
  EXPECT_EQ(ops(a), (std::vector<tf_op>{tf_op::region, tf_op::alloc, tf_op::free}));
  EXPECT_EQ(a.events[0].address, base);
  EXPECT_EQ(a.events[0].size, 2 * mib);
  EXPECT_EQ(a.events[1].size, 1000u);
  EXPECT_TRUE(a.order_known());
  EXPECT_FALSE(a.starts_mid_run());
  EXPECT_EQ(tf_log_caveats(log, a), "");

  EXPECT_EQ(detect_format(f.path()), trace_format::tf_bfc_log);
  trace const t = read_trace(f.path());
  EXPECT_EQ(t.source_format, "TensorFlow BFC log");
  EXPECT_EQ(t.allocs, 1u);
  EXPECT_EQ(t.frees, 1u);
  ASSERT_EQ(t.recorded_segments.size(), 1u);
  EXPECT_EQ(t.recorded_segments[0].address, base);
}

// Thread 8's allocation takes the lock before thread 7 frees, but its entry is written after
// thread 7's free entry (which TF writes before taking the lock): the Returning and F lines,
// written under the lock, put them back in the allocator's order.
TEST(TfBfcLog, PlacesEachEntryWhereItsLineUnderTheLockIs)
{
  TfLogFile const f(region(7, cpu, base, 2 * mib) + alloc(7, cpu, 256, base) + line(8, "Returning: " + hex(base + 256)) +
                    line(7, "[mem-debug] DeallocateRaw," + std::string(cpu) + ",256," + hex(base) + "," + stack({})) +
                    line(7, "F: ____") + line(8, "[mem-debug] AllocateRaw," + std::string(cpu) + ",256," + hex(base + 256) + "," + stack({})));
  tf_bfc_log const log = read_tf_bfc_log(f.path());
  tf_allocator_log const& a = log.allocators[0];
  ASSERT_EQ(ops(a), (std::vector<tf_op>{tf_op::region, tf_op::alloc, tf_op::alloc, tf_op::free}));
  EXPECT_EQ(a.events[2].address, base + 256);
  EXPECT_EQ(a.threads, 2u);
  EXPECT_TRUE(a.lock_ordered);
  // In this order tf_bfc makes TF's decisions: the second block beside the first.
  verify_result const r = verify_tf_allocator(a, settings_for_verify(log, a));
  EXPECT_EQ(r.addresses_matched, 2u);
  EXPECT_TRUE(r.complete());
}

TEST(TfBfcLog, SaysWhenTheOrderOfSeveralThreadsIsNotKnown)
{
  std::string const entry = std::string("[mem-debug] AllocateRaw,") + cpu + ",256,";
  TfLogFile const f(region(7, cpu, base, 2 * mib) + line(7, entry + hex(base) + ",") + line(8, entry + hex(base + 256) + ","));
  tf_bfc_log const log = read_tf_bfc_log(f.path());
  EXPECT_FALSE(log.allocators[0].order_known());
  EXPECT_NE(tf_log_caveats(log, log.allocators[0]).find("2 threads allocated and freed"), std::string::npos);
}

TEST(TfBfcLog, RefusesAnAddressReturnedWhileItIsLiveNamingTheLine)
{
  TfLogFile const f(region(7, cpu, base, 2 * mib) + alloc(7, cpu, 256, base) + alloc(7, cpu, 256, base));
  std::string const e = testing::error_text<input_error>([&] { (void)read_tf_bfc_log(f.path()); });
  EXPECT_NE(e.find(f.path() + ":10: bfc_cpu_allocator_for_gpu returned " + hex(base) + ", which the log has live since line 5"), std::string::npos) << e;
}

TEST(TfBfcLog, ALogThatStartsMidRunIsReadAndVerifyRefusesIt)
{
  // The block at base+512 and the region were there before the log's first line.
  TfLogFile const f(free_of(7, cpu, 100, base + 512) + alloc(7, cpu, 256, base));
  tf_bfc_log const log = read_tf_bfc_log(f.path());
  tf_allocator_log const& a = log.allocators[0];
  EXPECT_EQ(a.unknown_frees, 1u);
  EXPECT_EQ(a.outside_regions, 1u);
  EXPECT_NE(tf_log_caveats(log, a).find("starts mid-run (1 frees of blocks allocated before its first line, 1 allocations outside"), std::string::npos);
  trace const t = read_trace(f.path());
  EXPECT_EQ(t.allocs, 1u);  // a replay starts from its first line
  ASSERT_EQ(t.notes.size(), 1u);  // and `fraglab info` says why it may not stand for the run
  EXPECT_EQ(t.notes[0], tf_log_caveats(log, a));
  std::string const e = testing::error_text<input_error>([&] { (void)verify_file(f.path()); });
  EXPECT_NE(e.find("verify cannot check it"), std::string::npos) << e;
}

TEST(TfBfcLog, ALogCutInsideAnEntryKeepsTheEntriesBefore)
{
  std::string const whole = region(7, cpu, base, 2 * mib) + alloc(7, cpu, 256, base);
  TfLogFile const f(whole + line(7, "Returning: " + hex(base + 256)) + "I0000 00:00:1.0    7 bfc_allocator.cc:329] [mem-debug] AllocateRaw," + cpu + ",256,0x7f00");
  tf_bfc_log const log = read_tf_bfc_log(f.path());
  EXPECT_EQ(ops(log.allocators[0]), (std::vector<tf_op>{tf_op::region, tf_op::alloc}));
  EXPECT_EQ(log.cut_at_line, 9u);
  EXPECT_NE(tf_log_caveats(log, log.allocators[0]).find("ends inside an entry at line 9"), std::string::npos);
  // Cut inside a stack: the entry's fields are whole, and it is kept.
  TfLogFile const g(whole + line(7, "Returning: " + hex(base + 256)) +
                    line(7, "[mem-debug] AllocateRaw," + std::string(cpu) + ",256," + hex(base + 256) + ",*** Begin stack trace ***") + "\tframe");
  EXPECT_EQ(read_tf_bfc_log(g.path()).allocators[0].events.size(), 3u);
}

TEST(TfBfcLog, SeveralAllocatorsInterleavedAreOneTraceEachChosenByName)
{
  TfLogFile const f(region(7, cpu, base, 2 * mib) + region(9, "GPU_0_bfc", 0x7e0000000000, 1000 * mib) + alloc(7, cpu, 256, base) +
                    alloc(9, "GPU_0_bfc", 4096, 0x7e0000000000) + free_of(7, cpu, 256, base));
  std::vector<trace> const all = read_traces(f.path());
  ASSERT_EQ(all.size(), 2u);
  std::string const name = std::filesystem::path(f.path()).filename().string();
  EXPECT_EQ(all[0].name, name + "@" + cpu);
  EXPECT_EQ(all[1].name, name + "@GPU_0_bfc");
  EXPECT_EQ(all[1].allocs, 1u);
  EXPECT_EQ(read_trace(f.path(), allocator_choice::parse("GPU_0_bfc")).allocator, "GPU_0_bfc");
  std::string const e = testing::error_text<input_error>([&] { (void)read_trace(f.path()); });
  EXPECT_NE(e.find("holds 2 allocators (bfc_cpu_allocator_for_gpu, GPU_0_bfc): choose one with --device NAME"), std::string::npos) << e;
  std::string const none = testing::error_text<input_error>([&] { (void)read_trace(f.path(), allocator_choice::parse("GPU_1_bfc")); });
  EXPECT_NE(none.find("no allocator GPU_1_bfc in it (it holds bfc_cpu_allocator_for_gpu, GPU_0_bfc)"), std::string::npos) << none;
  // GPU_0_bfc acquired its whole limit at once: TF's GPU default, with garbage collection.
  tf_bfc_log const log = read_tf_bfc_log(f.path());
  presets::tf::settings const s = settings_for_verify(log, log.allocators[1]);
  EXPECT_FALSE(s.allow_growth);
  EXPECT_EQ(s.memory_limit, 1000 * mib);
  EXPECT_TRUE(s.garbage_collection);
}

TEST(TfBfcLog, GarbageBetweenLinesIsSkippedAndAnEntryAfterOutputWithoutNewlineIsRead)
{
  TfLogFile const f(region(7, cpu, base, 2 * mib) + "\x01\x02 binary junk \xff\n" + "step 3 done" +
                    std::string("[mem-debug] AllocateRaw,") + cpu + ",256," + hex(base) + ",\n" + "}}}{{{\n");
  EXPECT_EQ(read_tf_bfc_log(f.path()).allocators[0].events.size(), 2u);
}

TEST(TfBfcLog, ABadEntryIsRefusedWithItsLineAndWhatWasExpected)
{
  auto const error = [](std::string const& text) {
    TfLogFile const f(text);
    return testing::error_text<input_error>([&] { (void)read_tf_bfc_log(f.path()); });
  };
  EXPECT_NE(error(line(1, "[mem-debug] AllocateRaw,cpu,12x,0x10,")).find(":1: expected a size in bytes after the allocator's name, got '12x'"),
            std::string::npos);
  EXPECT_NE(error(line(1, "x") + line(1, "[mem-debug] DeallocateRaw,cpu,12,zz,")).find(":2: expected an address (0x...) after the size, got 'zz'"),
            std::string::npos);
  EXPECT_NE(error(line(1, "Allocated memory at 0x20 to 0x10")).find(":1: expected 'Allocated memory at 0xBASE to 0xEND'"), std::string::npos);
  EXPECT_NE(error(line(1, "Creating new BFCAllocator named: cpu")).find("no BFC allocation in it"), std::string::npos);
}

TEST(TfBfcLog, AStackOfTenThousandFramesGivesItsCallSite)
{
  std::string frames = "*** Begin stack trace ***\n\ttsl::CurrentStackTrace[abi:cxx11]()\n\ttsl::BFCAllocator::AllocateRaw(unsigned long)\n"
                       "\ttensorflow::Tensor::Tensor(tsl::Allocator*, tensorflow::DataType)\n\t\n"
                       "\ttensorflow::MatMulOp<Eigen::ThreadPoolDevice, float, false>::Compute(tensorflow::OpKernelContext*)\n";
  for (int i = 0; i < 10000; ++i) frames += "\t_PyEval_EvalFrameDefault\n";
  frames += "*** End stack trace ***\n";
  TfLogFile const f(region(7, cpu, base, 2 * mib) + alloc(7, cpu, 256, base, frames) + free_of(7, cpu, 256, base));
  trace const t = read_trace(f.path());
  ASSERT_EQ(t.event_sites.size(), 2u);
  EXPECT_EQ(t.sites[t.event_sites[0]], "tensorflow::MatMulOp<Eigen::ThreadPoolDevice, float, false>::Compute");
  EXPECT_EQ(t.event_sites[1], t.event_sites[0]);  // a free is known by its block's allocation
}

TEST(TfBfcLog, CallSiteIsTheKernelElseTheFirstFrameOutsideTheMachinery)
{
  EXPECT_EQ(tf_call_site({"tsl::CurrentStackTrace[abi:cxx11]()", "tsl::BFCAllocator::AllocateRaw(unsigned long)",
                          "tensorflow::Tensor::Tensor(tsl::Allocator*)", "tensorflow::EagerContext::CreateTensor(tensorflow::DataType)",
                          "EagerTensor_init"}),
            "tensorflow::EagerContext::CreateTensor");
  EXPECT_EQ(tf_call_site({"", "tensorflow::ThreadPoolDevice::Compute(tensorflow::OpKernel*)", "tensorflow::ExecutorState::Process()"}),
            "tensorflow::ExecutorState::Process");
  EXPECT_EQ(tf_call_site({"tsl::CurrentStackTrace[abi:cxx11]()"}), "");
}

// Every decision by hand, TF's rules (docs/policies.md): 256-byte rounding, best fit by
// (size, address), a split when the chunk is at least twice the request, regions of 2 MiB
// doubling, each from an address of the sub-allocator's choosing.
TEST(TfBfcLog, TfBfcMakesEveryDecisionOfAHandWorkedLog)
{
  constexpr std::uint64_t other = 0x7e0000000040;  // the second region: anywhere malloc puts it
  TfLogFile const f(std::string("fraglab record-tf: TF_CPU_BFC_MEM_LIMIT_IN_MB=64 command: python x.py\n") + region(1, cpu, base, 2 * mib) +
                    alloc(1, cpu, 1000, base) +         // 1024 at the start of the region
                    alloc(1, cpu, 3000, base + 1024) +  // 3072 behind it
                    free_of(1, cpu, 1000, base) +       // a free 1024 in front
                    alloc(1, cpu, 500, base) +          // best fit: the 1024, split (1024 >= 2 x 512)
                    alloc(1, cpu, 600, base + 4096) +   // 768: the 512 left is too small; the rest of the region
                    region(1, cpu, other, 4 * mib) +    // 3 MiB fits no chunk: the next region, doubled to 4 MiB
                    alloc(1, cpu, 3 * mib, other) +     //
                    alloc(1, cpu, 200, base + 512));    // 256: best fit is the 512 left at base + 512
  tf_bfc_log const log = read_tf_bfc_log(f.path());
  ASSERT_EQ(log.cpu_memory_limit, 64 * mib);
  presets::tf::settings const s = settings_for_verify(log, log.allocators[0]);
  EXPECT_TRUE(s.allow_growth);
  EXPECT_EQ(s.memory_limit, 64 * mib);
  verify_result const r = verify_tf_allocator(log.allocators[0], s);
  EXPECT_EQ(r.addresses_matched, 6u);
  EXPECT_EQ(r.addresses_total, 6u);
  EXPECT_EQ(r.segments_matched, 2u);
  EXPECT_EQ(r.segments_total, 2u);
  EXPECT_TRUE(r.first_mismatches.empty());

  // Where TF chose otherwise, the first mismatch names the line.
  TfLogFile const g(region(1, cpu, base, 2 * mib) + alloc(1, cpu, 1000, base + 256));
  tf_bfc_log const wrong = read_tf_bfc_log(g.path());
  verify_result const w = verify_tf_allocator(wrong.allocators[0], settings_for_verify(wrong, wrong.allocators[0]));
  ASSERT_EQ(w.first_mismatches.size(), 1u);
  EXPECT_EQ(w.first_mismatches[0].event, 5u);
  EXPECT_EQ(w.first_mismatches[0].what, "alloc of 1000 B: TF chose " + hex(base + 256) + ", the preset " + hex(base));
}

}  // namespace
}  // namespace fraglab::trace
