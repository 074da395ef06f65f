"""DeepAtt: deep self-attention SRL (Tan et al. 2018).

One example per (sentence, predicate). The encoder is the shared
:class:`~lisa_tf.models.backbone.SrlBackbone` in DeepAtt's form: word embedding ⊕ predicate-mask
embedding (projected to d when their widths do not add up to d), scaled by √d (the authors' code, for
embeddings initialised N(0, d^-1/2); ``model.scale_embeddings = false`` for GloVe rows, whose scale is
already fixed), plus a bias, plus the sinusoidal timing signal (§3 "Position Encoding", Vaswani et al. 2017). Then N
layers, each a non-linear sub-layer followed by a self-attention sub-layer, every sub-layer wrapped
as ``LN(x + dropout(f(x)))`` (§3 "Deep Topology", Eqn 10). The non-linear sub-layer is an FFN ``ReLU(xW1)W2``, a
BiLSTM (directions summed) or a GLU convolution of width 3 (§3 "Nonlinear Sub-Layers"). The head is a softmax over BIO
tags (§3 "Pipeline"), trained with label-smoothed cross-entropy (§4 "Model Setup"). Decoding: argmax with the B's-label
rule for invalid BIO, or constrained Viterbi (§4 "Constrained Decoding").
"""

from __future__ import annotations

import keras
import tensorflow as tf

from lisa_tf.models.backbone import backbone_from_config
from lisa_tf.models.base import SrlModel
from lisa_tf.models.losses import masked_cross_entropy, per_replica


@keras.saving.register_keras_serializable(package="lisa_tf")
class DeepAtt(SrlModel):
    """DeepAtt SRL model (Tan et al. 2018). See the module docstring.

    Args:
        config, words, srl_labels, …: see :class:`~lisa_tf.models.base.SrlModel`.

    Call arguments:
        features: the predicate-layout features of the preprocessor (``word_ids``,
            ``predicate_indicator``, ``token_mask``; ``srl_tag_ids`` for the loss).

    Returns:
        ``{"srl_logits": [B, T, labels]}`` (float32), in training also the predicate identifier's
        ``joint_logits`` [B, T, J] (when the model has one).

    References:
        Tan et al. 2018, "Deep Semantic Role Labeling with Self-Attention", AAAI, §3-4.
    """

    layout = "predicate"

    def __init__(self, config, words, srl_labels, *args, embedding_matrix=None, **kwargs):
        super().__init__(config, words, srl_labels, *args, **kwargs)
        # §3: the non-linear sub-layer (FFN, BiLSTM or GLU-CNN) first, then attention.
        self.backbone = backbone_from_config(
            self.config, len(self.words), embedding_matrix, sublayer=self.config.sublayer, order="sublayer_first"
        )
        self.classifier = keras.layers.Dense(len(self.srl_labels), dtype="float32", name="srl_softmax")
        # Finds predicates when none are given (lisa_tf.models.predicate_identifier); not in the paper.
        self.predicate_identifier = self.make_predicate_identifier(embedding_matrix)
        self.predicts_predicates = self.predicate_identifier is not None

    def call(self, features, training=False):
        encoded = self.backbone(
            features["word_ids"], features["predicate_indicator"], padding_mask=features["token_mask"], training=training,
            **self.backbone.contextual_inputs(features),
        )
        sequence = encoded["sequence_output"]
        outputs = {"srl_logits": self.classifier(sequence)}
        if self.sense_head is not None:
            position = tf.cast(features["predicate_position"], tf.int32)
            self.with_sense_logits(outputs, tf.gather(sequence, position, batch_dims=1))  # [B, senses]
        if training and self.predicate_identifier is not None:
            outputs["joint_logits"] = self.predicate_identifier(
                features["word_ids"], padding_mask=features["token_mask"], training=training
            )
        return outputs

    def compute_loss(self, x=None, y=None, y_pred=None, sample_weight=None, training=True):
        loss = masked_cross_entropy(
            x["srl_tag_ids"], y_pred["srl_logits"], x["token_mask"], self.config.label_smoothing
        )
        loss += self.sense_loss(x, y_pred, tf.ones_like(x["predicate_position"], tf.bool))
        return per_replica(loss + self.predicate_identifier_loss(x, y_pred))

    def predict_scores(self, features, **options):
        out = self(features, training=False)
        return self.with_sense_scores({"srl_probs": tf.nn.softmax(out["srl_logits"])}, out)

    def decode_scores(self, scores, features, constraints: bool = True):
        return self.decode_predicate_rows(scores, features, constraints)
