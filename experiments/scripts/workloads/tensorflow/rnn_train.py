"""A recurrent model (an LSTM over sequences) trained: while-loops and per-step buffers."""
from common import options, train
import tensorflow as tf

args, rng = options(__doc__, steps=4)
x = rng.random((256, 40, 32), dtype="float32")
y = rng.integers(0, 4, 256)
model = tf.keras.Sequential([tf.keras.Input((40, 32)), tf.keras.layers.LSTM(64), tf.keras.layers.Dense(4)])
train(model, x, y, args.steps, batch=64)
