"""From model scores to structures: constrained BIO Viterbi, dependency trees and the dependency-head conventions.

- :mod:`~lisa_tf.decoding.viterbi`: constrained BIO Viterbi in core TF ops and transition statistics.
- :mod:`~lisa_tf.decoding.mst`: the maximum spanning tree of a parser's scores (Chu-Liu-Edmonds, NumPy).
- :mod:`~lisa_tf.decoding.eisner`: the best projective tree in core TF ops (Eisner), for exports.
- :mod:`~lisa_tf.decoding.head_indices`: CoNLL-U heads (1-based, 0 = root) ↔ the self-loop heads of
  LISA's syntax head (0-based, the root points to itself).
- :mod:`~lisa_tf.decoding.sense_choice`: a predicate's roleset, chosen among those its word may have.
- :mod:`~lisa_tf.decoding.frame_meanings`: what a chosen roleset and its roles mean (the frame index).
- :mod:`~lisa_tf.decoding.own_frames`: a user's own frame index merged over a trained model's lexicon.
"""
