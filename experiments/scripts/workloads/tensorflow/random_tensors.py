"""A random sequence of tensor allocations and frees through TF's allocator, no model.

Sizes are log-uniform from 1 byte to --max-bytes; each step allocates one tensor (tf.zeros
of uint8, one BFC allocation of exactly its size) or drops a random live one, which frees it.
With --seed, the sequence is the same on every run: a differential check of tf_bfc against
TF itself over many seeds (experiments/scripts/reproduce/tensorflow_programs.py --random N).
"""
import argparse

import numpy as np
import tensorflow as tf

parser = argparse.ArgumentParser(description=__doc__)
parser.add_argument("--seed", type=int, default=0)
parser.add_argument("--steps", type=int, default=400)
parser.add_argument("--max-bytes", type=int, default=8 << 20)
args = parser.parse_args()
rng = np.random.default_rng(args.seed)
live = []
for _ in range(args.steps):
    if live and rng.random() < 0.45:
        live.pop(int(rng.integers(len(live))))
    else:
        size = int(np.exp(rng.uniform(0, np.log(args.max_bytes))))
        live.append(tf.zeros([size], dtype=tf.uint8))
print("live at the end:", len(live))
