"""Word dropout to ``<unk>``: in training, real word ids are replaced by the out-of-vocabulary id at random.

The word vocabulary is every word of the training data (``min_count`` 1), so no training token is
ever out of vocabulary and the ``<unk>`` row of the word embedding never receives a gradient: at
test time every unseen word — often the very predicate whose arguments are labelled — reads the row's
random initial value. Replacing each real word by ``<unk>`` with a small probability while training
teaches that row to stand for "a word the model does not know" in the contexts where words occur, as
Kiperwasser & Goldberg (2016) do for their parser's unknown words.

Kiperwasser & Goldberg drop a word with probability ``α / (α + count(w))``, so rare words (the ones
most like unseen words) are dropped most. :class:`WordDropout` uses one plain ``rate`` for every word:
the model carries no word counts, and a rate is one number to tune and record like the other
dropout rates. The rate is realised to 16 bits as in :mod:`lisa_tf.layers.dropout` (a word is
replaced when its 16-bit draw is below ``round(rate · 2¹⁶)``; 0.1 → 0.100006).

Padding ids are never replaced, so sequence lengths and padding masks derived from the ids are
unchanged; only the ids change, no value is rescaled (an id is either kept or replaced).
"""

from __future__ import annotations

import keras
import tensorflow as tf

from data_pipeline.vocab import OOV_ID, PAD_ID

from lisa_tf.layers.dropout import drop_threshold, uniform_uint16


@keras.saving.register_keras_serializable(package="lisa_tf")
class WordDropout(keras.layers.Layer):
    """Replace each real word id by the unknown-word id with probability ``rate``, in training only.

    Args:
        rate: float in ``[0, 1)``, the probability that a real (non-padding) id becomes
            ``unknown_id``; 0 makes the layer the identity.
        unknown_id: the id of the out-of-vocabulary entry (``<unk>``; default
            :data:`data_pipeline.vocab.OOV_ID`, 1).
        padding_id: the padding id, never replaced (default :data:`data_pipeline.vocab.PAD_ID`, 0).
        seed: optional int seed of the layer's ``keras.random.SeedGenerator`` (advanced on every
            training call, as in ``keras.layers.Dropout``; its state is part of ``model.variables``,
            so a training checkpoint restores it).
        **kwargs: other keyword arguments of ``keras.layers.Layer``.

    Call arguments:
        inputs: integer word ids of any shape, e.g. ``[B, T]``.
        training: bool. Ids are replaced only when true.

    Returns:
        The ids, same shape and dtype: with ``training`` each id other than ``padding_id`` replaced by
        ``unknown_id`` independently with probability ``rate``; otherwise ``inputs`` unchanged.

    Example:
    ```python
    drop = WordDropout(0.1, seed=1)
    ids = tf.constant([[5, 7, 9, 0, 0]])
    drop(ids, training=True)    # e.g. [[5, 1, 9, 0, 0]]: ~10 % of the real ids become <unk>
    drop(ids)                   # [[5, 7, 9, 0, 0]]: the identity at inference
    ```

    References:
        - Kiperwasser & Goldberg 2016, "Simple and Accurate Dependency Parsing Using Bidirectional
          LSTM Feature Representations", TACL: a word is replaced by the unknown symbol with
          probability ``α / (α + count(w))`` in training.
        - Iyyer et al. 2015, "Deep Unordered Composition Rivals Syntactic Methods for Text
          Classification", ACL: the "word dropout" that Kiperwasser & Goldberg adapt (there whole
          words are left out of an average).
    """

    def __init__(self, rate: float, unknown_id: int = OOV_ID, padding_id: int = PAD_ID, seed=None, **kwargs):
        super().__init__(**kwargs)
        if not 0.0 <= rate < 1.0:
            raise ValueError(f"word dropout rate must be in [0, 1), found {rate}")
        if unknown_id == padding_id:
            raise ValueError(f"unknown_id and padding_id must differ, both are {unknown_id}")
        self.rate = float(rate)
        self.unknown_id = int(unknown_id)
        self.padding_id = int(padding_id)
        self.seed = seed
        self.seed_generator = keras.random.SeedGenerator(seed) if drop_threshold(self.rate) > 0 else None
        self.built = True

    def call(self, inputs, training=False):
        if not training or self.seed_generator is None:
            return inputs
        ids = tf.convert_to_tensor(inputs)
        drawn = tf.cast(uniform_uint16(tf.shape(ids), self.seed_generator.next()), tf.int32)
        replace = (drawn < drop_threshold(self.rate)) & tf.not_equal(ids, self.padding_id)
        return tf.where(replace, tf.cast(self.unknown_id, ids.dtype), ids)

    def compute_output_shape(self, input_shape):
        return input_shape

    def get_config(self):
        config = super().get_config()
        config.update(rate=self.rate, unknown_id=self.unknown_id, padding_id=self.padding_id, seed=self.seed)
        return config
