#!/usr/bin/env python3
"""Writes a PyTorch memory snapshot whose out-of-memory error a split caused, as
torch.cuda.memory._dump_snapshot writes one (a protocol 2 pickle of plain data):

    split_oom_snapshot.py OUT.pickle [--real-demand] [--no-oom]

The program it records, on a device with 730 MiB for it (docs/explain.md):
  1. a 530 MiB activation is allocated (a new segment) and freed: the block stays cached;
  2. a 270 MiB weight is allocated at model.py:42; PyTorch splits the cached 530 MiB block
     and 260 MiB of it stay free beside the weight, which lives on;
  3. a 400 MiB buffer is asked for at model.py:57: no cached block holds it, the device has
     200 MiB left, and the 530 MiB segment cannot be given back: out of memory, although
     the weight and the buffer (670 MiB) would fit in the 730 MiB there was.
--real-demand asks for 600 MiB in step 3 (870 MiB with the weight: no allocator serves it);
--no-oom ends after step 2 (explain then reads the peak)."""

import argparse
import pickle

MiB = 1 << 20
BASE = 0x7F4A00000000


def frames(line, name):
    return [{"filename": "model.py", "line": line, "name": name}, {"filename": "train.py", "line": 12, "name": "main"}]


def entry(action, addr, size, where=(0, "")):
    return {"action": action, "addr": addr, "size": size, "stream": 0, "time_us": 0, "frames": frames(*where) if where[0] else []}


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("out")
    parser.add_argument("--real-demand", action="store_true")
    parser.add_argument("--no-oom", action="store_true")
    args = parser.parse_args()
    activation, weight = (35, "activation"), (42, "load_weight")
    trace = [entry("segment_alloc", BASE, 530 * MiB, activation), entry("alloc", BASE, 530 * MiB, activation),
             entry("free_requested", BASE, 530 * MiB, activation), entry("free_completed", BASE, 530 * MiB, activation),
             entry("alloc", BASE, 270 * MiB, weight)]
    if not args.no_oom:
        asked = (600 if args.real_demand else 400) * MiB
        trace.append({"action": "oom", "device_free": 200 * MiB, "size": asked, "stream": 0, "time_us": 0,
                      "frames": frames(57, "buffer")})
    blocks = [{"address": BASE, "size": 270 * MiB, "requested_size": 270 * MiB, "state": "active_allocated",
               "frames": frames(*weight)},
              {"address": BASE + 270 * MiB, "size": 260 * MiB, "requested_size": 0, "state": "inactive", "frames": []}]
    segment = {"device": 0, "address": BASE, "total_size": 530 * MiB, "stream": 0, "segment_type": "large",
               "allocated_size": 270 * MiB, "active_size": 270 * MiB, "requested_size": 270 * MiB,
               "frames": frames(*activation), "blocks": blocks}
    settings = {"PYTORCH_CUDA_ALLOC_CONF": "", "max_split_size": -1, "garbage_collection_threshold": 0.0,
                "expandable_segments": False, "roundup_power2_divisions": {}}
    with open(args.out, "wb") as f:
        pickle.dump({"segments": [segment], "device_traces": [trace], "allocator_settings": settings}, f, protocol=2)


if __name__ == "__main__":
    main()
