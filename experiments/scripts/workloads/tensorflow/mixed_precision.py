"""Mixed precision (float16 compute, float32 variables and loss scaling) training of dense layers."""
from common import options, train
import tensorflow as tf

args, rng = options(__doc__, steps=6)
tf.keras.mixed_precision.set_global_policy("mixed_float16")
x = rng.random((2048, 128), dtype="float32")
y = rng.integers(0, 10, 2048)
model = tf.keras.Sequential([tf.keras.Input((128,)), tf.keras.layers.Dense(1024, activation="relu"),
                             tf.keras.layers.Dense(10), tf.keras.layers.Activation("linear", dtype="float32")])
train(model, x, y, args.steps, batch=128)
