"""Eager mode, no tf.function: every op allocates its output as Python asks for it (inference-like)."""
from common import options
import tensorflow as tf

args, rng = options(__doc__, steps=20)
w = tf.constant(rng.random((512, 512), dtype="float32"))
total = tf.zeros(())
for step in range(args.steps):
    n = int(rng.integers(16, 512))
    x = tf.constant(rng.random((n, 512), dtype="float32"))
    h = tf.nn.relu(tf.matmul(x, w))
    h = tf.concat([h, tf.reverse(h, axis=[0])], axis=0)
    total += tf.reduce_mean(tf.math.softmax(h[: n // 2]))
print("mean", float(total) / args.steps)
