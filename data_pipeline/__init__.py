"""Data side of lisa_tf: readers, span conversion, head rules, vocabularies, tf.data.

Nothing in this package imports :mod:`lisa_tf`: files become :class:`Sentence` objects here and
the models never see a file.
"""
