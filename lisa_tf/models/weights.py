"""Weight files of a model, without the frozen pretrained encoder a model may hold.

A model with contextual word vectors (``model.contextual``, :mod:`lisa_tf.models.contextual`) holds a
frozen keras-hub encoder that is loaded from its package whenever the model is built, and never
changes in training. Writing its 22.7 M parameters (MiniLM) into every weight file a run keeps — the
interval checkpoints, the per-evaluation weights, ``best`` and ``final`` — made the 2,000-step LISA +
MiniLM run of ``configs/open`` 1.2 GB (an interval checkpoint: 136.5 MB); without it the SA + MiniLM
run is 427 MB (a checkpoint: 42.6 MB). The ``*.weights.h5`` files this module writes skip the encoder
(Keras' ``objects_to_skip``), and it loads them skipping it too, so a file written with the encoder
(by an older run) loads the same. A ``.keras`` model file (:func:`lisa_tf.models.runs.save_model`) and a
SavedModel export still hold every weight: they are what a model is handed on as.

Which encoder a run was trained with is fixed by the run's config and the encoder package pinned by
hash in ``requirements-contextual.txt`` (the feature cache keys on the files' content hash as well).
"""

from __future__ import annotations

import os

import keras
# ``Model.save_weights`` takes no ``objects_to_skip`` (``load_weights`` does): the saving function
# behind it does, in Keras' saving library (keras 3.15.1 is pinned in requirements.txt).
from keras.src.saving import saving_lib

from lisa_tf.models.contextual import encoders_in


def frozen_parts(model: keras.Model) -> list:
    """The frozen pretrained encoders inside ``model`` (none for a model without contextual vectors, or
    whose encoder is fine-tuned: its weights are the model's own)."""
    return [layer for layer in encoders_in(model) if not layer.trainable]


def fine_tuned_parts(model: keras.Model) -> list:
    """The contextual encoders inside ``model`` that train with it (``model.contextual_trainable``)."""
    return [layer for layer in encoders_in(model) if layer.trainable]


def save_weights(model: keras.Model, path: str | os.PathLike) -> None:
    """``model.save_weights(path)`` (a ``.weights.h5`` file, optimiser state included when the model
    has one) without the frozen encoder."""
    saving_lib.save_weights_only(model, str(path), objects_to_skip=frozen_parts(model) or None)


def load_weights(model: keras.Model, path: str | os.PathLike) -> None:
    """``model.load_weights(path)`` of a file :func:`save_weights` wrote (or ``model.save_weights``:
    the encoder's entries are skipped either way; the model keeps the encoder it was built with)."""
    model.load_weights(path, objects_to_skip=frozen_parts(model) or None)
