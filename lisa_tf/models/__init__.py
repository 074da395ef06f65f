"""The project's models: preprocessor, backbone and one task per paper, and the one function
that builds the task a config names. Importing this package registers every model and layer with
``keras.saving`` (package ``lisa_tf``), so ``keras.saving.load_model("x.keras")`` works after
``import lisa_tf``.

Beside them, imported on use: :mod:`~lisa_tf.models.losses` (the masked losses the tasks train with),
:mod:`~lisa_tf.models.weights` (weight files without a frozen pretrained encoder) and
:mod:`~lisa_tf.models.runs` (a run directory, and saving and loading a ``.keras`` model file).
"""

from __future__ import annotations

from typing import Optional

import numpy as np

from data_pipeline.vocab import Vocabularies

from lisa_tf.config import ModelConfig
from lisa_tf.models.backbone import SrlBackbone
from lisa_tf.models.base import SrlModel
from lisa_tf.models.deepatt import DeepAtt
from lisa_tf.models.lisa import Lisa
from lisa_tf.models.parser import DependencyParser
from lisa_tf.models.predicate_identifier import PredicateIdentifier
from lisa_tf.models.preprocessor import SrlPreprocessor
from lisa_tf.models.selective import SelectiveSRL
from lisa_tf.models.sense_head import SenseHead

#: ``model.kind`` → task class.
TASKS = {"deepatt": DeepAtt, "lisa": Lisa, "sa": Lisa, "selective": SelectiveSRL, "parser": DependencyParser}

__all__ = ["TASKS", "DeepAtt", "DependencyParser", "Lisa", "PredicateIdentifier", "SelectiveSRL", "SenseHead", "SrlBackbone", "SrlModel", "SrlPreprocessor", "build_model"]


def build_model(config: ModelConfig, vocabs: Vocabularies, embedding_matrix: Optional[np.ndarray] = None,
                sense_lexicon: Optional[dict] = None) -> SrlModel:
    """The task named by ``config.kind``, sized for ``vocabs``; ``sense_lexicon``: the word-form lexicon
    of the sense head (:func:`lisa_tf.decoding.sense_choice.build_lexicon`), for the SRL models."""
    if config.kind not in TASKS:
        raise ValueError(f"model kind {config.kind!r} is not available; expected one of {sorted(TASKS)}")
    return TASKS[config.kind](
        config,
        vocabs.words.entries,
        vocabs.srl.entries,
        vocabs.joint_pos_predicate.entries,
        vocabs.pos.entries,
        vocabs.dep_labels.entries,
        upos_labels=vocabs.upos.entries,
        sense_labels=vocabs.senses.entries,
        **({"sense_lexicon": sense_lexicon} if sense_lexicon is not None else {}),
        embedding_matrix=embedding_matrix,
        name=config.kind,
    )
