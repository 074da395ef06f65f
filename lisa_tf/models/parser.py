"""The Dozat & Manning biaffine dependency parser: the "+D&M" parse LISA takes at test time.

One example per sentence (layout ``"sentence"``), the project's preprocessor for the words:

* **Input** (D&M §3.2): word embeddings (GloVe rows when the run has them), with whole-word dropout
  (and, with ``model.word_dropout``, word ids replaced by ``<unk>`` in training,
  :mod:`lisa_tf.layers.word_dropout`, which D&M's zeroed vectors do not do: it trains the ``<unk>`` row);
  optionally the sum with a character CNN over each word's UTF-8 code points (``char_embedding_size``;
  the paper's word-only model has none, its CoNLL 2017 successor reads characters), which gives
  out-of-vocabulary words a representation. With ``model.contextual`` (e.g. ``"minilm"``), the scalar
  mix of a frozen encoder's layers (:mod:`lisa_tf.models.contextual`, the features cached for training
  like the SRL models') is concatenated to (``contextual_mode = "concat"``) or replaces the word
  vectors, as Che et al. (2018) gave this parser ELMo vectors in the CoNLL 2018 shared task.
* **Encoder**: a BiLSTM, ``lstm_layers`` × ``lstm_size`` units per direction (paper: 3 × 400), with
  dropout between layers; or (``parser_encoder = "attention"``) the project's self-attention backbone.
* **Arcs** (§2.2, Eqns 2-3): :class:`~lisa_tf.layers.biaffine.BiaffineArcScorer` — dependent and head
  MLPs (``parse_mlp_size``, paper 500), ``S[d, h] = Q_d U K_hᵀ + K_h · u``. The root is a token's own
  column (LISA's self-loop convention, :mod:`lisa_tf.decoding.head_indices`): ``S[d, d]`` scores ``d``
  attaching to the root.
* **Labels** (§2.3, Eqn 4 "bilinear classifier"): :class:`~lisa_tf.layers.biaffine.BilinearLabelScorer`
  on dependent and head MLPs (``dep_label_mlp_size``, paper 100) for the gold head in training and the
  decoded head at test time.
* **POS** (joint tagging): linear classifiers on the encoder output predict the data's POS column
  (for English EWT the XPOS/PTB tags that LISA also reads) and, when the data has it, the UPOS
  column, trained with the parse.
* **Loss**: arc + label + POS (+ UPOS) softmax cross-entropies, each averaged over the real tokens.

Decoding (:mod:`lisa_tf.labelling.parse`) uses :func:`lisa_tf.decoding.mst.decode_tree` (Chu-Liu-Edmonds, NumPy)
on the arc log-probabilities, so every output is a tree with exactly one root and no cycle; the
SavedModel export (:mod:`export.saved_model`) decodes in-graph with Eisner's projective algorithm
(:meth:`DependencyParser.decode_scores` with ``tree=True``). Each token's label is the best label for
its chosen head.

References:
    Dozat & Manning 2017, "Deep Biaffine Attention for Neural Dependency Parsing", ICLR, §2-3.
    Strubell et al. 2018 (LISA), §3 "+D&M": this parser's heads are injected at test time.
    Dozat, Qi & Manning 2017, "Stanford's Graph-based Neural Dependency Parser at the CoNLL 2017
    Shared Task" (characters, UPOS and XPOS taggers).
    Che et al. 2018, "Towards Better UD Parsing: Deep Contextualized Word Embeddings, Ensemble, and
    Treebank Concatenation", CoNLL 2018 shared task (the biaffine parser with ELMo).
"""

from __future__ import annotations

import keras
import tensorflow as tf

from lisa_tf.decoding.eisner import eisner_heads
from lisa_tf.layers.biaffine import BiaffineArcScorer, BilinearLabelScorer
from lisa_tf.layers.scalar_mix import ScalarMix
from lisa_tf.layers.word_dropout import WordDropout
from lisa_tf.models.backbone import backbone_from_config
from lisa_tf.models.base import SrlModel
from lisa_tf.models.contextual import ContextualWordFeatures, mixed_word_vectors
from lisa_tf.models.losses import masked_cross_entropy, per_replica

#: Code points are hashed into this many character ids (0 = padding).
CHAR_BUCKETS = 1024
#: Characters read per word (longer words are cut).
MAX_WORD_CHARS = 24


@keras.saving.register_keras_serializable(package="lisa_tf")
class CharacterCNN(keras.layers.Layer):
    """Word vectors from the word's characters: code-point embeddings, a width-3 convolution, max over
    the characters, then a projection to ``output_dim``.

    Args:
        filters: convolution width (the model's ``char_embedding_size``).
        output_dim: width of the returned vectors (the word embedding width).
        char_dim: character embedding width.

    Call arguments:
        tokens: string ``[B, T]`` (padding ``""``).

    Returns:
        ``[B, T, output_dim]``; zero for padding tokens.
    """

    def __init__(self, filters: int, output_dim: int, char_dim: int = 32, **kwargs):
        super().__init__(**kwargs)
        self.filters = filters
        self.output_dim = output_dim
        self.char_dim = char_dim
        self.embedding = keras.layers.Embedding(CHAR_BUCKETS, char_dim, name="char_embedding")
        self.conv = keras.layers.Conv1D(filters, 3, padding="same", activation="relu", name="char_conv")
        self.project = keras.layers.Dense(output_dim, use_bias=False, name="char_projection")

    def build(self, input_shape):
        self.embedding.build((None, None))
        self.conv.build((None, None, self.char_dim))
        self.project.build((None, None, self.filters))
        self.built = True

    def call(self, tokens):
        codes = tf.strings.unicode_decode(tokens, "UTF-8", errors="replace")  # ragged [B, T, None]
        # Cut after densifying: slicing the ragged tensor adds an assertion that the graph optimiser
        # reports on every traced call.
        codes = codes.to_tensor(default_value=-1)[:, :, :MAX_WORD_CHARS]  # [B, T, C]
        ids = tf.where(codes < 0, 0, tf.math.floormod(codes, CHAR_BUCKETS - 1) + 1)
        shape = tf.shape(ids)
        flat = tf.reshape(ids, [-1, shape[2]])
        mask = tf.not_equal(flat, 0)
        # Padding characters enter the convolution as zeros, the same as its own "same" padding: a
        # word's vector does not depend on the longest word of the batch it is in.
        x = self.conv(tf.where(mask[:, :, None], self.embedding(flat), 0.0))
        x = tf.where(mask[:, :, None], x, tf.zeros_like(x))  # relu ≥ 0: padding never wins the max
        x = tf.reduce_max(x, axis=1)
        x = tf.reshape(x, [shape[0], shape[1], self.filters])
        return self.project(x)

    def get_config(self):
        config = super().get_config()
        config.update(filters=self.filters, output_dim=self.output_dim, char_dim=self.char_dim)
        return config


@keras.saving.register_keras_serializable(package="lisa_tf")
class DependencyParser(SrlModel):
    """Dozat & Manning's biaffine parser with joint POS tagging. See the module docstring.

    Args:
        config: :class:`lisa_tf.config.ModelConfig` (``parser_encoder``, ``lstm_layers``,
            ``lstm_size``, ``char_embedding_size``, ``parser_dropout``, ``word_dropout``, ``embedding_size``,
            ``parse_mlp_size``, ``dep_label_mlp_size``; with the attention encoder the backbone's
            sizes).
        words, srl_labels, joint_labels: see :class:`~lisa_tf.models.base.SrlModel` (the SRL ones
            are unused).
        pos_labels: POS tags in id order (may be empty: no tagger then).
        dep_labels: dependency labels in id order (may be empty: unlabelled parsing).
        upos_labels: universal POS tags in id order (may be empty: no UPOS tagger then).
        embedding_matrix: initial word embedding rows (GloVe), or None.

    Call arguments:
        features: the preprocessor's features (``tokens``, ``word_ids``, ``token_mask``; ``heads`` in
            training; ``contextual_features`` from the feature cache, if any).
        training: bool. Dropout, and the label scorer reads the gold heads.

    Returns:
        dict of float32 logits: ``arc_logits`` [B, T (dependent), T (head)], ``label_logits``
        [B, T, T, labels] (every head) when there are labels, ``pos_logits`` [B, T, tags] and
        ``upos_logits`` [B, T, upos tags] when there are such tags.

    Example:
    ```python
    config = ModelConfig(kind="parser", embedding_size=16, lstm_layers=1, lstm_size=16,
                         parse_mlp_size=16, dep_label_mlp_size=8)
    parser = DependencyParser(config, ["", "<unk>", "dogs", "bark"], ["O"],
                              pos_labels=["NNS", "VBP"], dep_labels=["nsubj", "root"])
    features = parser.preprocessor({"tokens": tf.ragged.constant([["Dogs", "bark"]])})
    parser.decode_scores(parser.predict_scores(features), features)["heads"]  # [[1, 1]]: self-loop root
    ```
    """

    layout = "sentence"

    def __init__(self, config, words, srl_labels=("O",), joint_labels=(), pos_labels=(), dep_labels=(),
                 embedding_matrix=None, **kwargs):
        super().__init__(config, words, srl_labels, joint_labels, pos_labels, dep_labels, **kwargs)
        config = self.config
        dropout = config.parser_dropout
        self.contextual_encoder = self.contextual_mix = None  # the attention encoder's backbone holds its own
        if config.parser_encoder == "attention":
            self.backbone = backbone_from_config(
                config, len(self.words), embedding_matrix, sublayer="ffn", order="attention_first",
                predicate_indicator=False,
            )
            self.word_embedding = self.characters = self.lstms = self.unknown_words = None
        else:
            self.backbone = None
            width = embedding_matrix.shape[1] if embedding_matrix is not None else config.embedding_size
            if config.contextual:
                self.contextual_encoder = ContextualWordFeatures(
                    config.contextual, pooling=config.contextual_pooling, trainable=config.contextual_trainable,
                    dropout=config.contextual_dropout if config.contextual_trainable else None,
                    train_embeddings=config.contextual_train_embeddings, name="contextual_encoder")
                self.contextual_mix = ScalarMix(self.contextual_encoder.num_layers, name="contextual_mix")
            self.word_embedding = None
            if not config.contextual or config.contextual_mode == "concat":
                self.word_embedding = keras.layers.Embedding(
                    len(self.words), width,
                    embeddings_initializer=(keras.initializers.Constant(embedding_matrix)
                                            if embedding_matrix is not None else "glorot_uniform"),
                    name="word_embedding",
                )
            self.characters = (CharacterCNN(config.char_embedding_size, width, name="characters")
                               if config.char_embedding_size > 0 and self.word_embedding is not None else None)
            # Whole-word dropout (D&M §3.2 drop embeddings of whole words).
            self.embedding_dropout = keras.layers.Dropout(dropout, noise_shape=(None, None, 1), name="word_dropout")
            self.lstms = [
                keras.layers.Bidirectional(
                    keras.layers.LSTM(config.lstm_size, return_sequences=True), merge_mode="concat", name=f"bilstm_{i}"
                )
                for i in range(config.lstm_layers)
            ]
            self.lstm_dropout = keras.layers.Dropout(dropout, name="lstm_dropout")
            # <unk> for real words in training (model.word_dropout); no such layer at the default rate 0.
            self.unknown_words = (WordDropout(config.word_dropout, name="unknown_words")
                                  if config.word_dropout > 0 and self.word_embedding is not None else None)
        self.arc_scorer = BiaffineArcScorer(config.parse_mlp_size, dropout=dropout, name="arcs")
        self.label_scorer = (
            BilinearLabelScorer(len(self.dep_labels), mlp_dim=config.dep_label_mlp_size, dropout=dropout,
                                all_pairs=True, name="labels")
            if self.dep_labels else None
        )
        self.tagger = keras.layers.Dense(len(self.pos_labels), dtype="float32", name="pos") if self.pos_labels else None
        self.upos_tagger = (keras.layers.Dense(len(self.upos_labels), dtype="float32", name="upos")
                            if self.upos_labels else None)

    # ------------------------------------------------------------------------------------- model
    def encode(self, features, training=False):
        """Token representations ``[B, T, d]``."""
        mask = tf.cast(features["token_mask"], tf.bool)
        if self.backbone is not None:
            return self.backbone(features["word_ids"], padding_mask=mask, training=training,
                                 **self.backbone.contextual_inputs(features))["sequence_output"]
        parts = []
        if self.word_embedding is not None:
            ids = features["word_ids"]
            if self.unknown_words is not None:
                ids = self.unknown_words(ids, training=training)
            x = self.word_embedding(ids)
            if self.characters is not None:
                x = x + tf.cast(self.characters(features["tokens"]), x.dtype)
            parts.append(self.embedding_dropout(x, training=training))
        if self.contextual_encoder is not None:
            mixed = mixed_word_vectors(self.contextual_encoder, self.contextual_mix, features["word_ids"],
                                       features["tokens"], features.get("contextual_features"), training)
            parts.append(tf.cast(mixed, parts[0].dtype if parts else self.compute_dtype))
        x = tf.concat(parts, axis=-1) if len(parts) > 1 else parts[0]
        for lstm in self.lstms:
            x = self.lstm_dropout(lstm(x, mask=mask, training=training), training=training)
        return x

    def call(self, features, training=False):
        mask = tf.cast(features["token_mask"], tf.bool)
        x = self.encode(features, training=training)
        outputs = {"arc_logits": self.arc_scorer(x, mask=mask, training=training)}
        if self.label_scorer is not None:
            outputs["label_logits"] = self.label_scorer(x, x, training=training)  # [B, dependent, head, labels]
        if self.tagger is not None:
            outputs["pos_logits"] = self.tagger(x)
        if self.upos_tagger is not None:
            outputs["upos_logits"] = self.upos_tagger(x)
        return outputs

    def compute_loss(self, x=None, y=None, y_pred=None, sample_weight=None, training=True):
        mask = tf.cast(x["token_mask"], tf.bool)
        heads = tf.cast(x["heads"], tf.int32)
        loss = masked_cross_entropy(heads, y_pred["arc_logits"], mask)
        if "label_logits" in y_pred and "dep_label_ids" in x:
            gold_head_labels = tf.gather(y_pred["label_logits"], heads, axis=2, batch_dims=2)  # [B, T, labels]
            loss += masked_cross_entropy(x["dep_label_ids"], gold_head_labels, mask)
        if "pos_logits" in y_pred and "pos_ids" in x:
            loss += masked_cross_entropy(x["pos_ids"], y_pred["pos_logits"], mask)
        if "upos_logits" in y_pred and "upos_ids" in x:
            loss += masked_cross_entropy(x["upos_ids"], y_pred["upos_logits"], mask)
        return per_replica(loss)

    # -------------------------------------------------------------------------------- prediction
    def predict_scores(self, features, **options):
        """float32: ``arc_log_probs`` [B, T, T] (log P(head(d) = h), the diagonal = root),
        ``label_ids`` int32 [B, T, T] (the best label of every (dependent, head) pair) and
        ``pos_probs`` [B, T, tags] and ``upos_probs`` [B, T, upos tags] when the model has them."""
        if options:
            raise TypeError(f"unexpected prediction options {sorted(options)}; a parser takes none")
        out = self(features, training=False)
        scores = {"arc_log_probs": tf.nn.log_softmax(out["arc_logits"], axis=-1)}
        if "label_logits" in out:
            scores["label_ids"] = tf.argmax(out["label_logits"], axis=-1, output_type=tf.int32)
        for name in ("pos", "upos"):
            if f"{name}_logits" in out:
                scores[f"{name}_probs"] = tf.nn.softmax(out[f"{name}_logits"], axis=-1)
        return scores

    def decode_scores(self, scores, features, tree: bool = False):
        """Ids in-graph: ``heads`` [B, T] (self-loop convention), ``dep_labels`` (the best label for
        the chosen head), ``pos`` and ``upos`` [B, T] (those the model has).

        ``tree=False``: each token's best head (:mod:`lisa_tf.labelling.parse` replaces them with the maximum
        spanning tree); ``tree=True``: the best projective tree with one root dependent
        (:func:`lisa_tf.decoding.eisner.eisner_heads`, in-graph, as the SavedModel export decodes).
        """
        if tree:
            heads = eisner_heads(scores["arc_log_probs"], features["length"])
        else:
            heads = tf.argmax(scores["arc_log_probs"], axis=-1, output_type=tf.int32)
        out = {"heads": heads}
        if "label_ids" in scores:
            out["dep_labels"] = tf.gather(scores["label_ids"], heads, axis=2, batch_dims=2)
        for name in ("pos", "upos"):
            if f"{name}_probs" in scores:
                out[name] = tf.argmax(scores[f"{name}_probs"], axis=-1, output_type=tf.int32)
        return out
