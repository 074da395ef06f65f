"""``tf.data`` pipelines batching sentences by token budget.

:func:`make_dataset` turns :class:`~data_pipeline.sentence.Sentence` objects into padded batches
whose padded size (``batch × longest length``) stays within a token budget (4096 for DeepAtt, 5000 for
LISA). Examples are grouped into length buckets with ``tf.data.Dataset.bucket_by_sequence_length``;
the bucket for lengths ``[lo, hi)`` takes ``budget // (hi - 1)`` examples a batch, so a batch never
exceeds the budget. A sentence longer than the budget cannot fit: it is batched alone (batch size 1)
and counted in ``DatasetReport.over_budget_examples``. Bucket boundaries grow geometrically
(:func:`length_buckets`), which keeps padding to a few per cent of the tokens (see
``benchmarks/padding.py``). Shuffling uses a seed (and nothing else, :func:`example_order`), so the
batch sequence is the same on every run and for every iterator, and ``start=`` resumes it at a
given batch.

Two layouts (``layout=``):

``"sentence"`` — one example per sentence with all its predicates (LISA, SA).
``"predicate"`` — one example per (sentence, predicate) (DeepAtt, Selective Connection; LISA's gold-predicate mode).
Sentences without predicates give no example in this layout (counted in the report).

What a batch holds (``B`` examples, ``T`` the batch's longest sentence, ``P`` its most predicates) —
the model *inputs* as read, and the *labels*. The model features (word ids, masks, predicate
indicator, self-loop heads) are built from these in-graph by the model's preprocessor
(:class:`lisa_tf.models.preprocessor.SrlPreprocessor`), which ``make_dataset(preprocess=...)`` maps over
every batch; this module knows nothing of models.

==========================  =========  ======  =========================================================
name                        shape      dtype   meaning
==========================  =========  ======  =========================================================
``tokens``                  [B, T]     string  the words as written (original case); ``""`` padding
``length``                  [B]        int32   tokens in the sentence
``sentence_index``          [B]        int32   index of the sentence in the list given to make_dataset
``parse_heads``             [B, T]     int32   CoNLL-U heads, 1-based, 0 = root (only when the sentences
                                               have dependency heads)
``pos_ids``                 [B, T]     int32   ``pos`` ids (only when the sentences have POS)
``joint_pos_predicate_ids`` [B, T]     int32   ``joint_pos_predicate`` ids (``TAG`` / ``TAG:PREDICATE``)
``dep_label_ids``           [B, T]     int32   ``dep_labels`` ids (only with heads and labels)
``upos_ids``                [B, T]     int32   ``upos`` ids (only when the sentences have UPOS and the
                                               vocabularies have a ``upos`` vocabulary)
--------------------------  ---------  ------  ---------------------------------------------------------
sentence layout only
--------------------------  ---------  ------  ---------------------------------------------------------
``predicate_positions``     [B, P]     int32   token index of each gold predicate, in sentence order
``num_predicates``          [B]        int32   predicates in the sentence (may be 0)
``srl_tag_ids``             [B, P, T]  int32   ``srl`` (BIO) ids of predicate p's arguments
``sense_ids``               [B, P]     int32   ``senses`` id of each predicate's roleset, -1 for a roleset
                                               training never saw (only with a ``senses`` vocabulary
                                               and a sense on every predicate)
--------------------------  ---------  ------  ---------------------------------------------------------
predicate layout only
--------------------------  ---------  ------  ---------------------------------------------------------
``predicate_index``         [B]        int32   index of the predicate in ``Sentence.predicates``
``predicate_position``      [B]        int32   its token index
``srl_tag_ids``             [B, T]     int32   ``srl`` (BIO) ids of its arguments
``sense_id``                [B]        int32   ``senses`` id of its roleset (-1: unseen; as ``sense_ids``)
==========================  =========  ======  =========================================================

Padded entries are 0 / ``""`` and must be read through ``length`` (and ``num_predicates``);
id 0 of a label vocabulary is a real label (``"O"`` for ``srl``), so masks, not ids, mark padding.
A feature is present when every sentence has the annotation it needs; if only some have it,
:func:`make_dataset` raises :class:`~data_pipeline.errors.DataFormatError` naming the first without.

Nested spans that BIO cannot express are left out of ``srl_tag_ids`` and counted
(``DatasetReport.bio``, see :func:`data_pipeline.vocab.predicate_bio_tags`). Labels missing from the
training vocabularies raise an error naming the sentence, unless ``unknown_labels="map"`` (for
dev-loss monitoring; the scorer reads gold spans from the Sentences, not from these ids), which maps
an unknown SRL tag to ``O`` and any other unknown label to id 0, and counts each.
"""

from __future__ import annotations

import collections
import dataclasses
import itertools
import math
from typing import Callable, Iterator, Optional, Sequence

import numpy as np
import tensorflow as tf

from data_pipeline.errors import DataFormatError
from data_pipeline.sentence import Sentence
from data_pipeline.vocab import (
    BioReport,
    UnknownLabelError,
    Vocabularies,
    Vocabulary,
    joint_pos_predicate_labels,
    predicate_bio_tags,
)

SENTENCE_LAYOUT = "sentence"
PREDICATE_LAYOUT = "predicate"
LAYOUTS = (SENTENCE_LAYOUT, PREDICATE_LAYOUT)
UNKNOWN_LABEL_POLICIES = ("error", "map")


@dataclasses.dataclass
class DatasetReport:
    """What :func:`make_dataset` built, and everything it left out or changed.

    Attributes:
        layout: ``"sentence"`` or ``"predicate"``.
        sentences, examples, tokens, predicates: counts of the input / of the examples.
        sentences_without_predicates: sentences with no predicate (no example in the predicate layout).
        features: names of the features in each batch.
        token_budget: the budget; ``bucket_boundaries`` / ``bucket_batch_sizes`` as given to
            ``bucket_by_sequence_length`` (one more batch size than boundaries).
        max_length: longest example.
        over_budget_examples: examples longer than the budget, each batched alone.
        bio: nested spans left out of the BIO tags (:class:`~data_pipeline.vocab.BioReport` dict).
        unknown_labels: per vocabulary, labels mapped because training never saw them
            (``unknown_labels="map"`` only), as ``{vocabulary: {label: count}}``.
    """

    layout: str
    sentences: int = 0
    examples: int = 0
    tokens: int = 0
    predicates: int = 0
    sentences_without_predicates: int = 0
    features: list[str] = dataclasses.field(default_factory=list)
    token_budget: int = 0
    bucket_boundaries: list[int] = dataclasses.field(default_factory=list)
    bucket_batch_sizes: list[int] = dataclasses.field(default_factory=list)
    max_length: int = 0
    over_budget_examples: int = 0
    bio: dict = dataclasses.field(default_factory=dict)
    unknown_labels: dict = dataclasses.field(default_factory=dict)

    def as_dict(self) -> dict:
        """Plain dict for JSON reports."""
        return dataclasses.asdict(self)


def length_buckets(max_length: int, growth: float = 1.1) -> list[int]:
    """Bucket boundaries for ``bucket_by_sequence_length`` covering lengths ``1..max_length``.

    Boundaries start at 2 and grow by ``max(1, ⌊b·(growth−1)⌋)``: one length per bucket for short
    sentences, ~``growth−1`` relative width for long ones, so padding within a bucket stays around
    ``(growth−1)/2`` of its tokens. The last boundary is ``max_length + 1``, so every length falls in a
    bounded bucket.
    """
    if max_length < 1:
        raise ValueError(f"max_length must be >= 1, found {max_length}")
    if growth <= 1.0:
        raise ValueError(f"growth must be > 1, found {growth}")
    boundaries = [2]
    while boundaries[-1] <= max_length:
        b = boundaries[-1]
        boundaries.append(min(max(b + 1, math.floor(b * growth)), max_length + 1))
    return boundaries


def bucket_batch_sizes(
    boundaries: Sequence[int], token_budget: int, max_length: int, multiple: int = 1
) -> list[int]:
    """Examples per batch for each bucket: ``budget // longest length the bucket can hold``, rounded
    down to a multiple of ``multiple`` (at least ``multiple``).

    Bucket ``i`` holds lengths ``[boundaries[i-1], boundaries[i])``; the last one (lengths ≥ the last
    boundary) is bounded by ``max_length``. ``multiple`` is the number of replicas of a distribution
    strategy, so full batches split evenly over them.
    """
    uppers = [b - 1 for b in boundaries] + [max(max_length, boundaries[-1] if boundaries else 1)]
    return [max(multiple, token_budget // max(1, upper) // multiple * multiple) for upper in uppers]


class _Encoder:
    """Looks labels up, applying the unknown-label policy and counting what it maps."""

    def __init__(self, vocabs: Vocabularies, policy: str):
        if policy not in UNKNOWN_LABEL_POLICIES:
            raise ValueError(f"unknown_labels must be one of {UNKNOWN_LABEL_POLICIES}, found {policy!r}")
        self.vocabs = vocabs
        self.policy = policy
        self.unknown: dict[str, collections.Counter] = collections.defaultdict(collections.Counter)

    def ids(self, vocab: Vocabulary, labels: Sequence[str], sentence: Sentence) -> list[int]:
        out = []
        for label in labels:
            try:
                out.append(vocab.lookup(label))
            except UnknownLabelError as error:
                if self.policy == "error":
                    raise DataFormatError(
                        sentence.source,
                        sentence.line,
                        f"{error}; pass unknown_labels='map' to map such labels and count them",
                    ) from error
                self.unknown[vocab.name][label] += 1
                out.append(0)  # "O" for srl; see the module docstring
        return out

    def sense_id(self, vocab: Vocabulary, roleset: str) -> int:
        """The id of a predicate's roleset, -1 for one training never saw (counted: a sense of dev or test
        data outside the training data is no error; the model cannot have learnt it)."""
        if roleset in vocab:
            return vocab.lookup(roleset)
        self.unknown[vocab.name][roleset] += 1
        return -1


def _available(sentences: Sequence[Sentence], attribute: str) -> bool:
    """True if every sentence has ``attribute``; False if none has; error if only some have."""
    have = [getattr(s, attribute) is not None for s in sentences]
    if all(have):
        return bool(have)
    if any(have):
        missing = sentences[have.index(False)]
        raise DataFormatError(
            missing.source, missing.line, f"expected every sentence to have {attribute} (others do), this one has none"
        )
    return False


def _token_features(sentence: Sentence, index: int, vocabs: Vocabularies, encoder: _Encoder, has: dict) -> dict:
    length = len(sentence)
    if length == 0:
        raise DataFormatError(sentence.source, sentence.line, "expected at least one token, found an empty sentence")
    features = {
        "tokens": list(sentence.words),
        "length": length,
        "sentence_index": index,
    }
    if has["pos"]:
        features["pos_ids"] = encoder.ids(vocabs.pos, sentence.pos, sentence)
        features["joint_pos_predicate_ids"] = encoder.ids(
            vocabs.joint_pos_predicate, joint_pos_predicate_labels(sentence), sentence
        )
    if has["heads"]:
        for i, head in enumerate(sentence.heads):
            if not 0 <= head <= length:
                raise DataFormatError(
                    sentence.source, sentence.line, f"token {i + 1}: expected a head in 0..{length}, found {head}"
                )
        features["parse_heads"] = list(sentence.heads)
    if has["dep_labels"]:
        features["dep_label_ids"] = encoder.ids(vocabs.dep_labels, sentence.dep_labels, sentence)
    if has["upos"]:
        features["upos_ids"] = encoder.ids(vocabs.upos, sentence.upos, sentence)
    return features


_TOKEN_FEATURES = ("tokens", "pos_ids", "joint_pos_predicate_ids", "parse_heads", "dep_label_ids", "upos_ids")


def encode(
    sentences: Sequence[Sentence],
    vocabs: Vocabularies,
    layout: str = SENTENCE_LAYOUT,
    unknown_labels: str = "error",
) -> tuple[list[dict], DatasetReport]:
    """Encode sentences as per-example Python dicts of ids (the features before padding).

    Returns:
        ``(examples, report)``; each example holds the features of the module docstring except
        the masks, as lists (per token) or ints, and ``srl_tag_ids`` as a list of lists in the
        sentence layout. ``report`` has the counts; bucketing fields are filled by :func:`make_dataset`.
    """
    if layout not in LAYOUTS:
        raise ValueError(f"layout must be one of {LAYOUTS}, found {layout!r}")
    encoder = _Encoder(vocabs, unknown_labels)
    has = {
        "pos": _available(sentences, "pos"),
        "heads": _available(sentences, "heads"),
    }
    has["dep_labels"] = has["heads"] and _available(sentences, "dep_labels")
    has["upos"] = bool(len(vocabs.upos)) and _available(sentences, "upos")
    has["senses"] = bool(len(vocabs.senses)) and all(
        p.roleset is not None for sentence in sentences for p in sentence.predicates
    )
    report = DatasetReport(layout=layout, sentences=len(sentences))
    bio = BioReport()
    examples: list[dict] = []
    for index, sentence in enumerate(sentences):
        base = _token_features(sentence, index, vocabs, encoder, has)
        length = base["length"]
        tags, senses = [], []
        for predicate in sentence.predicates:
            if not 0 <= predicate.position < length:
                raise DataFormatError(
                    sentence.source, sentence.line, f"predicate position {predicate.position} outside 0..{length - 1}"
                )
            bio_tags, dropped = predicate_bio_tags(predicate, length)
            bio.add(sentence, predicate, dropped)
            tags.append(encoder.ids(vocabs.srl, bio_tags, sentence))
            if has["senses"]:
                senses.append(encoder.sense_id(vocabs.senses, predicate.roleset))
        report.predicates += len(sentence.predicates)
        report.sentences_without_predicates += not sentence.predicates
        positions = sentence.predicate_positions
        if layout == SENTENCE_LAYOUT:
            examples.append(
                dict(
                    base,
                    predicate_positions=list(positions),
                    num_predicates=len(positions),
                    srl_tag_ids=tags,
                    **({"sense_ids": senses} if has["senses"] else {}),
                )
            )
        else:
            for k, (position, tag_ids) in enumerate(zip(positions, tags)):
                examples.append(
                    dict(
                        base,
                        predicate_index=k,
                        predicate_position=position,
                        srl_tag_ids=tag_ids,
                        **({"sense_id": senses[k]} if has["senses"] else {}),
                    )
                )
    report.examples = len(examples)
    report.tokens = sum(e["length"] for e in examples)
    report.max_length = max((e["length"] for e in examples), default=0)
    report.bio = bio.as_dict()
    report.unknown_labels = {name: dict(counts) for name, counts in sorted(encoder.unknown.items())}
    return examples, report


def _ragged_columns(examples: list[dict], layout: str) -> dict:
    """Stack the examples column-wise as (ragged) tensors, row i = example i (gathered into batches)."""
    lengths = np.array([e["length"] for e in examples], dtype=np.int64)
    names = list(examples[0])
    columns = {}
    for name in names:
        if name in _TOKEN_FEATURES or (name == "srl_tag_ids" and layout == PREDICATE_LAYOUT):
            if name == "tokens":
                flat = tf.constant([w for e in examples for w in e[name]], dtype=tf.string)
            else:
                flat = tf.constant(np.fromiter((v for e in examples for v in e[name]), dtype=np.int32))
            columns[name] = tf.RaggedTensor.from_row_lengths(flat, lengths, validate=False)
        elif name in ("predicate_positions", "sense_ids"):
            flat = np.fromiter((v for e in examples for v in e[name]), dtype=np.int32)
            row_lengths = np.array([len(e[name]) for e in examples], dtype=np.int64)
            columns[name] = tf.RaggedTensor.from_row_lengths(tf.constant(flat), row_lengths, validate=False)
        elif name == "srl_tag_ids":  # sentence layout: [N, P, T]
            flat = np.fromiter((v for e in examples for row in e[name] for v in row), dtype=np.int32)
            outer = np.array([len(e[name]) for e in examples], dtype=np.int64)
            inner = np.array([len(row) for e in examples for row in e[name]], dtype=np.int64)
            columns[name] = tf.RaggedTensor.from_nested_row_lengths(tf.constant(flat), [outer, inner], validate=False)
        else:
            columns[name] = tf.constant(np.array([e[name] for e in examples], dtype=np.int32))
    return columns


def _pass_order(count: int, seed: int, shuffle: bool, number) -> tf.Tensor:
    """The example indices of pass ``number`` (int32 ``[count]``): a permutation drawn from ``(seed,
    number)`` alone with ``shuffle``, else ``0..count-1``. Used in the pipeline and, eagerly, by
    :func:`resume_point`, so both see the same order."""
    indices = tf.range(count, dtype=tf.int32)
    if not shuffle:
        return indices
    return tf.random.experimental.stateless_shuffle(
        indices, seed=tf.stack([tf.constant(seed, tf.int64), tf.cast(number, tf.int64)]), alg="philox")


def example_order(count: int, seed: int = 0, shuffle: bool = True, repeat: bool = False,
                  first: int = 0) -> tf.data.Dataset:
    """The indices (int32) of ``count`` examples in the order they are batched: one pass, or pass
    after pass forever with ``repeat``; with ``shuffle`` each pass is a permutation drawn from
    ``(seed, pass number)`` alone (a stateless shuffle). ``first``: start at that position of the
    (repeated) order, without computing what comes before it.

    Nothing in the order depends on how many iterators were made before or on TensorFlow's global
    seed, so every iterator yields the same sequence and a position in it is all that resuming a
    run needs. (``Dataset.shuffle`` with ``reshuffle_each_iteration`` instead draws each pass's
    order from a seed generator shared by all iterators of the dataset: the order an iterator sees
    depends on the iterators made before it.)
    """
    if first and not repeat:
        raise ValueError("first needs repeat=True")
    passes = tf.data.Dataset.counter(start=first // count) if repeat else tf.data.Dataset.range(1)
    order = passes.flat_map(lambda number: tf.data.Dataset.from_tensor_slices(_pass_order(count, seed, shuffle, number)))
    return order.skip(first % count) if first % count else order


def resume_point(lengths: Sequence[int], boundaries: Sequence[int], sizes: Sequence[int], start: int,
                 seed: int = 0, shuffle: bool = True) -> tuple[int, np.ndarray]:
    """Where ``bucket_by_sequence_length`` over the repeated :func:`example_order` stands once it has
    made ``start`` batches: ``(examples read, pending)``, ``pending`` being the example indices
    waiting in partly filled buckets, in the order they arrived.

    Feeding the bucketing ``pending`` and then the order from position ``examples read`` on puts
    every bucket back in that state (no bucket fills up on ``pending`` alone), so it goes on with
    exactly the batches that followed. Computed a pass at a time with numpy (a few milliseconds a
    pass), where skipping the batches in ``tf.data`` costs what reading them does (~45 µs an
    example: 10,000 batches of 4,096 tokens took a minute).

    Args:
        lengths: the examples' lengths; ``boundaries``, ``sizes``: the bucketing's.
        start: batches made so far (> 0).
    """
    lengths = np.asarray(lengths)
    count = len(lengths)
    # bucket_by_sequence_length puts length l in bucket i when boundaries[i-1] <= l < boundaries[i]
    bucket_of = np.searchsorted(np.asarray(boundaries), lengths, side="right")
    pending = [np.empty(0, np.int64) for _ in sizes]
    made = 0
    for number in itertools.count():
        order = _pass_order(count, seed, shuffle, number).numpy()
        arrivals = []  # per bucket: (this pass's positions, the examples there), in arrival order
        completions = []  # positions in this pass where a bucket fills up
        for bucket, size in enumerate(sizes):
            positions = np.flatnonzero(bucket_of[order] == bucket)
            arrivals.append(positions)
            completions.append(positions[size - len(pending[bucket]) - 1::size])
        times = np.sort(np.concatenate(completions))
        if made + len(times) < start:
            for bucket, size in enumerate(sizes):
                waiting = np.concatenate([pending[bucket], order[arrivals[bucket]]])
                pending[bucket] = waiting[len(waiting) // size * size:]
            made += len(times)
            continue
        last = times[start - made - 1]  # the position where the batch number ``start`` fills up
        left = []
        for bucket, size in enumerate(sizes):
            waiting = np.concatenate([pending[bucket], order[arrivals[bucket][arrivals[bucket] <= last]]])
            left.append(waiting[len(waiting) // size * size:])
        return number * count + int(last) + 1, np.concatenate(left).astype(np.int32)
    raise AssertionError("unreachable")


def _gather_batch(columns: dict) -> Callable[[dict], dict]:
    """The function that turns a batch of example indices (``{"index": [B], "length": [B]}``, the
    length the batching counted, which may be more than the tokens) into
    the batch of padded features: each column's rows gathered and padded with 0 / ``""`` to the
    batch's longest row, as ``padded_batch`` would pad the examples."""

    def gather(batch: dict) -> dict:
        out = {}
        for name, column in columns.items():
            value = tf.gather(column, batch["index"])
            if isinstance(value, tf.RaggedTensor):
                if value.ragged_rank == 2:  # sentence-layout srl_tag_ids [B, P, T]
                    # T is the batch's longest sentence, also when no sentence has a predicate.
                    width = tf.reduce_max(tf.cast(tf.gather(columns["length"], batch["index"]), tf.int64))
                    value = value.to_tensor(shape=tf.concat([value.bounding_shape()[:2], [width]], 0))
                else:
                    value = value.to_tensor()
            out[name] = value
        return out

    return gather


def inference_batches(
    sentences: Sequence[Sentence],
    vocabs: Vocabularies,
    layout: str = SENTENCE_LAYOUT,
    token_budget: int = 4096,
    unknown_labels: str = "map",
) -> Iterator[dict]:
    """Padded batches of ``sentences`` for labelling, the same features as :func:`make_dataset`'s.

    Training needs shuffled, evenly sized batches; labelling needs few, full ones. The examples are
    sorted by length and packed greedily: a batch takes the next examples while ``batch × longest``
    stays within ``token_budget`` (an example longer than the budget is a batch alone), so each
    batch is as full as the budget allows and its rows differ little in length. Built eagerly, with
    no ``tf.data`` pipeline (whose map functions are traced again for every new dataset: most of the
    time of labelling one sentence). ``sentence_index`` maps rows back to ``sentences``.

    Args:
        sentences, vocabs, layout, unknown_labels: as for :func:`make_dataset`.
        token_budget: most padded tokens in a batch.

    Yields:
        Dicts of tensors, shortest sentences first.
    """
    if token_budget < 1:
        raise ValueError(f"token_budget must be >= 1, found {token_budget}")
    examples, _ = encode(sentences, vocabs, layout, unknown_labels)
    if not examples:
        return
    gather = _gather_batch(_ragged_columns(examples, layout))
    lengths = np.array([e["length"] for e in examples], dtype=np.int32)
    for index in pack_by_length(lengths, token_budget):
        yield gather({"index": tf.constant(index), "length": tf.constant(lengths[index])})


def pack_by_length(lengths: Sequence[int], token_budget: int) -> list[np.ndarray]:
    """Indices of ``lengths`` in batches for labelling: sorted by length (shortest first) and packed
    greedily, each batch taking the next items while ``batch × longest <= token_budget`` (an item
    longer than the budget is a batch alone). Every index appears once.
    """
    lengths = np.asarray(lengths, dtype=np.int64)
    order = np.argsort(lengths, kind="stable").astype(np.int32)
    batches, start = [], 0
    while start < len(order):
        end = start + 1
        # ascending lengths: the item at ``end`` is the longest the batch would hold
        while end < len(order) and (end - start + 1) * int(lengths[order[end]]) <= token_budget:
            end += 1
        batches.append(order[start:end])
        start = end
    return batches


def make_dataset(
    sentences: Sequence[Sentence],
    vocabs: Vocabularies,
    layout: str = SENTENCE_LAYOUT,
    token_budget: int = 4096,
    shuffle: bool = True,
    seed: int = 0,
    boundaries: Optional[Sequence[int]] = None,
    bucket_growth: float = 1.1,
    unknown_labels: str = "error",
    prefetch: bool = True,
    batch_multiple: int = 1,
    repeat: bool = False,
    preprocess: Optional[Callable[[dict], dict]] = None,
    start: int = 0,
    sentence_lengths: Optional[Sequence[int]] = None,
) -> tuple[tf.data.Dataset, DatasetReport]:
    """Padded, token-budget batches of ``sentences`` (one pass = one epoch; ``repeat=True`` for more).

    Args:
        sentences: the split to serve; ``sentence_index`` refers to positions in this sequence.
        vocabs: vocabularies built from the training split.
        layout: ``"sentence"`` or ``"predicate"`` (module docstring).
        token_budget: most padded tokens (``batch × longest``) in a batch, except a single example
            longer than the budget, which is batched alone.
        shuffle: shuffle examples before bucketing (training); off keeps the order within buckets.
        seed: shuffle seed; the same seed gives the same batches, and with ``repeat`` each pass
            reshuffles deterministically (:func:`example_order`). Every iterator of the dataset
            yields the same sequence.
        boundaries: bucket boundaries; default :func:`length_buckets` of the longest example.
        bucket_growth: the growth factor of the default boundaries.
        unknown_labels: ``"error"`` or ``"map"`` (module docstring).
        prefetch: end the pipeline with ``prefetch(AUTOTUNE)``.
        batch_multiple: make full batches a multiple of this many examples (the replica count under
            ``tf.distribute``); the budget may then be exceeded for buckets of very long sentences.
        repeat: repeat the examples forever *before* bucketing (training): buckets keep filling
            across passes, so every batch is full-sized and there are no end-of-pass remainders.
        preprocess: mapped over every padded batch (the model's preprocessor, which adds the model
            features); None leaves the batches as read.
        start: leave out the first ``start`` batches (``repeat`` only): the position of a resumed
            training run in the batch sequence. The batches left out are not computed
            (:func:`resume_point`).
        sentence_lengths: the length each sentence counts for in buckets and the budget, when its
            cost is not its token count (a fine-tuned encoder's word pieces: a batch of 2,000
            one-word sentences that are URLs is 2,000 × 40 pieces); at least the token count is used.
            None counts tokens.

    Returns:
        ``(dataset, report)``.
    """
    if token_budget < 1:
        raise ValueError(f"token_budget must be >= 1, found {token_budget}")
    examples, report = encode(sentences, vocabs, layout, unknown_labels)
    if not examples:
        raise ValueError(f"no examples to batch: {report.sentences} sentences, layout {layout!r}")
    lengths = [e["length"] for e in examples]
    if sentence_lengths is not None:
        if len(sentence_lengths) != len(sentences):
            raise ValueError(f"sentence_lengths has {len(sentence_lengths)} entries for {len(sentences)} sentences")
        lengths = [max(e["length"], int(sentence_lengths[e["sentence_index"]])) for e in examples]
    longest = max(lengths)
    if boundaries is None:
        boundaries = length_buckets(longest, bucket_growth)
    boundaries = [int(b) for b in boundaries]
    if any(b <= a for a, b in zip(boundaries, boundaries[1:])) or not boundaries or boundaries[0] < 1:
        raise ValueError(f"bucket boundaries must be positive and increasing, found {boundaries}")
    sizes = bucket_batch_sizes(boundaries, token_budget, longest, batch_multiple)
    report.token_budget = token_budget
    report.bucket_boundaries = boundaries
    report.bucket_batch_sizes = sizes
    report.over_budget_examples = sum(length > token_budget for length in lengths)

    # Batches are formed from (index, length) pairs and their features gathered afterwards: the
    # batches before ``start`` are neither bucketed (see resume_point) nor gathered nor preprocessed.
    if start and not repeat:
        raise ValueError("start needs repeat=True")
    if start:
        first, pending = resume_point(lengths, boundaries, sizes, start, seed, shuffle)
        order = tf.data.Dataset.from_tensor_slices(pending).concatenate(
            example_order(len(examples), seed, shuffle, repeat, first=first))
    else:
        order = example_order(len(examples), seed, shuffle, repeat)
    length_column = tf.constant(lengths, dtype=tf.int32)
    dataset = order.map(lambda index: {"index": index, "length": tf.gather(length_column, index)})
    dataset = dataset.bucket_by_sequence_length(
        element_length_func=lambda example: example["length"],
        bucket_boundaries=boundaries,
        bucket_batch_sizes=sizes,
        drop_remainder=False,
    )
    dataset = dataset.map(_gather_batch(_ragged_columns(examples, layout)),
                          num_parallel_calls=tf.data.AUTOTUNE, deterministic=True)
    if preprocess is not None:
        dataset = dataset.map(preprocess, num_parallel_calls=tf.data.AUTOTUNE, deterministic=True)
    if prefetch:
        dataset = dataset.prefetch(tf.data.AUTOTUNE)
    options = tf.data.Options()
    options.deterministic = True
    dataset = dataset.with_options(options)
    report.features = sorted(dataset.element_spec)
    return dataset, report
