"""Request limits and input checks run in Python before a request reaches TensorFlow.

A request's cost grows with its sentences' lengths (attention and the biaffine scorers hold
``[T, T, ...]`` tensors) and with the predicates the model finds in them (``[B, P, T]`` outputs), so
the server refuses, with a 400 naming the limit, requests whose sentences, padded batch or token
pairs exceed what the model is served for (:class:`RequestLimits`). Each limit is checked before the
cost it bounds is paid: a REST body's JSON values are counted on its bytes before it is parsed
(:func:`check_json_values`), and a request's shapes (as parsed, or as a gRPC ``TensorProto``
declares them) are checked before any value is converted (:func:`check_shapes`). The inputs
the project's exports take by name are checked against the sentences they belong to, so a bad value
is a 400 naming the field, the instance and the token instead of a silently shifted answer or a graph
error:

- ``tokens`` (string ``[batch, time]``): a sentence is its tokens up to the last non-empty one; ``""``
  only pads at the end, an empty token before a non-empty one is refused;
- ``parse_heads`` (integer ``[batch, time]``): CoNLL-U heads, ``0..length`` (0 = root) on every token
  of the sentence, ``-1`` on padding only;
- ``predicate_index`` (integer ``[batch]``): a token index ``0..length-1`` of its sentence (the
  sentence is ``tokens``, or ``sentences`` split on whitespace).

Raw-text inputs (string ``[batch]``: ``sentences``, and ``text``, which the export splits into
sentences in-graph) are bounded from their strings before anything splits them
(:func:`check_raw_text`): UTF-8 text of at most :data:`CHARACTERS_PER_TOKEN` characters per token of
``--max_tokens_per_request`` (the tokeniser's regular expressions cost time with every character,
whitespace included), and no more words and punctuation marks than that limit (counted until the
limit is passed, never over the whole text). Only a request inside both is split into sentences and
tokenised with the export's own rules (:func:`data_pipeline.tokenizer.sentences`, the Python twin of
the in-graph tokeniser: its linear-time lexer makes that cost at most the limits' worth) to check the
per-sentence, per-request and per-token limits on the tokens the model will see.

Any other input is only counted against the limits. Errors the model raises itself are turned into
one line by :func:`graph_error_message`, which never passes on TensorFlow's node or op names.
"""

from __future__ import annotations

import dataclasses
import itertools
import math
import re
from typing import Any, Iterable, Mapping, Optional, Sequence

import numpy as np

from data_pipeline.input_limits import TrainingSizes, max_characters_per_token, max_tokens_per_sentence
from data_pipeline.tokenizer import SEP, WS, sentences as tokenized_sentences
from export.serving_codec import BadRequest, InputSpec, Signature, count_json_values

#: Used when neither a flag nor the model's run config gives the limit.
FALLBACK_MAX_TOKENS_PER_REQUEST = 8192
DEFAULT_MAX_SENTENCES_PER_REQUEST = 256
#: The default token-pairs limit lets a request fill the tokens-per-request limit with sentences
#: padded to this width (benchmarks/oversize_requests.py measures the choice: UD English-EWT's dev
#: and test sentences pass alone and in consecutive groups of up to 16, while a request whose every
#: token is a predicate costs a third of the largest one the token limits allow).
DEFAULT_TOKEN_PAIRS_WIDTH = 48
# The request object, its keys and signature name, beyond the values of its inputs.
_JSON_VALUES_SLACK = 64

#: The default word-pieces limit allows this many pieces per token of ``--max_tokens_per_request``
#: (7,500 for the shipped ``srl``). UD English-EWT averages 1.19 (dev) and 1.22 (test) MiniLM pieces per
#: token, and every group of up to 16 consecutive dev or test sentences passes (the widest, 16 x 337
#: pieces around test's 473-character URL, is 5,392); the costliest request it accepts is 14 full
#: 512-piece windows.
WORD_PIECES_PER_TOKEN = 3
#: A raw-text input may hold this many characters (whitespace included) per token of
#: ``--max_tokens_per_request``: ordinary English text has about six, so only text padded or run
#: together far beyond any sentence is refused (a request of 8,192 tokens may hold 512 K characters).
CHARACTERS_PER_TOKEN = 64

# Words and punctuation marks, counted on a raw text before it is tokenised: a bound found in
# milliseconds, before the exact count (:func:`_raw_sentences`) tokenises the text. The tokeniser's
# whitespace (a few characters beyond Python's \s, and its separator; none of them \w) is never a
# piece: no token holds it.
_TOKEN_PIECES = re.compile(rf"\w+|[^\w\s{WS[1:-1]}{SEP}]")  # WS is a class: "[...]"
# What tf.strings.split splits a ``sentences`` value on (ASCII whitespace only, unlike str.split).
_ASCII_WHITESPACE = re.compile("[ \t\n\v\f\r]+")
# The export's in-graph checks (export/saved_model.py) start their messages with the input's name.
_FIELD_MESSAGE = re.compile(r"\b(predicate_index|parse_heads): ([^;\]\n]*)")
# tf.debugging.assert_* put their ``message`` first: "assertion failed: [message] [Condition ...".
_ASSERT_MESSAGE = re.compile(r"assertion failed: \[([^\]\n]+)\]")


@dataclasses.dataclass(frozen=True)
class RequestLimits:
    """Limits on one ``:predict`` request; ``None`` takes the model's default (:meth:`resolve`).

    Args:
        max_tokens_per_sentence: the longest sentence (its padded width for ``tokens`` inputs,
            words and punctuation marks for raw-sentence inputs).
        max_tokens_per_request: sentences × padded width, the batch's token count as training
            counts it against its token budget.
        max_sentences_per_request: the batch size.
        max_token_pairs_per_request: sentences × padded width², what the model produces when every
            token is a predicate: LISA and SA find their own predicates and answer ``[batch,
            predicates, time]`` per-predicate outputs, so a request inside the token limits whose
            words are all verbs costs the square of its width (attention and parse scores are
            ``[batch, time, time]`` too). The token limits cannot bound that; this one does.
        max_characters_per_token: the longest token, in characters. A contextual encoder cuts a token
            into word pieces before any other limit sees them (``"x." * 25000`` is 50,000 pieces), so
            a request of such tokens inside every token limit held gigabytes of pieces; this limit is
            checked on the request's strings before the model runs (a raw text's tokens as the export's
            tokeniser makes them).
        max_word_pieces_per_request: sentences × the widest sentence's word pieces, what a contextual
            encoder computes (``[CLS]`` and ``[SEP]`` included, at most its 512-piece window each):
            its cost, which the token limits do not bound (52 sentences of 48 tokens of ``"x." * 70``
            are 52 full windows: 90 s and +1.8 GB), counted with the encoder's own word pieces
            (:class:`~data_pipeline.word_pieces.WordPieceCounter`) before the model runs. Only for a
            model with an encoder (``word_pieces``).
        word_pieces: the counter of the model's encoder's pieces, or ``None`` (no encoder).
    """

    max_tokens_per_sentence: Optional[int] = None
    max_tokens_per_request: Optional[int] = None
    max_sentences_per_request: Optional[int] = None
    max_token_pairs_per_request: Optional[int] = None
    max_characters_per_token: Optional[int] = None
    max_word_pieces_per_request: Optional[int] = None
    word_pieces: Any = dataclasses.field(default=None, compare=False, repr=False)

    def resolve(self, sizes: Optional[TrainingSizes] = None, word_pieces: Any = None) -> "RequestLimits":
        """These limits with every ``None`` replaced by the model's default.

        Args:
            sizes: what the export records of its training (:func:`data_pipeline.input_limits.training_sizes`):
                ``train.batch_tokens`` (the most tokens a training batch held), the longest training
                sentence (the model never saw a longer one, and the ``[T, T, ...]`` scores grow with its
                square; else the token budget bounds a sentence) and the longest training token; ``None``
                (or ``None`` fields) where it records none.

            word_pieces: the counter of the model's encoder's word pieces, or ``None`` (no encoder).

        Returns:
            A :class:`RequestLimits` with no ``None`` limit; the token-pairs limit defaults to
            :func:`default_token_pairs` of the resolved token limits, the word-pieces limit to
            :data:`WORD_PIECES_PER_TOKEN` per token of the tokens-per-request limit.
        """
        sizes = sizes or TrainingSizes()
        sentence = max_tokens_per_sentence(sizes.longest_sentence, sizes.token_budget)  # the library's policy
        request = sizes.token_budget or FALLBACK_MAX_TOKENS_PER_REQUEST
        per_sentence = self.max_tokens_per_sentence or sentence
        per_request = self.max_tokens_per_request or request
        return RequestLimits(
            per_sentence,
            per_request,
            self.max_sentences_per_request or DEFAULT_MAX_SENTENCES_PER_REQUEST,
            self.max_token_pairs_per_request or default_token_pairs(per_sentence, per_request),
            self.max_characters_per_token or max_characters_per_token(sizes.longest_token),
            self.max_word_pieces_per_request or WORD_PIECES_PER_TOKEN * per_request,
            word_pieces,
        )


def default_token_pairs(max_tokens_per_sentence: int, max_tokens_per_request: int) -> int:
    """The token-pairs limit (sentences × padded width²) when no flag gives it.

    Args:
        max_tokens_per_sentence: the resolved tokens-per-sentence limit.
        max_tokens_per_request: the resolved tokens-per-request limit.

    Returns:
        The larger of the longest sentence's square (every sentence the sentence limit accepts can be
        sent alone) and ``max_tokens_per_request`` sentences' worth of :data:`DEFAULT_TOKEN_PAIRS_WIDTH`
        tokens each.
    """
    return max(max_tokens_per_sentence ** 2, max_tokens_per_request * DEFAULT_TOKEN_PAIRS_WIDTH)


def _is_token_input(signature: Signature, name: str) -> bool:
    spec = signature.inputs[name]
    return spec.dtype == "DT_STRING" and spec.shape is not None and len(spec.shape) == 2


def _sentence_lengths(tokens: np.ndarray) -> np.ndarray:
    """Per row, the index after the last non-empty token; refuses empty tokens before it."""
    width = tokens.shape[1]
    if tokens.size == 0:
        return np.zeros(tokens.shape[0], dtype=np.int64)
    filled = np.vectorize(bool, otypes=[bool])(tokens)
    lengths = np.where(filled.any(axis=1), width - np.argmax(filled[:, ::-1], axis=1), 0)
    inside = np.arange(width)[None, :] < lengths[:, None]
    holes = np.argwhere(inside & ~filled)
    if len(holes):
        row, column = (int(v) for v in holes[0])
        raise BadRequest(f"tokens: instance {row} has an empty token at index {column} before non-empty tokens; "
                         "\"\" may only pad the end of a sentence")
    return lengths


class LimitExceeded(BadRequest):
    """A request over a limit: 400 over REST, ``RESOURCE_EXHAUSTED`` over gRPC."""


def _limit_error(what: str, found: int, limit: int, flag: str) -> BadRequest:
    return LimitExceeded(f"{what}: {found} is over the limit of {limit} ({flag})")


def _values_limit(spec: InputSpec, limits: RequestLimits) -> tuple:
    """``(most values, the flag that sets it)`` input ``spec`` can hold in a request inside ``limits``.

    A rank-1 input holds one value per sentence; an input of higher rank whose sizes after the batch
    are all fixed holds that many per sentence; any other (``tokens``, ``parse_heads``: ``[batch,
    time]``) is counted as tokens, times its fixed sizes.
    """
    if spec.shape is not None and len(spec.shape) == 0:
        return 1, "--max_sentences_per_request"
    inner = () if spec.shape is None else spec.shape[1:]
    fixed = math.prod(d for d in inner if d is not None)
    if spec.shape is not None and None not in inner:
        return limits.max_sentences_per_request * fixed, "--max_sentences_per_request"
    return limits.max_tokens_per_request * fixed, "--max_tokens_per_request"


def json_values_limit(signatures: Iterable[Signature], limits: RequestLimits) -> int:
    """The most JSON values (scalars, lists, objects) a ``:predict`` body inside ``limits`` holds.

    Per input, twice its values plus one per sentence (a string may be a ``{"b64": ...}`` object and
    each row a list; each instance of the row format is an object), for the signature with the most,
    plus the request object's own.
    """
    per_signature = [sum(_values_limit(spec, limits)[0] + limits.max_sentences_per_request
                         for spec in signature.inputs.values()) for signature in signatures]
    return 2 * max(per_signature, default=0) + _JSON_VALUES_SLACK


def check_json_values(body: bytes, signatures: Iterable[Signature], limits: RequestLimits) -> None:
    """Refuse a body with more JSON values than a request inside ``limits`` can hold, before it is parsed.

    Parsing alone costs what the body holds (a 6 MB body of a million one-word lists is ~90 MB of
    Python lists before any limit could be checked on the parsed request), so the values are counted
    on the body's bytes first (:func:`~export.serving_codec.count_json_values`).

    Args:
        body: the request body.
        signatures: the served version's signatures (the body may name any of them).
        limits: resolved limits.

    Raises:
        LimitExceeded: one line naming the limits that bound the count.
    """
    limit = json_values_limit(signatures, limits)
    if count_json_values(body, limit) > limit:
        raise LimitExceeded(f"JSON values in the request body: more than {limit}, the most a request within "
                            f"--max_sentences_per_request ({limits.max_sentences_per_request}) and "
                            f"--max_tokens_per_request ({limits.max_tokens_per_request}) can hold")


def check_shapes(shapes: Mapping[str, Sequence[int]], signature: Signature, limits: RequestLimits) -> None:
    """Refuse a request over ``limits`` from its inputs' shapes alone, before their values are converted.

    Args:
        shapes: each input's shape (a REST request's dense shapes as parsed, a gRPC ``TensorProto``'s
            declared shape, or the converted arrays').
        signature: the signature they are for.
        limits: resolved limits (no ``None``).

    Raises:
        LimitExceeded: one line naming the limit and its flag.
    """
    batch = max((shape[0] for shape in shapes.values() if len(shape) >= 1), default=0)
    if batch > limits.max_sentences_per_request:
        raise _limit_error("sentences per request", batch, limits.max_sentences_per_request,
                           "--max_sentences_per_request")
    for name, shape in shapes.items():
        if _is_token_input(signature, name) and len(shape) == 2:
            rows, width = shape
            if width > limits.max_tokens_per_sentence:
                raise _limit_error(f"tokens per sentence ('{name}' is {width} tokens wide)", width,
                                   limits.max_tokens_per_sentence, "--max_tokens_per_sentence")
            if rows * width > limits.max_tokens_per_request:
                raise _limit_error(f"tokens per request ('{name}': {batch} sentences x {width} tokens)", rows * width,
                                   limits.max_tokens_per_request, "--max_tokens_per_request")
            _check_token_pairs(name, rows, width, limits)
        limit, flag = _values_limit(signature.inputs[name], limits)
        size = math.prod(shape)
        if size > limit or any(d > limit for d in shape):
            raise _limit_error(f"values of input '{name}' (shape {list(shape)})", max((size, *shape)), limit, flag)


def _check_token_pairs(name: str, rows: int, width: int, limits: RequestLimits) -> None:
    if rows * width * width > limits.max_token_pairs_per_request:
        raise _limit_error(f"token pairs per request ('{name}': {rows} sentences x {width} x {width} tokens, the "
                           "per-predicate outputs if every token is a predicate)", rows * width * width,
                           limits.max_token_pairs_per_request, "--max_token_pairs_per_request")


def check_request(arrays: Mapping[str, np.ndarray], signature: Signature, limits: RequestLimits) -> None:
    """Refuse a request over ``limits`` or with inputs that do not fit their sentences.

    Args:
        arrays: the request's inputs as the codec converted them.
        signature: the signature they are for.
        limits: resolved limits (no ``None``).

    Raises:
        BadRequest: one line naming the limit or the field, instance and token.
    """
    check_shapes({name: array.shape for name, array in arrays.items()}, signature, limits)
    batch = max((a.shape[0] for a in arrays.values() if a.ndim >= 1), default=0)
    lengths = None
    for name, array in arrays.items():
        if _is_token_input(signature, name):
            _check_token_characters(name, array, limits)
            if name == "tokens":
                lengths = _sentence_lengths(array)
                _check_word_pieces(name, [row[:n] for row, n in zip(array.tolist(), lengths.tolist())], limits)
        elif signature.inputs[name].dtype == "DT_STRING" and array.ndim == 1:
            found = _raw_sentences(name, check_raw_text(name, array, limits))
            counts = [len(tokens) for _, tokens in found]
            longest = max(counts, default=0)
            sentences = len(counts)
            if longest > limits.max_tokens_per_sentence:
                where = found[counts.index(longest)][0]
                raise _limit_error(f"tokens per sentence ('{name}' instance {where} has {longest} tokens)", longest,
                                   limits.max_tokens_per_sentence, "--max_tokens_per_sentence")
            if sentences > limits.max_sentences_per_request:
                raise _limit_error(f"sentences per request ('{name}' splits into {sentences})", sentences,
                                   limits.max_sentences_per_request, "--max_sentences_per_request")
            if sentences * longest > limits.max_tokens_per_request:
                raise _limit_error(f"tokens per request ('{name}': {sentences} sentences x {longest} tokens)",
                                   sentences * longest, limits.max_tokens_per_request, "--max_tokens_per_request")
            _check_token_pairs(name, sentences, longest, limits)
            for where, tokens in found:
                widest = max(map(len, tokens), default=0)
                if widest > limits.max_characters_per_token:
                    raise _limit_error(f"characters per token ('{name}' instance {where} has a token of {widest} "
                                       "characters)", widest, limits.max_characters_per_token,
                                       "--max_characters_per_token")
            _check_word_pieces(name, [tokens for _, tokens in found], limits)
            if name == "sentences":
                lengths = np.array(counts, dtype=np.int64)
    if lengths is None:
        return
    if "parse_heads" in arrays and arrays["parse_heads"].ndim == 2:
        _check_heads(arrays["parse_heads"], lengths)
    if "predicate_index" in arrays and arrays["predicate_index"].ndim == 1:
        _check_predicates(arrays["predicate_index"], lengths)


def check_raw_text(name: str, array: np.ndarray, limits: RequestLimits) -> list[str]:
    """Refuse a raw-text input over ``limits`` from its strings alone, before anything splits them.

    A ``text`` instance of 8 MB is millions of sentences (or a few, padded with whitespace), and
    splitting it costs seconds whatever the limits say of its result, so its size is bounded first.
    Its words and punctuation marks (runs of word characters, and every other character that is not
    whitespace) are counted until ``--max_tokens_per_request`` is passed, and a request with more is
    refused: a count in milliseconds that bounds the work of tokenising it for the exact checks
    (:func:`check_request`). Its characters, whitespace included, cost the tokeniser time however
    few tokens they make: at most :data:`CHARACTERS_PER_TOKEN` per token of the limit are accepted
    (counted in milliseconds).

    Args:
        name: the input's name (``text``, ``sentences``).
        array: its values, UTF-8 bytes ``[batch]``.
        limits: resolved limits (no ``None``).

    Returns:
        The values as text, for the exact per-sentence checks.

    Raises:
        BadRequest: a value that is not UTF-8 (the export's tokeniser counts characters of UTF-8 text).
        LimitExceeded: one line naming the input, the limit and its flag.
    """
    texts = []
    for i, value in enumerate(array.tolist()):
        try:
            texts.append(value.decode("utf-8"))
        except UnicodeDecodeError as error:
            raise BadRequest(f"{name}: instance {i} is not UTF-8 text (byte {error.start}: {error.reason}); "
                             "expected UTF-8 text") from None
    characters = sum(map(len, texts))
    tokens = limits.max_tokens_per_request
    if characters > tokens * CHARACTERS_PER_TOKEN:
        raise _limit_error(f"characters per request ('{name}' holds {characters} characters, at most "
                           f"{CHARACTERS_PER_TOKEN} per token of --max_tokens_per_request {tokens})", characters,
                           tokens * CHARACTERS_PER_TOKEN, "--max_tokens_per_request")
    pieces = 0
    for text in texts:
        pieces += sum(1 for _ in itertools.islice(_TOKEN_PIECES.finditer(text), tokens + 1 - pieces))
        if pieces > tokens:
            raise LimitExceeded(f"tokens per request ('{name}' holds more than {tokens} words and punctuation "
                                f"marks): over the limit of {tokens} (--max_tokens_per_request)")
    return texts


def _raw_sentences(name: str, texts: Sequence[str]) -> list[tuple[str, list[str]]]:
    """``(where, tokens)`` of every sentence the model will see, tokenised as the export does in-graph:
    a ``text`` instance is split into sentences and tokenised with the project's rules
    (:func:`data_pipeline.tokenizer.sentences`, the Python twin of the export's ``sentences_tf``: the same
    tokens, so ``lets`` counts as the two tokens ``let`` ``s`` it becomes); any other string is one
    sentence split on ASCII whitespace, as ``tf.strings.split`` splits it."""
    found = []
    for i, value in enumerate(texts):
        if name != "text":
            found.append((str(i), [token for token in _ASCII_WHITESPACE.split(value) if token]))
            continue
        for k, sentence in enumerate(tokenized_sentences(value)):
            found.append((f"{i} sentence {k + 1}", [token.text for token in sentence]))
    return found


def _check_word_pieces(name: str, sentences: Sequence[Sequence], limits: RequestLimits) -> None:
    """Refuse sentences whose word pieces (sentences × the widest one's, as the model's contextual
    encoder makes them) are over ``--max_word_pieces_per_request``; nothing to count without an encoder."""
    if limits.word_pieces is None or not sentences:
        return
    lengths = limits.word_pieces.sentence_lengths(sentences)
    pieces = len(lengths) * max(lengths)
    if pieces > limits.max_word_pieces_per_request:
        raise _limit_error(f"word pieces per request ('{name}': {len(lengths)} sentences x {max(lengths)} pieces, the "
                           "contextual encoder's input)", pieces, limits.max_word_pieces_per_request,
                           "--max_word_pieces_per_request")


def _check_token_characters(name: str, tokens: np.ndarray, limits: RequestLimits) -> None:
    """Refuse a ``tokens`` input holding a token of more than ``--max_characters_per_token`` characters
    (UTF-8 bytes bound the characters from above, so only tokens with more bytes are decoded)."""
    if tokens.size == 0:
        return
    limit = limits.max_characters_per_token
    sizes = np.vectorize(len, otypes=[np.int64])(tokens)
    for row, column in np.argwhere(sizes > limit):
        value = tokens[row, column]
        characters = len(value.decode("utf-8", "replace")) if isinstance(value, bytes) else len(value)
        if characters > limit:
            raise _limit_error(f"characters per token ('{name}' instance {row} token {column} has {characters} "
                               "characters)", characters, limit, "--max_characters_per_token")


def _check_heads(heads: np.ndarray, lengths: np.ndarray) -> None:
    positions = np.arange(heads.shape[1])[None, :]
    inside = positions < lengths[:, None]
    valid = np.where(inside, (heads >= 0) & (heads <= lengths[:, None]), heads == -1)
    bad = np.argwhere(~valid)
    if len(bad):
        row, column = (int(v) for v in bad[0])
        length = int(lengths[row])
        where = f"token {column} of its {length} tokens" if column < length else f"padding position {column}"
        raise BadRequest(f"parse_heads: instance {row} has head {int(heads[row, column])} at {where}; expected "
                         f"0..{length} (0 = root) on every token and -1 only on padding")


def _check_predicates(indices: np.ndarray, lengths: np.ndarray) -> None:
    if indices.shape[0] != lengths.shape[0]:
        raise BadRequest(f"predicate_index: expected one index per sentence ({lengths.shape[0]}), "
                         f"found {indices.shape[0]}")
    bad = np.flatnonzero((indices < 0) | (indices >= lengths))
    if len(bad):
        row = int(bad[0])
        raise BadRequest(f"predicate_index: instance {row} is {int(indices[row])}; expected a token index in "
                         f"0..{int(lengths[row]) - 1} (its sentence has {int(lengths[row])} tokens)")


def graph_error_message(signature_name: str, message: str) -> str:
    """One clean line for an error TensorFlow raised while running a signature.

    Args:
        signature_name: the signature that ran.
        message: the ``tf.errors.OpError`` message (graph node names, op names, stack lines).

    Returns:
        The export's own check message naming its field (``parse_heads: expected ...``), else the
        message given to a ``tf.debugging`` assertion, else a line naming only the signature.
    """
    field = _FIELD_MESSAGE.search(message)
    if field:
        return f"{field.group(1)}: {field.group(2).strip().rstrip(';,')}"
    asserted = _ASSERT_MESSAGE.search(message)
    if asserted and "Condition" not in asserted.group(1):
        return f"signature '{signature_name}' refused the inputs: {asserted.group(1).strip()}"
    return f"signature '{signature_name}' could not run on these inputs (shapes or values it does not accept)"


__all__: Sequence[str] = ["CHARACTERS_PER_TOKEN", "WORD_PIECES_PER_TOKEN", "LimitExceeded", "RequestLimits", "check_json_values", "check_raw_text",
                          "check_request", "check_shapes",
                          "default_token_pairs", "graph_error_message", "json_values_limit"]
