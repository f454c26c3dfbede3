#!/usr/bin/python3
"""Writes the seed corpora in corpus/TARGET/ (deterministic; rerun after changing a format).

Seeds are small valid inputs of each format plus a few edge cases, so that fuzzing starts
from the grammar rather than from nothing. Crashes found by fuzzing become regression
inputs in corpus/regressions/ and tests in the suites.
"""

import os
import pickle
import struct
import sys

HERE = os.path.dirname(os.path.abspath(__file__))


def put(target, name, data):
    d = os.path.join(HERE, "corpus", target)
    os.makedirs(d, exist_ok=True)
    with open(os.path.join(d, name), "wb") as f:
        f.write(data if isinstance(data, bytes) else data.encode())


TEXT = [
    ("basic", "a 1 100\na 2 200\nf 1\na 3 50\nf 2\nf 3\n"),
    ("aligned_streams", "# comment\na 0x10 64 4096 2\na 7 1 1 5  # trailing\nf 0x10\nf 7\n"),
    ("anomalies", "a 1 64\nf 9\na 1 64\nf 1\nf 1\n"),
]
CSV = [
    ("basic", "Thread,Time,Action,Pointer,Size,Stream\n"
              "140204,08:00:00.000001,allocate,0x7f5a10000000,1024,0x0\n"
              "140204,08:00:00.000002,allocate,0x7f5a10000400,4096,0x1\n"
              "140204,08:00:00.000003,free,0x7f5a10000000,1024,0x0\n"
              "140204,08:00:00.000004,allocate failure,(nil),99999999999,0x0\n"
              "140204,08:00:00.000005,free,0x7f5a10000400,4096,0x1\n"),
]


def binary(events, slots, extra=b""):
    allocs = sum(1 for e in events if e[0] == "a")
    body = b""
    for e in events:
        if e[0] == "a":
            _, slot, size, align_log2, stream = e
            tag = (2 if align_log2 else 0) | (4 if stream else 0)
            body += bytes([tag]) + leb(slot) + leb(size)
            if align_log2:
                body += bytes([align_log2])
            if stream:
                body += leb(stream)
        else:
            body += b"\x01" + leb(e[1])
    header = b"FLTRACE\0" + struct.pack("<HHI6Q", 1, 64, 0, len(events), allocs, len(events) - allocs, slots, 0, 0)
    return header + body + extra


def leb(v):
    out = b""
    while v >= 0x80:
        out += bytes([(v & 0x7F) | 0x80])
        v >>= 7
    return out + bytes([v])


BINARY = [
    ("basic", binary([("a", 1, 100, 0, 0), ("a", 2, 300, 12, 2), ("f", 1), ("f", 0), ("f", 2)], 3)),
    ("empty", binary([], 1)),
]


def snapshot():
    blocks = [{"address": 0x7F0000000000, "size": 1024, "requested_size": 1000, "state": "active_allocated"},
              {"address": 0x7F0000000400, "size": 2096128, "requested_size": 0, "state": "inactive"}]
    segments = [{"device": 0, "address": 0x7F0000000000, "total_size": 2097152, "stream": 0,
                 "segment_type": "small", "blocks": blocks}]
    trace = [{"action": "alloc", "addr": 0x7F0000000400, "size": 512, "stream": 0},
             {"action": "free_completed", "addr": 0x7F0000000400, "size": 512, "stream": 0},
             {"action": "segment_alloc", "addr": 0x7F0000200000, "size": 20971520, "stream": 0},
             {"action": "segment_free", "addr": 0x7F0000200000, "size": 20971520, "stream": 0}]
    return {"segments": segments, "device_traces": [trace],
            "allocator_settings": {"expandable_segments": False, "max_split_size": -1}}


def nested(depth):
    """A list nested `depth` deep, built as a pickler would not: every list pushed, then
    appended into the one below (the shape that crashed a recursive free)."""
    return b"\x80\x02" + b"]" * depth + b"a" * (depth - 1) + b"."


PICKLES = [(f"snapshot_p{p}", pickle.dumps(snapshot(), protocol=p)) for p in (2, 3, 4, 5)] + [
    ("plain_values", pickle.dumps([None, True, False, 1, -1, 2**70, 1.5, "s", b"b", (1, 2), {"k": [1]}], protocol=4)),
    # The structures the hostile inputs use, so that bounded fuzzing starts next to them.
    ("nested_lists", nested(1500)),
    ("nested_dicts", b"\x80\x02" + b"}K\x01" * 1000 + b"s" * 999 + b"."),
    ("memo_shared", b"\x80\x02]q\x00](" + b"h\x00" * 200 + b"e."),
    ("repeated_keys", b"\x80\x02}(" + b"X\x01\x00\x00\x00aK\x01" * 50 + b"u."),
    ("declared_lengths", b"\x80\x04\x8d\xff\xff\xff\xff\xff\xff\xff\x7f" + b"a" * 16),
    ("big_integers", pickle.dumps([2**64 - 1, -(2**200), {"line": 2**64 - 1}], protocol=4)),
]


def main():
    # Each format's seeds go to its own reader and, prefixed, to the format-detecting one.
    for target, prefix, seeds in (("fuzz_native_text", "text_", TEXT), ("fuzz_rmm_csv", "csv_", CSV),
                                  ("fuzz_native_binary", "binary_", BINARY), ("fuzz_pickle", "pickle_", PICKLES)):
        for name, data in seeds:
            put(target, name, data)
            put("fuzz_read_trace", prefix + name, data)
    # Operation sequences: the fuzzer reads the bytes as choices; a few lengths of a simple
    # pattern are enough to start from.
    # fuzz_policy_params reads its settings first, then operations the same way, and
    # fuzz_equivalence a group of compositions, then settings, then operations.
    for n in (16, 64, 256, 1024):
        put("fuzz_policy_ops", f"ops_{n}", bytes((i * 37 + 11) % 256 for i in range(n)))
        put("fuzz_policy_params", f"ops_{n}", bytes((i * 53 + 7) % 256 for i in range(n)))
        put("fuzz_equivalence", f"ops_{n}", bytes((i * 29 + 3) % 256 for i in range(n)))
    # pytorch_expandable (the third named policy) over the host backend (the fourth of the
    # target's choices): its segments are pages mapped into reserved address space and the
    # operations write them. FuzzedDataProvider takes integers from the end of the input.
    expandable = bytearray((i * 53 + 7) % 256 for i in range(1024))
    expandable[-1], expandable[-2] = 2, 3
    put("fuzz_policy_params", "pytorch-expandable-over-host", bytes(expandable))
    return 0


if __name__ == "__main__":
    sys.exit(main())
