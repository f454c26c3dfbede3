"""A tf.data input pipeline (map, shuffle, batch, prefetch on its own threads) feeding a model."""
from common import options
import tensorflow as tf

args, rng = options(__doc__, steps=10)
images = rng.random((1024, 28, 28), dtype="float32")
labels = rng.integers(0, 10, 1024)
data = (tf.data.Dataset.from_tensor_slices((images, labels)).shuffle(256, seed=args.seed)
        .map(lambda x, y: (tf.image.resize(x[..., None], (32, 32)) * 2.0 - 1.0, y), num_parallel_calls=2)
        .batch(64).prefetch(2).repeat())
model = tf.keras.Sequential([tf.keras.Input((32, 32, 1)), tf.keras.layers.Conv2D(16, 3, activation="relu"),
                             tf.keras.layers.Flatten(), tf.keras.layers.Dense(10)])
model.compile(optimizer="sgd", loss=tf.keras.losses.SparseCategoricalCrossentropy(from_logits=True))
model.fit(data, epochs=1, steps_per_epoch=args.steps, verbose=0)
print("trained", args.steps, "steps")
