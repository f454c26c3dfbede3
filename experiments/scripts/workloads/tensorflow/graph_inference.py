"""Inference through one tf.function graph of a convolutional model, batches of varied size."""
from common import options
import tensorflow as tf

args, rng = options(__doc__, steps=12)
model = tf.keras.Sequential([tf.keras.Input((64, 64, 3)), tf.keras.layers.Conv2D(32, 3, strides=2, activation="relu"),
                             tf.keras.layers.Conv2D(64, 3, strides=2, activation="relu"),
                             tf.keras.layers.GlobalAveragePooling2D(), tf.keras.layers.Dense(100)])


@tf.function(reduce_retracing=True)
def predict(images):
    return tf.argmax(model(images, training=False), axis=-1)


count = 0
for step in range(args.steps):
    batch = int(rng.choice([1, 8, 32, 64]))
    count += int(tf.size(predict(tf.constant(rng.random((batch, 64, 64, 3), dtype="float32")))))
print("predicted", count)
