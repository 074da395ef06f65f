"""The project's SRL models and the one function that picks among them."""

from __future__ import annotations

from typing import Optional

import numpy as np

from data_pipeline.vocab import Vocabularies

from lisa_tf.config import ModelConfig


def build_model(config: ModelConfig, vocabs: Vocabularies, embedding_matrix: Optional[np.ndarray] = None):
    """The model named by ``config.kind``, sized for ``vocabs``."""
    if config.kind == "deepatt":
        from lisa_tf.models.deepatt import DeepAtt

        return DeepAtt(config, len(vocabs.words), vocabs.srl.entries, embedding_matrix, name="deepatt")
    if config.kind in ("lisa", "sa"):
        from lisa_tf.models.lisa import Lisa

        return Lisa(
            config,
            len(vocabs.words),
            vocabs.srl.entries,
            vocabs.joint_pos_predicate.entries,
            vocabs.pos.entries,
            vocabs.dep_labels.entries,
            embedding_matrix,
            name=config.kind,
        )
    if config.kind == "selective":
        from lisa_tf.models.selective import SelectiveSRL

        return SelectiveSRL(config, len(vocabs.words), vocabs.srl.entries, embedding_matrix, name="selective")
    raise ValueError(f"model kind {config.kind!r} is not available; expected deepatt, lisa, sa or selective")
