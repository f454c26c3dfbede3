#!/usr/bin/python3
"""A policy part's optional hooks must be declared (engine/part_traits.hpp): a hook declared
but misspelt, declared but given other parameters, or defined but not declared must each
fail to compile with a message naming the hook, and the same part spelt right must compile.
So must a backend's optional members (engine/backend_traits.hpp). Likewise policy_with's named options (policies/policy_options.hpp): an argument that is not an
option, a missing index or fit, or an option given twice fails, naming what is wrong.

    check_part_hooks.py INCLUDE_ROOT COMPILER [COMPILER ARGS...]

Each case is one translation unit, checked with -fsyntax-only."""

import os
import subprocess
import sys
import tempfile

PROGRAM = """
#include <fraglab/backends/simulated_backend.hpp>
#include <fraglab/engine/allocator.hpp>
#include <fraglab/policies/indexes/tree_index.hpp>
#include <fraglab/policies/policy.hpp>
#include <cstdint>
#include <optional>

struct part {{
  {body}
}};
using P = fraglab::policy<fraglab::tree_index, fraglab::best_fit, fraglab::threshold_split, fraglab::coalescing,
                          fraglab::growth_rule, fraglab::quantum_size_rule, {pools}, {reclaim}>;
int main()
{{
  fraglab::allocator<P, fraglab::simulated_backend> a(fraglab::simulated_backend{{}});
  return a.allocate(64) ? 0 : 1;
}}
"""

RECLAIM_HOOKED = "static constexpr fraglab::part_hook hooks = fraglab::part_hook::before_growth;"
POOL_HOOKED = ("static constexpr fraglab::part_hook hooks = fraglab::part_hook::mapping_size;\n"
               "  std::uint64_t pool_key(fraglab::stream_id, std::size_t) const { return 0; }")

# (name, part body, the part's role, None if it must compile, else a word the error must name)
CASES = [
    ("a declared reclaim hook, spelt right",
     RECLAIM_HOOKED + "\n  template <class V, class K> void before_growth(V&, K const&, std::size_t) {}",
     "reclaim", None),
    ("a declared reclaim hook, misspelt",
     RECLAIM_HOOKED + "\n  template <class V, class K> void befor_growth(V&, K const&, std::size_t) {}",
     "reclaim", "before_growth"),
    ("a declared reclaim hook with other parameters",
     RECLAIM_HOOKED + "\n  template <class V> void before_growth(V&, std::size_t) {}",
     "reclaim", "before_growth"),
    ("a reclaim hook defined but not declared",
     "template <class V, class K> bool after_failed_growth(V&, K const&, std::size_t) { return false; }",
     "reclaim", "after_failed_growth"),
    ("a declared pool hook, spelt right",
     POOL_HOOKED + "\n  std::size_t mapping_size(std::size_t, bool) const { return 0; }",
     "pools", None),
    ("a declared pool hook, misspelt",
     POOL_HOOKED + "\n  std::size_t maping_size(std::size_t, bool) const { return 0; }",
     "pools", "mapping_size"),
    ("a hook of another kind of part",
     "static constexpr fraglab::part_hook hooks = fraglab::part_hook::split_override;",
     "reclaim", "another kind of part"),
]


OPTIONS_PROGRAM = """
#include <fraglab/backends/simulated_backend.hpp>
#include <fraglab/engine/allocator.hpp>
#include <fraglab/policies/indexes/tree_index.hpp>
#include <fraglab/policies/policy_options.hpp>
using namespace fraglab;
using P = policy_with<{options}>;
int main()
{{
  allocator<P, simulated_backend> a(simulated_backend{{}});
  return a.allocate(64) ? 0 : 1;
}}
"""

# (name, policy_with's arguments, None if it must compile, else a word the error must name)
OPTION_CASES = [
    ("named options in any order", "coalesce_is<fixed_coalescing<coalesce_mode::immediate>>, fit_is<best_fit>, "
     "index_is<tree_index>", None),
    ("an argument that is not an option", "index_is<tree_index>, fit_is<best_fit>, threshold_split", "options only"),
    ("no fit", "index_is<tree_index>", "exactly one fit_is"),
    ("an option given twice", "index_is<tree_index>, fit_is<best_fit>, growth_is<growth_rule>, growth_is<growth_rule>",
     "given twice"),
]


BACKEND_PROGRAM = """
#include <fraglab/backends/simulated_backend.hpp>
#include <fraglab/engine/allocator.hpp>
#include <fraglab/policies/indexes/tree_index.hpp>
#include <fraglab/policies/policy.hpp>

// The simulated space with one optional member more, or misspelt.
struct wrapped : fraglab::simulated_backend {{
  {body}
}};
static_assert(fraglab::backend<wrapped>);
using P = fraglab::policy<fraglab::tree_index, fraglab::best_fit>;
int main()
{{
  fraglab::allocator<P, wrapped> a(wrapped{{}});
  return a.allocate(64) ? 0 : 1;
}}
"""
SIMULATED_HOOKS = ("fraglab::backend_hook::next_address | fraglab::backend_hook::reserve | "
                   "fraglab::backend_hook::acquire_at | fraglab::backend_hook::map_alias | "
                   "fraglab::backend_hook::unmap_alias | fraglab::backend_hook::follow")

# (name, the wrapped backend's body, None if it must compile, else a word the error must name)
BACKEND_CASES = [
    ("a declared member, spelt right",
     f"static constexpr fraglab::backend_hook hooks = {SIMULATED_HOOKS} | fraglab::backend_hook::acquire_mapping;\n"
     "  fraglab::acquisition acquire_mapping(std::size_t n) { return acquire(n, granularity()); }", None),
    ("a declared member, misspelt",
     f"static constexpr fraglab::backend_hook hooks = {SIMULATED_HOOKS} | fraglab::backend_hook::acquire_mapping;\n"
     "  fraglab::acquisition aquire_mapping(std::size_t n) { return acquire(n, granularity()); }", "acquire_mapping"),
    ("a member defined but not declared",
     f"static constexpr fraglab::backend_hook hooks = {SIMULATED_HOOKS};\n"
     "  fraglab::acquisition acquire_mapping(std::size_t n) { return acquire(n, granularity()); }", "acquire_mapping"),
    ("a declared member with other parameters",
     f"static constexpr fraglab::backend_hook hooks = {SIMULATED_HOOKS} | fraglab::backend_hook::acquire_mapping;\n"
     "  fraglab::acquisition acquire_mapping(std::size_t n, bool) { return acquire(n, granularity()); }",
     "acquire_mapping"),
]


def sources():
    """(name, program, None or the word its error must name) of every case."""
    for name, body, role, must_name in CASES:
        pools, reclaim = ("part", "fraglab::no_reclaim") if role == "pools" else ("fraglab::stream_pool_rule", "part")
        yield name, PROGRAM.format(body=body, pools=pools, reclaim=reclaim), must_name
    for name, body, must_name in BACKEND_CASES:
        yield "backend: " + name, BACKEND_PROGRAM.format(body=body), must_name
    for name, options, must_name in OPTION_CASES:
        yield "policy_with: " + name, OPTIONS_PROGRAM.format(options=options), must_name


def main(argv):
    include_root, compiler = argv[0], argv[1:]
    failed = 0
    cases = list(sources())
    with tempfile.TemporaryDirectory() as scratch:
        for name, program, must_name in cases:
            source = os.path.join(scratch, "case.cpp")
            with open(source, "w") as f:
                f.write(program)
            done = subprocess.run(compiler + ["-std=c++20", "-fsyntax-only", "-I", include_root, source],
                                  capture_output=True, text=True)
            if must_name is None:
                ok = done.returncode == 0
                why = "" if ok else "did not compile:\n" + done.stderr[-2000:]
            else:
                ok = done.returncode != 0 and must_name in done.stderr
                why = "" if ok else ("compiled" if done.returncode == 0 else "failed without naming " + must_name +
                                     ":\n" + done.stderr[-2000:])
            print(("ok:   " if ok else "FAIL: ") + name + (" " + why if why else ""))
            failed += 0 if ok else 1
    print(f"check_part_hooks: {len(cases) - failed} passed, {failed} failed")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
