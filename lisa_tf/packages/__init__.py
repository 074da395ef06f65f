"""Packaged models (``models/NAME``): finding them, their files, and writing them with their model cards.

The modules sit on different floors of the library (the layers of ``pyproject.toml``):

- :mod:`~lisa_tf.packages.finding` (low: below everything that loads or builds a model): where the
  shipped models are, the files of a package, and what a model argument names (a path or a name).
- :mod:`~lisa_tf.packages.export_cache`: the names, locks and clean-up of the cache of SavedModel
  exports built from packages and runs (building one is :mod:`export.cache_build`'s).
- :mod:`~lisa_tf.packages.storage_precision`: 16-bit storage of a ``.keras`` file's weights.
- :mod:`~lisa_tf.packages.model_card` (high): ``MODEL_CARD.md`` rendered from a package's ``card.json``.
- :mod:`~lisa_tf.packages.writing` (high: above evaluation and training): ``package-model``, a run
  packaged with its card, whose figures the evaluation computes.

This package's ``__init__`` imports none of them.
"""
