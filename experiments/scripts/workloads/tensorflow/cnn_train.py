"""A small convolutional network trained on synthetic 32x32 images."""
from common import options, train
import tensorflow as tf

args, rng = options(__doc__, steps=6)
x = rng.random((512, 32, 32, 3), dtype="float32")
y = rng.integers(0, 10, 512)
model = tf.keras.Sequential([tf.keras.Input((32, 32, 3)), tf.keras.layers.Conv2D(32, 3, activation="relu"),
                             tf.keras.layers.MaxPooling2D(), tf.keras.layers.Conv2D(64, 3, activation="relu"),
                             tf.keras.layers.GlobalAveragePooling2D(), tf.keras.layers.Dense(10)])
train(model, x, y, args.steps, batch=64)
