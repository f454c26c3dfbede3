#include <fraglab/plugins/pytorch/device_allocators.hpp>

#include <cstdio>
#include <exception>
#include <sstream>

namespace fraglab::plugin {
namespace {

std::string mib(std::size_t bytes)
{
  std::ostringstream s;
  s.precision(1);
  s << std::fixed << static_cast<double>(bytes) / (1 << 20) << " MiB";
  return s.str();
}

}  // namespace

device_allocators::~device_allocators()
{
  for (auto& d : devices_) delete d.load();
}

void device_allocators::fail(std::string message) const
{
  std::fprintf(stderr, "fraglab plug-in: %s\n", message.c_str());
  std::lock_guard lock(error_mutex_);
  last_error_ = std::move(message);
}

std::string device_allocators::last_error() const
{
  std::lock_guard lock(error_mutex_);
  return last_error_;
}

device_allocators::device_entry* device_allocators::entry(int device)
{
  if (device < 0 || device >= max_devices) {
    fail("device " + std::to_string(device) + " is out of range (0.." + std::to_string(max_devices - 1) + ")");
    return nullptr;
  }
  auto& slot = devices_[static_cast<std::size_t>(device)];
  if (device_entry* e = slot.load(std::memory_order_acquire)) return e;
  std::lock_guard lock(making_);
  if (device_entry* e = slot.load(std::memory_order_acquire)) return e;
  try {
    param_set params = config_.params;
    if (config_.backend != "host") params.set("device", std::to_string(device));  // host memory has no device
    auto made = std::make_unique<device_entry>();
    made->allocator = make_composition(config_.policy, params, backend_choice{config_.backend, config_.capacity})->make();
    slot.store(made.get(), std::memory_order_release);
    return made.release();
  } catch (std::exception const& e) {
    fail("cannot make " + config_.policy + " over " + config_.backend + " for device " + std::to_string(device) + ": " +
         e.what());
    return nullptr;
  }
}

void* device_allocators::allocate(std::size_t size, int device, void* stream)
{
  device_entry* e = entry(device);
  if (e == nullptr) return nullptr;
  allocation a;
  try {
    std::lock_guard lock(e->mutex);
    a = e->allocator->allocate(size, 1, static_cast<stream_id>(reinterpret_cast<std::uintptr_t>(stream)));
  } catch (std::exception const& x) {  // a CUDA error other than running out of memory
    fail("allocating " + std::to_string(size) + " bytes on device " + std::to_string(device) + ": " + x.what());
    return nullptr;
  }
  if (!a) fail("cannot allocate " + std::to_string(size) + " bytes on device " + std::to_string(device) + ": " +
               std::string(to_string(a.status)));
  return a.pointer();
}

void device_allocators::deallocate(void* p, int device)
{
  if (p == nullptr) return;
  device_entry* e = entry(device);
  if (e == nullptr) return;
  free_status s;
  try {
    std::lock_guard lock(e->mutex);
    s = e->allocator->deallocate(reinterpret_cast<std::uintptr_t>(p));
  } catch (std::exception const& x) {
    fail("freeing on device " + std::to_string(device) + ": " + x.what());
    return;
  }
  if (s != free_status::ok) {
    std::ostringstream what;
    what << "free of " << p << " on device " << device << ": " << to_string(s);
    fail(what.str());
  }
}

template <class F>
void device_allocators::for_each_device(F&& f) const
{
  for (std::size_t d = 0; d < devices_.size(); ++d) {
    device_entry const* e = devices_[d].load(std::memory_order_acquire);
    if (e == nullptr) continue;
    std::lock_guard lock(e->mutex);
    f(d, *e->allocator);
  }
}

std::string device_allocators::report() const
{
  std::ostringstream out;
  for_each_device([&](std::size_t d, any_allocator const& a) {
    allocator_stats const s = a.stats();
    out << "device " << d << ", " << config_.policy << " over " << config_.backend << ": " << s.allocations
        << " allocations, " << s.deallocations << " frees, " << s.failed_allocations << " failed, " << s.misuses
        << " misuses; peak allocated " << mib(s.peak_allocated_bytes) << ", peak reserved " << mib(s.peak_reserved_bytes)
        << "; reserved now " << mib(s.reserved_bytes) << " in " << s.regions << " regions; fragmentation "
        << s.fragmentation() << "\n";
  });
  return out.str();
}

std::string device_allocators::check_invariants() const
{
  std::string out;
  for_each_device([&](std::size_t d, any_allocator const& a) {
    std::string const broken = a.check_invariants();
    if (!broken.empty()) out += "device " + std::to_string(d) + ": " + broken + "\n";
  });
  return out;
}

}  // namespace fraglab::plugin
