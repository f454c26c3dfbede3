#include <fraglab/runtime/trace/call_site.hpp>

#include <algorithm>
#include <array>

namespace fraglab::trace {
namespace {

constexpr std::size_t longest_site = 200;  // a frame's name can be a page of template arguments
constexpr std::string_view aten_operators = "at::_ops::";

bool is_python(stack_frame const& f) { return f.filename.ends_with(".py"); }

// PyTorch's own Python code (torch/nn/modules/module.py, torch/_tensor.py ...), on either
// kind of path separator: the frames between the program and the allocator.
bool inside_torch(stack_frame const& f)
{
  return f.filename.find("/torch/") != std::string_view::npos || f.filename.find("\\torch\\") != std::string_view::npos;
}

// The frames that capture the stack and those of the caching allocator itself: every stack
// starts with them, so they say nothing about the allocation.
bool machinery(stack_frame const& f)
{
  constexpr std::array<std::string_view, 5> prefixes{"torch::unwind", "torch::CapturedTraceback",
                                                     "torch::cuda::(anonymous namespace)::gather", "c10::cuda::",
                                                     "c10::CachingDeviceAllocator"};
  return f.name.empty() ||
         std::any_of(prefixes.begin(), prefixes.end(), [&](std::string_view p) { return f.name.starts_with(p); });
}

std::string_view base_name(std::string_view path)
{
  std::size_t const slash = path.find_last_of("/\\");
  return slash == std::string_view::npos ? path : path.substr(slash + 1);
}

std::string clipped(std::string s)
{
  if (s.size() > longest_site) s.resize(longest_site);
  return s;
}

std::string python_site(stack_frame const& f)
{
  return clipped(std::string(base_name(f.filename)) + ":" + std::to_string(f.line) + " " + std::string(f.name));
}

// `at::_ops::mul_Tensor::call(at::Tensor const&, ...)` -> `at::_ops::mul_Tensor`; a frame of
// another function -> its qualified name before the parameter list.
std::string cpp_site(stack_frame const& f)
{
  std::string_view const name = f.name;
  if (name.starts_with(aten_operators)) return clipped(std::string(name.substr(0, name.find("::", aten_operators.size()))));
  return clipped(std::string(name.substr(0, name.find('('))));
}

}  // namespace

std::string call_site(std::span<stack_frame const> frames)
{
  auto const first = [&](auto&& pred) { return std::find_if(frames.begin(), frames.end(), pred); };
  if (auto const f = first([](stack_frame const& x) { return is_python(x) && !inside_torch(x); }); f != frames.end())
    return python_site(*f);
  if (auto const f = first(is_python); f != frames.end()) return python_site(*f);
  if (auto const f = first([](stack_frame const& x) { return x.name.starts_with(aten_operators); }); f != frames.end())
    return cpp_site(*f);
  if (auto const f = first([](stack_frame const& x) { return !machinery(x); }); f != frames.end()) return cpp_site(*f);
  return "";
}

}  // namespace fraglab::trace
