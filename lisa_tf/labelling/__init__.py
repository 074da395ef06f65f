"""Labelling: from a trained model (or its export) and text to labelled frames and parses.

- :mod:`~lisa_tf.labelling.predictor`: raw text or tokens in, frames out (``lisa_tf.load(...).predict``).
- :mod:`~lisa_tf.labelling.batches`: batches of :class:`~data_pipeline.sentence.Sentence` objects labelled
  by one model or an ensemble (scores, decoding, spans).
- :mod:`~lisa_tf.labelling.parse`: a dependency parser's trees, and CoNLL-U.
- :mod:`~lisa_tf.labelling.compiled`: the compiled ``tf.function`` each model labels with.
- :mod:`~lisa_tf.labelling.corpus`: a corpus labelled with Apache Beam (``label-corpus``).
"""
