"""Inverted dropout whose keep/drop decision is drawn from 16 random bits per unit.

Every DeepAtt layer applies dropout four times (Tan et al. 2018 §4 "Model Setup", "Settings and
Regularization": residual dropout 0.2 on both sub-layers, attention dropout 0.1, ReLU dropout 0.1
on the ``filter_size``-wide FFN activations), so on a CPU the random numbers are a measurable share
of a training step: ``keras.layers.Dropout`` (``tf.nn.experimental.stateless_dropout``) draws one
32-bit float per unit, and on the 2-core benchmark machine dropping a ``[4096, 800]`` activation
costs as much as the FFN's first matmul. :class:`Dropout` draws one 32-bit Philox word per *two* units and compares each 16-bit
half with a threshold, which halves the random-number work (``benchmarks/throughput.py`` measures
the effect on whole models).

The rate is realised to 16 bits: a unit is dropped when its 16-bit draw is below
``t = round(rate · 2¹⁶)``, so the dropout probability is ``t / 2¹⁶`` (within ``2⁻¹⁷`` of ``rate``:
0.1 → 0.100006) and kept units are scaled by ``2¹⁶ / (2¹⁶ − t)``, which keeps the expectation exact
(Srivastava et al. 2014, "inverted" dropout).
"""

from __future__ import annotations

import keras
import tensorflow as tf

#: Number of distinct values of one draw (16 bits).
LEVELS = 1 << 16


def drop_threshold(rate: float) -> int:
    """The 16-bit threshold ``t`` of a dropout rate: units whose draw is below ``t`` are dropped."""
    if not 0.0 <= rate <= 1.0:
        raise ValueError(f"dropout rate must be in [0, 1], found {rate}")
    return int(round(rate * LEVELS))


def uniform_uint16(shape, seed):
    """Independent uniform 16-bit integers of ``shape`` (as uint16), two from each 32-bit Philox word."""
    count = tf.reduce_prod(shape)
    words = tf.random.stateless_uniform([(count + 1) // 2], seed, dtype=tf.uint32, minval=None, maxval=None)
    halves = tf.reshape(tf.bitcast(words, tf.uint16), [-1])[:count]
    return tf.reshape(halves, shape)


def dropout16(inputs, rate: float, seed, noise_shape=None):
    """``inputs`` with units dropped with probability ``t / 2¹⁶`` (``t`` = :func:`drop_threshold`) and the
    others scaled by ``2¹⁶ / (2¹⁶ − t)``. ``noise_shape`` (broadcastable to ``inputs``) shares one
    decision along its size-1 axes, as in ``keras.layers.Dropout``; ``seed`` is a shape-[2] integer tensor."""
    threshold = drop_threshold(rate)
    if threshold == 0:
        return inputs
    if threshold == LEVELS:
        return tf.zeros_like(inputs)
    shape = tf.shape(inputs)
    if noise_shape is not None:  # None entries take the input's size, as in keras.layers.Dropout
        shape = tf.stack([shape[i] if size is None else size for i, size in enumerate(noise_shape)])
    keep = tf.cast(uniform_uint16(shape, seed) >= threshold, inputs.dtype)
    return inputs * (keep * tf.cast(LEVELS / (LEVELS - threshold), inputs.dtype))


@keras.saving.register_keras_serializable(package="lisa_tf")
class Dropout(keras.layers.Dropout):
    """``keras.layers.Dropout`` with the mask drawn by :func:`dropout16` (16 random bits per unit).

    Same arguments, seeding (a ``keras.random.SeedGenerator``, advanced on every training call),
    ``noise_shape`` and configuration as ``keras.layers.Dropout``; identity when ``training`` is false.

    Example:
    ```python
    drop = Dropout(0.1, seed=1)
    y = drop(keras.ops.ones((4096, 800)), training=True)   # ~10 % zeros, the rest 1 / 0.899994
    ```
    """

    def call(self, inputs, training=False):
        if not training or drop_threshold(self.rate) == 0:
            return inputs
        return dropout16(inputs, self.rate, self.seed_generator.next(), self.noise_shape)
