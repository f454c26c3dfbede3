"""What the TensorFlow programs here share: their two options and quiet, seeded Keras.

Each program is an ordinary TF program: `fraglab record-tf -- python PROGRAM.py` records its
BFC allocator (docs/tensorflow.md); experiments/scripts/reproduce/tensorflow_programs.py runs them all.
"""
import argparse

import numpy as np
import tensorflow as tf


def options(description, steps=8):
    parser = argparse.ArgumentParser(description=description)
    parser.add_argument("--steps", type=int, default=steps, help="training or inference steps")
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()
    tf.keras.utils.set_random_seed(args.seed)
    return args, np.random.default_rng(args.seed)


def train(model, x, y, steps, batch, loss="sparse_categorical_crossentropy"):
    """Keras' fit: a tf.function graph per step, Adam's slots, the input copied per batch."""
    model.compile(optimizer="adam", loss=loss)
    model.fit(x, y, batch_size=batch, epochs=1, steps_per_epoch=steps, verbose=0)
    print("loss", float(model.evaluate(x[:batch], y[:batch], verbose=0)))
