#!/usr/bin/env python3
"""Records a PyTorch memory snapshot of a small real training run, as a new real trace.

    python3 experiments/scripts/device/record_snapshot.py -o small-transformer.pickle [--steps 20]

Trains a small GPT-style transformer (causal self-attention, 4 layers, width 256) on random
tokens with PyTorch's own caching allocator, recording its history with
torch.cuda.memory._record_memory_history, and writes torch.cuda.memory._dump_snapshot: the
format of the snapshots in ../shared/traces/pytorch, which `fraglab replay`, `fraglab info`
and `fraglab verify -p pytorch_caching` read.

The snapshot records every allocation PyTorch made and the segments it held, so
`fraglab verify` can check our pytorch_caching preset against it address for address on
the machine that captured it.

Exit status: 0 written, 2 bad arguments, 77 no PyTorch or no GPU here.
"""

import argparse
import os
import sys


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("-o", "--output", required=True, help="the snapshot to write (.pickle)")
    parser.add_argument("--steps", type=int, default=20)
    parser.add_argument("--layers", type=int, default=4)
    parser.add_argument("--width", type=int, default=256)
    parser.add_argument("--context", type=int, default=256)
    parser.add_argument("--batch", type=int, default=16)
    parser.add_argument("--max-entries", type=int, default=1_000_000, help="history kept by PyTorch")
    args = parser.parse_args()

    try:
        import torch
    except ImportError:
        print("record_snapshot.py: PyTorch is not installed here", file=sys.stderr)
        return 77
    if not torch.cuda.is_available():
        print("record_snapshot.py: no CUDA device here", file=sys.stderr)
        return 77

    torch.manual_seed(0)
    device = torch.device("cuda")
    vocab = 1024
    torch.cuda.memory._record_memory_history(max_entries=args.max_entries)

    class Block(torch.nn.Module):
        def __init__(self, width):
            super().__init__()
            self.ln1, self.ln2 = torch.nn.LayerNorm(width), torch.nn.LayerNorm(width)
            self.attn = torch.nn.MultiheadAttention(width, 4, batch_first=True)
            self.mlp = torch.nn.Sequential(torch.nn.Linear(width, 4 * width), torch.nn.GELU(),
                                           torch.nn.Linear(4 * width, width))

        def forward(self, x, mask):
            h = self.ln1(x)
            x = x + self.attn(h, h, h, attn_mask=mask, need_weights=False)[0]
            return x + self.mlp(self.ln2(x))

    embed = torch.nn.Embedding(vocab, args.width).to(device)
    blocks = torch.nn.ModuleList(Block(args.width) for _ in range(args.layers)).to(device)
    head = torch.nn.Linear(args.width, vocab).to(device)
    params = list(embed.parameters()) + list(blocks.parameters()) + list(head.parameters())
    optimizer = torch.optim.AdamW(params, lr=1e-3)
    mask = torch.nn.Transformer.generate_square_subsequent_mask(args.context, device=device)

    for step in range(args.steps):
        tokens = torch.randint(0, vocab, (args.batch, args.context + 1), device=device)
        x = embed(tokens[:, :-1])
        for b in blocks:
            x = b(x, mask)
        loss = torch.nn.functional.cross_entropy(head(x).reshape(-1, vocab), tokens[:, 1:].reshape(-1))
        optimizer.zero_grad(set_to_none=True)
        loss.backward()
        optimizer.step()
    torch.cuda.synchronize()

    tmp = args.output + ".partial"
    torch.cuda.memory._dump_snapshot(tmp)
    torch.cuda.memory._record_memory_history(enabled=None)
    os.replace(tmp, args.output)  # never a half-written snapshot under the final name
    print(f"record_snapshot.py: {args.steps} steps on {torch.cuda.get_device_name()}, "
          f"torch {torch.__version__}: wrote {args.output}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
