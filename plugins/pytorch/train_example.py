#!/usr/bin/env python3
"""Trains a small transformer on a GPU with fraglab serving PyTorch's CUDA memory.

    FRAGLAB_POLICY=tf_bfc python3 plugins/pytorch/train_example.py \\
        --plugin build/plugins/libfraglab_pytorch_allocator.so [--steps 300]

The plug-in must be installed before PyTorch allocates any CUDA memory, so this script
installs it first thing. The task is a synthetic one a transformer learns in a few hundred
steps (reverse a sequence of tokens); the script exits non-zero unless the loss falls to
less than half its first value, so a run that "works" but computes garbage on corrupted
memory fails. At the end it prints the plug-in's statistics (fraglab_report).

Exit status: 0 trained, 1 did not learn, 2 bad arguments, 77 no PyTorch or no GPU here.
"""

import argparse
import ctypes
import os
import sys
import time


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--plugin", required=True, help="libfraglab_pytorch_allocator.so")
    parser.add_argument("--policy", help="sets FRAGLAB_POLICY (default: the environment's, else pytorch_caching)")
    parser.add_argument("--steps", type=int, default=300)
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()
    if not os.path.exists(args.plugin):
        parser.error(f"{args.plugin} does not exist: build it with `meson compile -C build`")
    if args.policy:
        os.environ["FRAGLAB_POLICY"] = args.policy
    policy = os.environ.get("FRAGLAB_POLICY", "pytorch_caching")

    try:
        import torch
    except ImportError:
        print("train_example.py: PyTorch is not installed here", file=sys.stderr)
        return 77
    if not torch.cuda.is_available():
        print("train_example.py: no CUDA device here", file=sys.stderr)
        return 77

    # Before the first CUDA allocation: PyTorch refuses to change allocators after one.
    allocator = torch.cuda.memory.CUDAPluggableAllocator(os.path.abspath(args.plugin), "fraglab_malloc", "fraglab_free")
    torch.cuda.memory.change_current_allocator(allocator)
    plugin = ctypes.CDLL(os.path.abspath(args.plugin))
    plugin.fraglab_report.restype = ctypes.c_char_p
    plugin.fraglab_check_invariants.restype = ctypes.c_char_p

    torch.manual_seed(args.seed)
    device = torch.device("cuda")
    vocab, length, width = 32, 24, 128
    embed = torch.nn.Embedding(vocab, width).to(device)
    position = torch.nn.Parameter(torch.randn(length, width, device=device) * 0.02)
    layer = torch.nn.TransformerEncoderLayer(width, nhead=4, dim_feedforward=4 * width, dropout=0.0, batch_first=True)
    encoder = torch.nn.TransformerEncoder(layer, num_layers=3).to(device)
    head = torch.nn.Linear(width, vocab).to(device)
    params = list(embed.parameters()) + [position] + list(encoder.parameters()) + list(head.parameters())
    optimizer = torch.optim.AdamW(params, lr=3e-4)

    losses = []
    start = time.perf_counter()
    for step in range(args.steps):
        # Batches of varied size, so the allocator sees varied requests, as in real training.
        batch = 32 + 32 * (step % 4)
        x = torch.randint(0, vocab, (batch, length), device=device)
        logits = head(encoder(embed(x) + position))
        loss = torch.nn.functional.cross_entropy(logits.reshape(-1, vocab), x.flip(1).reshape(-1))
        optimizer.zero_grad(set_to_none=True)
        loss.backward()
        optimizer.step()
        losses.append(loss.item())
    torch.cuda.synchronize()
    seconds = time.perf_counter() - start

    first, last = sum(losses[:10]) / 10, sum(losses[-10:]) / 10
    print(f"policy {policy}: {args.steps} steps in {seconds:.1f} s, loss {first:.3f} -> {last:.3f}")
    print(plugin.fraglab_report().decode(), end="")
    broken = plugin.fraglab_check_invariants().decode()
    if broken:
        print(f"train_example.py: the allocator's invariants are broken:\n{broken}", file=sys.stderr)
        return 1
    if not last < first / 2:
        print("train_example.py: the model did not learn (loss did not halve)", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
