#!/usr/bin/env python3
"""Trains a small transformer on a GPU with fraglab serving PyTorch's CUDA memory.

    python3 plugins/pytorch/train_example.py --plugin build/plugins/libfraglab_pytorch_allocator.so \
        --policy tf_bfc [--steps 300] [--losses-out L.json] [--reference R.json]
    python3 plugins/pytorch/train_example.py --policy native --losses-out R.json

The plug-in must be installed before PyTorch allocates any CUDA memory, so this script
installs it first thing. `--policy native` trains with PyTorch's own caching allocator
instead, as the reference. The task is a synthetic one a transformer learns in a few hundred
steps (reverse a sequence of tokens). The script exits non-zero unless

  - the loss falls to less than a quarter of its first value (a run that "works" but
    computes garbage on corrupted memory does not learn), and
  - with --reference (the losses of another run, e.g. the native one), the first 20 steps'
    losses agree with the reference's to 1e-3: the run is seeded and deterministic
    algorithms are asked for, so the allocator must not change what is computed. Later
    steps may drift by floating-point reassociation in kernels without a deterministic
    version, so the largest difference over all steps is printed but not judged.

At the end it prints the plug-in's statistics (fraglab_report), or PyTorch's for native.

Exit status: 0 trained, 1 did not learn or disagreed, 2 bad arguments, 77 no PyTorch or no GPU here.
"""

import argparse
import ctypes
import json
import os
import sys
import time


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--plugin", help="libfraglab_pytorch_allocator.so (not needed with --policy native)")
    parser.add_argument("--policy", help="sets FRAGLAB_POLICY (default: the environment's, else pytorch_caching); "
                                         "'native' trains with PyTorch's own allocator")
    parser.add_argument("--steps", type=int, default=300)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--losses-out", help="write the per-step losses here (JSON)")
    parser.add_argument("--reference", help="losses of a reference run (JSON) the first steps must agree with")
    args = parser.parse_args()
    if args.policy:
        os.environ["FRAGLAB_POLICY"] = args.policy
    policy = os.environ.get("FRAGLAB_POLICY", "pytorch_caching")
    native = policy == "native"
    if not native and not args.plugin:
        parser.error("--plugin is required unless --policy native")
    if not native and not os.path.exists(args.plugin):
        parser.error(f"{args.plugin} does not exist: build it with `meson compile -C build`")
    reference = None
    if args.reference:
        try:
            with open(args.reference) as f:
                reference = json.load(f)["losses"]
        except (OSError, ValueError, KeyError) as e:
            parser.error(f"{args.reference}: expected a JSON object with \"losses\": {e}")
    # Deterministic cuBLAS needs its workspace fixed before the first cuBLAS call.
    os.environ.setdefault("CUBLAS_WORKSPACE_CONFIG", ":4096:8")

    try:
        import torch
    except ImportError:
        print("train_example.py: PyTorch is not installed here", file=sys.stderr)
        return 77
    if not torch.cuda.is_available():
        print("train_example.py: no CUDA device here", file=sys.stderr)
        return 77

    plugin = None
    if not native:
        # Before the first CUDA allocation: PyTorch refuses to change allocators after one.
        allocator = torch.cuda.memory.CUDAPluggableAllocator(os.path.abspath(args.plugin), "fraglab_malloc",
                                                              "fraglab_free")
        torch.cuda.memory.change_current_allocator(allocator)
        plugin = ctypes.CDLL(os.path.abspath(args.plugin))
        plugin.fraglab_report.restype = ctypes.c_char_p
        plugin.fraglab_check_invariants.restype = ctypes.c_char_p

    torch.manual_seed(args.seed)
    torch.use_deterministic_algorithms(True, warn_only=True)
    device = torch.device("cuda")
    vocab, length, width = 32, 24, 128
    embed = torch.nn.Embedding(vocab, width).to(device)
    # Reversing needs to know where a token is: positions as strong as the tokens themselves.
    position = torch.nn.Embedding(length, width).to(device)
    layer = torch.nn.TransformerEncoderLayer(width, nhead=4, dim_feedforward=4 * width, dropout=0.0, batch_first=True)
    encoder = torch.nn.TransformerEncoder(layer, num_layers=3, enable_nested_tensor=False).to(device)
    head = torch.nn.Linear(width, vocab).to(device)
    params = list(embed.parameters()) + list(position.parameters()) + list(encoder.parameters()) + \
        list(head.parameters())
    optimizer = torch.optim.AdamW(params, lr=1e-3)
    places = torch.arange(length, device=device)

    losses = []
    start = time.perf_counter()
    for step in range(args.steps):
        # Batches of varied size, so the allocator sees varied requests, as in real training.
        batch = 32 + 32 * (step % 4)
        x = torch.randint(0, vocab, (batch, length), device=device)
        logits = head(encoder(embed(x) + position(places)))
        loss = torch.nn.functional.cross_entropy(logits.reshape(-1, vocab), x.flip(1).reshape(-1))
        optimizer.zero_grad(set_to_none=True)
        loss.backward()
        optimizer.step()
        losses.append(loss.item())
    torch.cuda.synchronize()
    seconds = time.perf_counter() - start

    first, last = sum(losses[:10]) / 10, sum(losses[-10:]) / 10
    print(f"policy {policy}: {args.steps} steps in {seconds:.1f} s, loss {first:.3f} -> {last:.3f}")
    if args.losses_out:
        with open(args.losses_out, "w") as f:
            json.dump({"policy": policy, "seed": args.seed, "losses": losses}, f)
    if native:
        stats = torch.cuda.memory_stats()
        print(f"device 0, PyTorch's own allocator: {stats['allocation.all.allocated']} allocations, "
              f"peak allocated {stats['allocated_bytes.all.peak'] / 2**20:.1f} MiB, "
              f"peak reserved {stats['reserved_bytes.all.peak'] / 2**20:.1f} MiB, "
              f"{stats['segment.all.current']} segments")
    else:
        print(plugin.fraglab_report().decode(), end="")
        broken = plugin.fraglab_check_invariants().decode()
        if broken:
            print(f"train_example.py: the allocator's invariants are broken:\n{broken}", file=sys.stderr)
            return 1
    failed = False
    if not last < first / 4:
        print("train_example.py: the model did not learn (loss did not fall to a quarter)", file=sys.stderr)
        failed = True
    if reference is not None:
        shared = min(len(reference), len(losses))
        early = max((abs(a - b) for a, b in zip(losses[:20], reference[:20])), default=0.0)
        overall = max((abs(a - b) for a, b in zip(losses[:shared], reference[:shared])), default=0.0)
        print(f"against {args.reference}: largest loss difference {early:.2e} in the first 20 steps, "
              f"{overall:.2e} over {shared} steps")
        if early > 1e-3:
            print("train_example.py: the first steps' losses differ from the reference's", file=sys.stderr)
            failed = True
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
