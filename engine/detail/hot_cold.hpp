// Which code the hot paths inline.
//
// FRAGLAB_HOT: allocate, hand_out and deallocate inline everything they call (the index, the
// size and split rules, the live map): about 10 calls per allocation and free, each with its
// register saves, were about 55 instructions. A replay's timed loop inlines allocate and
// deallocate in turn (inlined_call in experiments/runtime/replay/replay.hpp). Not in sanitized builds:
// there it doubles the compile time and buys nothing worth measuring.
//
// FRAGLAB_COLD: what runs on a miss, on misuse or once in a long while (a new pool, a
// table or record block that grows) stays out of line even under flatten, which would
// otherwise inline it too. Inlined, the rare paths made the hot functions thousands of
// instructions long, with a 792-byte frame and all six callee-saved registers spilled on
// every call (docs/performance.md, "Hot and cold paths").
#pragma once

#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
#define FRAGLAB_HOT
#elif defined(__has_feature)
#if __has_feature(address_sanitizer) || __has_feature(thread_sanitizer)
#define FRAGLAB_HOT
#endif
#endif
#ifndef FRAGLAB_HOT
#define FRAGLAB_HOT [[gnu::flatten]]
#endif

#define FRAGLAB_COLD [[gnu::noinline, gnu::cold]]
