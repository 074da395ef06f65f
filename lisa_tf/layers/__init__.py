"""Keras layers of the project's SRL models, one layer per module.

- :mod:`~lisa_tf.layers.timing_signal`: sinusoidal position encoding (DeepAtt Eqns 11-12).
- :mod:`~lisa_tf.layers.attention`: multi-head self-attention with a replaceable head (DeepAtt
  Eqns 1-4; LISA Eqns 2-5).
- :mod:`~lisa_tf.layers.sublayers`: DeepAtt's FFN / BiLSTM / GLU sub-layers and the residual +
  layer-norm wrapper (DeepAtt Eqns 5-10).
- :mod:`~lisa_tf.layers.biaffine`: biaffine arc and bilinear label/role scorers (LISA Eqns 4, 6).
- :mod:`~lisa_tf.layers.dropout`: inverted dropout drawing 16 random bits per unit (all models' dropout).
- :mod:`~lisa_tf.layers.word_dropout`: word ids replaced by ``<unk>`` in training (``model.word_dropout``).
- :mod:`~lisa_tf.layers.selective_connection`: Park et al. 2019's gated cross-layer state.

Two helper modules hold what the layers share (and define no layer):

- :mod:`~lisa_tf.layers.masking`: ``MASK_LOGIT``, ``as_bool_mask``, ``mask_logits`` (padded keys
  before a softmax) and ``fill_padded_positions`` (values at padded positions).
- :mod:`~lisa_tf.layers.initializers`: ``clone_initializer``, a fresh initializer per weight.

Importing a module registers its layers with ``keras.saving`` (package ``lisa_tf``); this package
imports all of the layer modules above except the selective connection, which its model imports
itself. Nothing here imports ``lisa_tf.decoding``, ``lisa_tf.models`` or ``lisa_tf.training``.
"""

from lisa_tf.layers.attention import SelfAttention
from lisa_tf.layers.biaffine import BiaffineArcScorer, BilinearLabelScorer
from lisa_tf.layers.dropout import Dropout
from lisa_tf.layers.sublayers import BiLSTMSum, FeedForward, GLUConv, ResidualNorm
from lisa_tf.layers.timing_signal import TimingSignal
from lisa_tf.layers.word_dropout import WordDropout

__all__ = [
    "BiLSTMSum",
    "BiaffineArcScorer",
    "BilinearLabelScorer",
    "Dropout",
    "FeedForward",
    "GLUConv",
    "ResidualNorm",
    "SelfAttention",
    "TimingSignal",
    "WordDropout",
]
