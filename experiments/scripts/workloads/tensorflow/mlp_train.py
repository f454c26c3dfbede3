"""Dense layers trained with Keras' fit (graph mode through tf.function)."""
from common import options, train
import tensorflow as tf

args, rng = options(__doc__)
x = rng.random((4096, 256), dtype="float32")
y = rng.integers(0, 10, 4096)
model = tf.keras.Sequential([tf.keras.Input((256,)), tf.keras.layers.Dense(512, activation="relu"),
                             tf.keras.layers.Dense(512, activation="relu"), tf.keras.layers.Dense(10)])
train(model, x, y, args.steps, batch=256)
