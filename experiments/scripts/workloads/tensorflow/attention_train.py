"""A transformer block (multi-head self-attention, feed-forward, layer norm) trained."""
from common import options, train
import tensorflow as tf

args, rng = options(__doc__, steps=4)
length, width = 64, 128
x = rng.random((256, length, width), dtype="float32")
y = rng.integers(0, 8, 256)
inputs = tf.keras.Input((length, width))
h = tf.keras.layers.MultiHeadAttention(num_heads=4, key_dim=32)(inputs, inputs)
h = tf.keras.layers.LayerNormalization()(inputs + h)
h = tf.keras.layers.LayerNormalization()(h + tf.keras.layers.Dense(width)(tf.keras.layers.Dense(4 * width, activation="gelu")(h)))
outputs = tf.keras.layers.Dense(8)(tf.keras.layers.GlobalAveragePooling1D()(h))
train(tf.keras.Model(inputs, outputs), x, y, args.steps, batch=32)
