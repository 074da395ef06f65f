"""The word pieces a contextual encoder makes of sentences, counted where the encoder is not.

A contextual encoder (:class:`~lisa_tf.models.contextual.ContextualWordFeatures`) cuts each word into
word pieces (keras-hub's ``BertTokenizer``: TF Text's WordPiece ops) and encodes each sentence as
``[CLS]`` + its words' pieces + ``[SEP]``, at most ``max_pieces`` of them. Its cost grows with the
sentences times the widest sentence's pieces (and attention with that width squared), not with the
words: 52 sentences of 48 words of ``"x." * 70`` are 52 full 512-piece windows (90 s and +1.8 GB in the
server), while 52 sentences of 48 ordinary words are ~60 pieces each. The server therefore counts a
request's pieces before the model runs (``--max_word_pieces_per_request``,
:mod:`export.request_limits`) with :class:`WordPieceCounter`, built from the settings the export
writes beside the model (``assets/word_pieces.json``); training batches by the same count
(:meth:`ContextualWordFeatures.piece_lengths`). Both count with :func:`sentence_piece_lengths`, on the
pieces of :func:`word_piece_tokenizer` after :func:`cut_words`, as the encoder makes them in-graph.

This module imports TensorFlow and keras-hub only when pieces are made with a tokenizer of its own: a
server of a model without an encoder, or of an export that carries its encoder's function of words to
pieces (:func:`export.saved_model.export_model`), never loads keras-hub.
"""

from __future__ import annotations

import json
import os
import pathlib
from typing import Sequence

import numpy as np

from data_pipeline.errors import DataFormatError
from data_pipeline.input_limits import MAX_WORD_CHARACTERS

#: The export's record of its encoder's word-piece settings (in ``assets/``).
SETTINGS_FILE = "word_pieces.json"
#: The SavedModel function of words to word pieces a server's export of a model with an encoder carries
#: beside its signatures (:func:`export.saved_model.export_model`), which the server's counter cuts with.
PIECE_FUNCTION = "word_pieces_of"


def word_piece_tokenizer(vocabulary: Sequence[str], lowercase: bool, **kwargs):
    """keras-hub's BERT word-piece tokenizer of ``vocabulary``; an uncased vocabulary has no accented
    letters, so they are stripped as Hugging Face's BERT tokenizer does ("café" → "cafe"). The
    vocabulary is given as a list: keras-hub's from_preset passes the file's path, which keras.saving's
    safe mode refuses when a saved model is loaded."""
    import keras_hub  # only where an encoder's pieces are made

    return keras_hub.models.BertTokenizer(vocabulary=list(vocabulary), lowercase=lowercase, strip_accents=lowercase,
                                          **kwargs)


def cut_words(words, max_word_characters: int):
    """``words`` (string ``[N]``) cut to their first ``max_word_characters`` characters: a cut that
    takes whole UTF-8 characters and leaves invalid bytes as they were."""
    import tensorflow as tf

    return tf.strings.substr(words, 0, max_word_characters, unit="UTF8_CHAR")


def sentence_piece_lengths(tokenize, sentences: Sequence[Sequence[str]], max_pieces: int) -> list[int]:
    """The encoder's input length for each sentence (a list of words): ``[CLS]``, each word's pieces (at
    least one: a word of only dropped characters is one ``[UNK]``), ``[SEP]``, at most ``max_pieces``.

    Args:
        tokenize: string ``[N]`` → ragged ``[N, None]`` pieces (words already cut or not: it cuts).
        sentences: lists of words.
        max_pieces: the encoder's window.
    """
    import tensorflow as tf

    words = [word for sentence in sentences for word in sentence]
    if not words:
        return [2 for _ in sentences]
    counts = tf.maximum(tokenize(tf.constant(words)).row_lengths(), 1).numpy()
    ends = np.cumsum([len(sentence) for sentence in sentences])
    sums = np.concatenate([[0], np.cumsum(counts)])
    starts = np.concatenate([[0], ends[:-1]])
    return [int(min(sums[end] - sums[start] + 2, max_pieces)) for start, end in zip(starts, ends)]


class WordPieceCounter:
    """Counts the pieces an encoder with these settings makes of sentences (see the module docstring).

    Args:
        vocabulary: the word pieces in id order.
        lowercase: whether the tokenizer lower-cases and strips accents.
        max_word_characters: the most characters of a word cut into pieces.
        max_pieces: the encoder's window, ``[CLS]`` and ``[SEP]`` included.
        tokenize: the encoder's own function of string ``[N]`` words to their ragged ``[N, None]`` pieces
            (cut to ``max_word_characters`` first), e.g. the one an export carries (:data:`PIECE_FUNCTION`,
            restored with it); by default one is made with keras-hub's tokenizer of these settings.

    Example:
    ```python
    counter = WordPieceCounter.read("exports/srl/1/assets/word_pieces.json")
    counter.sentence_lengths([["The", "cat", "sat", "."]])   # [6]
    ```
    """

    def __init__(self, vocabulary: Sequence[str], lowercase: bool, max_word_characters: int = MAX_WORD_CHARACTERS,
                 max_pieces: int = 512, tokenize=None):
        self.vocabulary = list(vocabulary)
        self.lowercase = bool(lowercase)
        self.max_word_characters = int(max_word_characters)
        self.max_pieces = int(max_pieces)
        self._tokenize = tokenize or self._traced_tokenizer()

    def _traced_tokenizer(self):
        """keras-hub's tokenizer of these settings, as a traced function of ``[N]`` words."""
        import tensorflow as tf

        tokenizer = word_piece_tokenizer(self.vocabulary, self.lowercase)
        return tf.function(lambda words: tokenizer.tokenize(cut_words(words, self.max_word_characters)),
                           input_signature=[tf.TensorSpec([None], tf.string)], autograph=False)

    def sentence_lengths(self, sentences: Sequence[Sequence[str]]) -> list[int]:
        """:func:`sentence_piece_lengths` of ``sentences`` for this encoder."""
        return sentence_piece_lengths(self._tokenize, sentences, self.max_pieces)

    def settings(self) -> dict:
        """What :meth:`read` makes the counter again from."""
        return {"vocabulary": self.vocabulary, "lowercase": self.lowercase,
                "max_word_characters": self.max_word_characters, "max_pieces": self.max_pieces}

    @staticmethod
    def write(settings: dict, path: str | os.PathLike) -> None:
        """Write an encoder's ``settings`` (:meth:`settings`' keys) as JSON to ``path``."""
        pathlib.Path(path).write_text(json.dumps(settings, ensure_ascii=False) + "\n", encoding="utf-8")

    @classmethod
    def read(cls, path: str | os.PathLike, tokenize=None) -> "WordPieceCounter":
        """The counter of the settings in ``path`` (``tokenize``: as the constructor's).

        Raises:
            DataFormatError: the file is not such settings (names the file and what was expected).
        """
        expected = ("expected a JSON object of vocabulary (a list of strings), lowercase (true or false), "
                    "max_word_characters and max_pieces (positive whole numbers)")
        try:
            settings = json.loads(pathlib.Path(path).read_text(encoding="utf-8"))
        except (OSError, UnicodeDecodeError, ValueError, RecursionError) as error:
            raise DataFormatError(path, None, f"{expected} ({str(error)[:80]})") from None
        fine = (isinstance(settings, dict) and set(settings) == {"vocabulary", "lowercase", "max_word_characters",
                                                                  "max_pieces"}
                and isinstance(settings["vocabulary"], list) and all(isinstance(v, str) for v in settings["vocabulary"])
                and isinstance(settings["lowercase"], bool)
                and all(isinstance(settings[k], int) and not isinstance(settings[k], bool) and settings[k] > 0
                        for k in ("max_word_characters", "max_pieces")))
        if not fine or "[CLS]" not in settings["vocabulary"]:
            raise DataFormatError(path, None, expected + ", with [CLS] among the pieces")
        return cls(**settings, tokenize=tokenize)


__all__ = ["PIECE_FUNCTION", "SETTINGS_FILE", "WordPieceCounter", "cut_words", "sentence_piece_lengths",
           "word_piece_tokenizer"]
