"""Keras layers of the project's SRL models, one layer per module.

- :mod:`~lisa_tf.layers.timing_signal`: sinusoidal position encoding (DeepAtt Eqns 11-12).
- :mod:`~lisa_tf.layers.attention`: multi-head self-attention with a replaceable head (DeepAtt
  Eqns 1-4; LISA Eqns 2-5).
- :mod:`~lisa_tf.layers.sublayers`: DeepAtt's FFN / BiLSTM / GLU sub-layers and the residual +
  layer-norm wrapper (DeepAtt Eqns 5-10).
- :mod:`~lisa_tf.layers.biaffine`: biaffine arc and bilinear label/role scorers (LISA Eqns 4, 6).
- :mod:`~lisa_tf.layers.dropout`: inverted dropout drawing 16 random bits per unit (all models' dropout).
- :mod:`~lisa_tf.layers.viterbi`: constrained BIO Viterbi in core TF ops and transition statistics.
- :mod:`~lisa_tf.layers.selective_connection`: Park et al. 2019's gated cross-layer state.

Importing a module registers its layers with ``keras.saving`` (package ``lisa_tf``); this package
imports all of the above except the selective connection, which its model imports itself.
"""

from lisa_tf.layers.attention import SelfAttention
from lisa_tf.layers.biaffine import BiaffineArcScorer, BilinearLabelScorer
from lisa_tf.layers.dropout import Dropout
from lisa_tf.layers.sublayers import BiLSTMSum, FeedForward, GLUConv, ResidualNorm
from lisa_tf.layers.timing_signal import TimingSignal
from lisa_tf.layers.viterbi import (
    FORBIDDEN,
    bio_start_mask,
    bio_transition_mask,
    start_log_probs,
    transition_log_probs,
    viterbi_decode,
)

__all__ = [
    "FORBIDDEN",
    "BiLSTMSum",
    "BiaffineArcScorer",
    "BilinearLabelScorer",
    "Dropout",
    "FeedForward",
    "GLUConv",
    "ResidualNorm",
    "SelfAttention",
    "TimingSignal",
    "bio_start_mask",
    "bio_transition_mask",
    "start_log_probs",
    "transition_log_probs",
    "viterbi_decode",
]
