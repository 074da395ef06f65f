"""Raw text or tokens in, labelled frames out: ``lisa_tf.load(PATH).predict(...)``.

``load`` takes a run directory (its ``model.keras``), a ``.keras`` file, a SavedModel export (a
version directory, or a base directory whose highest numbered version is used) or a packaged model
(``models/srl``, the default when no path is given) and returns a :class:`Predictor`: for a packaged
model whose export has been built into the cache (:mod:`lisa_tf.packages.export_cache`), an
:class:`ExportPredictor` over that export, which gives the same frames and starts seconds sooner.
``predict`` returns plain, JSON-serialisable data, one dict per sentence::

    {"text": "The cat sat on the mat.",
     "tokens": [{"text": "The", "start": 0, "end": 3, "pos": "DT", "head": 2, "deprel": "det"}, ...],
     "predicates": [{"token": 2, "text": "sat", "start": 8, "end": 11,
                     "arguments": [{"role": "ARG0", "token_start": 0, "token_end": 2, "start": 0,
                                    "end": 7, "text": "The cat", "score": 0.5781}, ...],
                     "description": "[ARG0: The cat] [V: sat] [ARG2: on the mat] ."}]}

A model with a sense head (trained on data with a sense column, as PropBank-EWT's) adds each
predicate's roleset and what it and its arguments mean, from a PropBank frame index
(:mod:`lisa_tf.decoding.frame_meanings`; the shipped ``data/propbank-frames``, with a user's own index merged
over it by ``load(..., frames=PATH)``: its meanings win, and its lemmas' rolesets become senses of their
words, :mod:`lisa_tf.decoding.own_frames`)::

    {"token": 2, "text": "barked", ..., "sense": "bark.01", "sense_source": "model",
     "sense_name": "vocalize like a dog",
     "arguments": [{"role": "ARG0", ..., "text": "The dog", "score": 0.91, "description": "barker",
                    "function_tag": "PAG", "vn_role": "agent"}, ...],
     "description": "[ARG0 barker: The dog] [V: barked] [ARG2 hearer: at the mailman] ."}

``sense_source`` is ``"model"``, ``"frame_index"`` (a fallback the model does not know) or ``"none"``
(``sense`` null); ``sense_name`` is null where the index lacks the roleset; an argument's
``description``, ``function_tag`` and ``vn_role`` are left out where unknown (see
:mod:`lisa_tf.decoding.frame_meanings`). A model without a sense head gives none of these keys.

Character offsets (``start``/``end``) index the text given, ends exclusive; token spans
(``token_start``/``token_end``) likewise. ``pos``, ``head`` (CoNLL-U: 1-based, 0 = root) and ``deprel``
(its UD dependency label) appear when the model predicts them (LISA; SA predicts ``pos``). An argument's ``score`` is the mean probability of its tags.

Text is split into sentences and tokenised with :mod:`data_pipeline.tokenizer` (UD English-EWT
conventions). Prediction runs in batches of at most ``token_budget`` padded tokens.

Sizes are bounded before any work (:mod:`data_pipeline.input_limits`, the policy the server applies too): a
paragraph over a million characters, or a sentence longer than the model's longest training sentence
(``max_sentence_tokens``), raises :class:`~data_pipeline.input_limits.InputTooLong`. With
``over_limit="skip"`` it is returned unlabelled instead, with ``"skipped": {"reason": ..., "input": i}``
(``i`` indexes the paragraphs, texts or token lists given), and the other sentences are labelled.

Loading a SavedModel runs the graph it holds (a SavedModel is a program), so give ``load`` only
model directories you trust; ``.keras`` files are read in Keras' safe mode, which runs no Python code.
"""

from __future__ import annotations

import functools
import json
import os
import pathlib
import threading
import weakref
from typing import Iterable, Iterator, Optional, Sequence, Union

import numpy as np

from data_pipeline.dataset import pack_by_length
from data_pipeline.errors import UserError
from data_pipeline.predicate_kinds import NO_POS_TAGS, check_kind, verbal_only
from data_pipeline.input_limits import (InputTooLong, max_tokens_per_sentence, model_max_tokens_per_sentence,
                                        paragraph_too_long, run_too_long, sentence_too_long)
from data_pipeline.sentence import Predicate, Sentence, Span
from data_pipeline.spans import bio_to_spans
from data_pipeline.tokenizer import Token, sentences as split_and_tokenize, tokenize
from lisa_tf.packages.export_cache import latest_version
from lisa_tf.packages.finding import KERAS_FILE as MODEL_FILE
from lisa_tf.util.graph_passes import without_idle_passes

# The Keras side (lisa_tf.labelling.batches, lisa_tf.models.runs: Keras and the model classes, ~1.5 s to import) is imported
# where a Keras model is used, so a process that labels through an export never loads Keras.


class PredictionInputError(UserError):
    """An argument of ``predict`` is wrong: names the argument, the sentence and what was expected."""


def _tokens_of_words(words: Sequence[str]) -> list[Token]:
    """Tokens with the offsets they have in ``" ".join(words)``."""
    out, at = [], 0
    for word in words:
        out.append(Token(word, at, at + len(word)))
        at += len(word) + 1
    return out


def describe(tokens: Sequence[Token], position: int, spans: Sequence[Span],
             shown: Optional[dict[Span, str]] = None) -> str:
    """``[ARG0: The cat] [V: sat] [ARGM-LOC: on the mat] .`` (spans inclusive, non-overlapping);
    ``shown``: the label to print for a span instead of its role (``ARG0 barker``:
    :func:`lisa_tf.decoding.frame_meanings.shown_role`).

    The decoder tags the predicate's own token like any other, so an argument may cover it
    (``[ARG1: The company [V: said] it expects]``); the predicate is then marked inside that
    argument, never dropped from the description (the demo page draws it the same way)."""
    shown = shown or {}

    def words(span: Span) -> str:
        return " ".join(f"[V: {tokens[k].text}]" if k == position and span.label != "V" else tokens[k].text
                        for k in range(span.start, span.end + 1))

    starts = {span.start: span for span in spans}
    if not any(span.start <= position <= span.end for span in spans):
        starts[position] = Span(position, position, "V")
    parts, i = [], 0
    while i < len(tokens):
        span = starts.get(i)
        if span is None:
            parts.append(tokens[i].text)
            i += 1
        else:
            parts.append(f"[{shown.get(span, span.label)}: {words(span)}]")
            i = span.end + 1
    return " ".join(parts)


def frame(text: str, tokens: Sequence[Token], predicates, pos=None, heads=None, deprels=None,
          frames: Optional[str | os.PathLike] = None) -> dict:
    """One sentence's plain-data result (module docstring).

    Args:
        text: the text the token offsets index.
        tokens: the sentence's tokens.
        predicates: ``(position, argument spans without V, per-token tag probabilities)`` triples, or
            ``(..., sense)`` 4-tuples: ``sense`` None (a model without senses) or ``(roleset id, source)``
            (:mod:`lisa_tf.decoding.frame_meanings`), which adds the predicate's sense and the meanings.
        pos, heads, deprels: predicted POS tags, CoNLL-U heads and dependency labels, or None.
        frames: the frame index the meanings are read from (None: the shipped one); loaded on the
            first sense.
    """
    from lisa_tf.decoding import frame_meanings


    start = tokens[0].start if tokens else 0
    end = tokens[-1].end if tokens else 0
    token_rows = []
    for i, token in enumerate(tokens):
        row = {"text": token.text, "start": token.start, "end": token.end}
        if pos is not None:
            row["pos"] = str(pos[i])
        if heads is not None:
            row["head"] = int(heads[i])
        if deprels is not None:
            row["deprel"] = str(deprels[i])
        token_rows.append(row)
    rows = []
    for position, spans, probs, *rest in predicates:
        sense = rest[0] if rest else None
        arguments = [
            {
                "role": span.label,
                "token_start": span.start,
                "token_end": span.end + 1,
                "start": tokens[span.start].start,
                "end": tokens[span.end].end,
                "text": text[tokens[span.start].start : tokens[span.end].end],
                "score": round(float(np.mean(probs[span.start : span.end + 1])), 4),
            }
            for span in spans
        ]
        token = tokens[position]
        entry = {"token": position, "text": token.text, "start": token.start, "end": token.end}
        shown = None
        if sense is not None:
            index = frame_meanings.meanings_index(frames)
            entry.update(frame_meanings.sense_fields(index, *sense))
            for argument in arguments:
                argument.update(frame_meanings.role_meaning(index, entry["sense"] or "", argument["role"]))
            shown = {span: frame_meanings.shown_role(argument) for span, argument in zip(spans, arguments)}
        entry.update(arguments=arguments, description=describe(tokens, position, spans, shown))
        rows.append(entry)
    return {"text": text[start:end], "tokens": token_rows, "predicates": rows}


def unlabelled(text: str, tokens: Sequence[Token], skipped: Optional[dict] = None) -> dict:
    """The result of a sentence that is not sent to the model: empty, or ``skipped`` (why, and which
    input it came from)."""
    result = frame(text, tokens, [])
    if skipped:
        result["skipped"] = skipped
    return result


def _check_predicates(predicates, count: int, lengths: Sequence[int]) -> list[list[int]]:
    if len(predicates) != count:
        raise PredictionInputError(f"predicates: expected one list of token indices per sentence ({count}), found {len(predicates)}")
    checked = []
    for s, (row, n) in enumerate(zip(predicates, lengths)):
        for k, index in enumerate(row):
            if not isinstance(index, (int, np.integer)) or not 0 <= index < n:
                raise PredictionInputError(
                    f"predicates[{s}][{k}]: expected a token index in 0..{n - 1} (sentence {s} has {n} tokens), found {index!r}"
                )
        checked.append(sorted(set(int(i) for i in row)))
    return checked


def _check_parse(parse, count: int, lengths: Sequence[int]) -> list[list[int]]:
    if len(parse) != count:
        raise PredictionInputError(f"parse: expected one list of heads per sentence ({count}), found {len(parse)}")
    for s, (heads, n) in enumerate(zip(parse, lengths)):
        if len(heads) != n:
            raise PredictionInputError(f"parse[{s}]: expected {n} heads (one per token), found {len(heads)}")
        for i, head in enumerate(heads):
            if not isinstance(head, (int, np.integer)) or not 0 <= head <= n:
                raise PredictionInputError(f"parse[{s}][{i}]: expected a CoNLL-U head in 0..{n} (0 = root), found {head!r}")
    return [list(map(int, heads)) for heads in parse]


def _positive(value, name: str) -> int:
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or value < 1:
        raise PredictionInputError(f"{name}: expected a positive whole number, found {value!r}")
    return int(value)


def _skipped(reason: str, index: int) -> dict:
    return {"reason": reason, "input": index}


def prepare(text=None, *, tokens=None, paragraphs=None, over_limit: str = "raise",
            max_sentence_tokens: int) -> list:
    """Split, tokenise and check the input of :meth:`Predictor.predict` (same arguments; the
    sentence limit ``max_sentence_tokens``) in plain Python, without a model: a thread may prepare
    the next input while the model labels this one (``predict --input``), and a corpus pipeline
    prepares sentences on other workers than the model's (:mod:`lisa_tf.labelling.corpus`). Returns
    what :meth:`Predictor.label` takes: ``(text, tokens, skipped)`` per sentence, ``skipped`` None or
    why it is not labelled."""
    if sum(x is not None for x in (text, tokens, paragraphs)) != 1:
        raise PredictionInputError("give one of text (a string or a list of sentence strings), tokens=[[...], ...] "
                                   "or paragraphs=[...]")
    if over_limit not in ("raise", "skip"):
        raise PredictionInputError(f"over_limit: expected 'raise' or 'skip', found {over_limit!r}")
    if isinstance(text, str):
        paragraphs, name = [text], "text"
    else:
        name = "paragraphs" if paragraphs is not None else "text"
    rows = []  # (input index, where, text, tokens, why it is refused or None)
    if tokens is not None:
        for i, row in enumerate(tokens):
            words = list(map(str, row))
            rows.append((i, f"tokens[{i}]", " ".join(words), _tokens_of_words(words), None))
    else:
        for i, item in enumerate(paragraphs if paragraphs is not None else text):
            item, where = str(item), name if isinstance(text, str) else f"{name}[{i}]"
            # before the tokeniser holds copies of it, or spends seconds on a run no sentence can hold
            reason = paragraph_too_long(len(item)) or run_too_long(item, max_sentence_tokens)
            if reason:
                rows.append((i, where, "", [], reason))
                continue
            pieces = split_and_tokenize(item) if paragraphs is not None else [tokenize(item)]
            rows.extend((i, f"{where} sentence {k + 1}" if paragraphs is not None else where, item, toks, None)
                        for k, toks in enumerate(pieces))
    inputs = []
    for index, where, text_, toks, reason in rows:
        reason = reason or sentence_too_long(len(toks), max_sentence_tokens)
        if reason and over_limit == "raise":
            raise InputTooLong(f"{where}: {reason}")
        inputs.append((text_, toks, _skipped(reason, index) if reason else None))
    return inputs


class Predictor:
    """Labels sentences with a loaded model (see the module docstring).

    Args:
        model: an :class:`~lisa_tf.models.base.SrlModel`.
        token_budget: most padded tokens per batch.
        max_sentence_tokens: the longest sentence labelled (:mod:`data_pipeline.input_limits`; ``None``: the
            fallback, as for a ``.keras`` file that records no training data sizes).
        frames: a user's own frame index merged over the shipped one (``None``: the shipped one alone): the
            senses' meanings (:mod:`lisa_tf.decoding.frame_meanings`, read when the first sense is labelled)
            and the model's word-form lexicon (:func:`lisa_tf.models.runs.with_frames`, merged here).
        constraints: decode each frame under PropBank's constraints (default; one of each core role,
            ``C-``/``R-`` after their role, only the roleset's core roles:
            :mod:`lisa_tf.decoding.frame_viterbi`); False: the plain BIO Viterbi.
    """

    def __init__(self, model, token_budget: int = 4096, max_sentence_tokens: Optional[int] = None,
                 frames: Optional[str | os.PathLike] = None, constraints: bool = True):
        from lisa_tf.decoding.frame_meanings import check_frames
        from lisa_tf.models.runs import with_frames

        self.frames = check_frames(frames)
        self.model = with_frames(model, self.frames)  # the user's lemmas among the sense candidates
        self.constraints = bool(constraints)
        self.token_budget = _positive(token_budget, "token_budget")
        self.max_sentence_tokens = _positive(max_tokens_per_sentence() if max_sentence_tokens is None
                                             else max_sentence_tokens, "max_sentence_tokens")

    @property
    def tells_verbs(self) -> bool:
        """Whether the frames carry the POS tags that tell verbs (a sentence-layout model: LISA, SA)."""
        return self.model.layout == "sentence"

    def check_predicates(self, kind: str) -> str:
        """``kind`` (``"all"`` or ``"verbal"``) when this model can keep those predicates; a
        :class:`PredictionInputError` otherwise (before anything is labelled)."""
        try:
            check_kind(kind)
        except ValueError as error:
            raise PredictionInputError(str(error)) from None
        if kind == "verbal" and not self.tells_verbs:
            raise PredictionInputError(f"predicates 'verbal': {NO_POS_TAGS}; label all predicates, or give them by index")
        return kind

    def prepare(self, text=None, *, tokens=None, paragraphs=None, over_limit: str = "raise") -> list:
        """The first half of :meth:`predict` (same arguments): :func:`prepare` with this predictor's
        sentence limit. Returns what :meth:`label` takes."""
        return prepare(text, tokens=tokens, paragraphs=paragraphs, over_limit=over_limit,
                       max_sentence_tokens=self.max_sentence_tokens)

    def predict(
        self,
        text: Union[str, Sequence[str], None] = None,
        *,
        tokens: Optional[Sequence[Sequence[str]]] = None,
        predicates: Union[str, Sequence[Sequence[int]], None] = None,
        parse: Optional[Sequence[Sequence[int]]] = None,
        paragraphs: Optional[Sequence[str]] = None,
        over_limit: str = "raise",
    ) -> list[dict]:
        """Label ``text`` (a paragraph: split into sentences; or a list of sentences) or ``tokens``
        (pre-tokenised sentences). ``predicates``: ``"all"`` (default) the predicates the model
        finds, ``"verbal"`` its verb frames only (:mod:`data_pipeline.predicate_kinds`: no nominal
        predicates, no auxiliaries), or token indices per sentence to label those; ``parse``: CoNLL-U heads per sentence, injected into LISA's
        syntax head. ``paragraphs``: several paragraphs, each split into sentences (offsets index its
        paragraph), labelled in shared batches. ``over_limit``: ``"raise"`` (default) refuses a
        paragraph or sentence over its limit with :class:`~data_pipeline.input_limits.InputTooLong`,
        ``"skip"`` returns it unlabelled with ``"skipped"`` (module docstring). Returns one dict per
        sentence (module docstring)."""
        return self.label(self.prepare(text, tokens=tokens, paragraphs=paragraphs, over_limit=over_limit),
                          predicates=predicates, parse=parse)

    def label(self, inputs: list, predicates=None, parse=None) -> list[dict]:
        """The second half of :meth:`predict`: label what :meth:`prepare` returned (``predicates`` and
        ``parse`` as for :meth:`predict`); one dict per sentence."""
        from lisa_tf.util.native_logs import without_onednn_note

        with without_onednn_note("label"):  # a first model call logs oneDNN's note on int32 kernels
            return self._label_inputs(inputs, predicates, parse)

    def _label_inputs(self, inputs: list, predicates=None, parse=None) -> list[dict]:
        kind = "all"
        if isinstance(predicates, str):
            kind, predicates = self.check_predicates(predicates), None
        results = self._label(inputs, predicates, parse)
        if kind == "verbal":
            try:
                return verbal_only(results)
            except ValueError as error:
                raise PredictionInputError(str(error)) from None
        return results

    def _label(self, inputs: list, predicates=None, parse=None) -> list[dict]:
        lengths = [len(toks) for _, toks, _ in inputs]
        model = self.model
        if predicates is not None:
            predicates = _check_predicates(predicates, len(inputs), lengths)
        elif model.layout == "predicate" and not model.predicts_predicates:
            raise PredictionInputError(
                f"predicates: this {model.name} model has no predicate identifier and labels given predicates only; "
                "pass predicates=[[token index, ...], ...]"
            )
        if parse is not None:
            if not getattr(model, "uses_syntax", False):
                raise PredictionInputError(f"parse: this {model.name} model has no syntax head to inject a parse into (LISA has)")
            parse = _check_parse(parse, len(inputs), lengths)
        batch, where = [], []
        for s, (_, toks, skipped) in enumerate(inputs):
            if not toks or skipped:
                continue  # an empty or skipped sentence: returned unlabelled, never sent to the model
            given = predicates[s] if predicates is not None else []
            words = [t.text for t in toks]
            batch.append(Sentence(words=words, heads=parse[s] if parse is not None else None,
                                  predicates=[Predicate(p, words[p].lower()) for p in given], line=s + 1))
            where.append(s)
        options = {"constraints": self.constraints}
        if getattr(model, "uses_syntax", False):
            options["inject_parse"] = parse is not None
        if getattr(model, "predicts_predicates", False):
            options["gold_predicates"] = predicates is not None
        from lisa_tf.labelling.batches import label_sentences

        labelled, probs = label_sentences(model, batch, token_budget=self.token_budget, **options) if batch else ([], [])
        results = [unlabelled(*item) for item in inputs]
        for s, sentence, tag_probs in zip(where, labelled, probs):
            text_, toks, _ = inputs[s]
            rows = [
                (p.position, [a for a in p.arguments if a.label not in ("V", "C-V")], tag_probs[p.position],
                 model_sense(p))
                for p in sentence.predicates
            ]
            own = model.layout == "sentence"  # POS and heads are predicted in the sentence layout only
            results[s] = frame(text_, toks, rows, *((sentence.pos, sentence.heads, sentence.dep_labels) if own else ()),
                               frames=self.frames)
        return results


def model_sense(predicate: Predicate) -> Optional[tuple[str, str]]:
    """The sense of a predicate the Keras model labelled, as :func:`frame` takes it: None without a
    sense head, else ``(its roleset or "", its source)`` (:mod:`lisa_tf.decoding.sense_choice`)."""
    if predicate.sense_source is None:
        return None
    return predicate.sense or "", predicate.sense_source


class NoKerasModelError(UserError):
    """``model`` of an :class:`ExportPredictor` whose export has no ``.keras`` model to read: names the
    export and the file looked for."""


#: The exports loaded in this process, each while a predictor holds it (:func:`shared_export`).
_LOADED_EXPORTS: "weakref.WeakValueDictionary" = weakref.WeakValueDictionary()
_LOADING_EXPORTS = threading.Lock()


def shared_export(path: str | os.PathLike):
    """``tf.saved_model.load(path)``, one object for every predictor of the same export while any of them
    holds it: a second predictor of an export (a spaCy pipeline's second ``lisa_srl`` pipe, a notebook cell
    run again while the first predictor lives) starts at once, with the graphs the first one's calls have
    optimised, and the process holds the export's weights once. Labelling only reads a loaded export. An
    export directory whose ``saved_model.pb`` changed is loaded anew; one nothing holds is freed."""
    import tensorflow as tf

    path = str(path)
    try:
        stat = os.stat(os.path.join(path, "saved_model.pb"))
    except OSError:
        return tf.saved_model.load(path)  # not a SavedModel directory: TensorFlow's own error
    key = (os.path.realpath(path), stat.st_mtime_ns, stat.st_size, stat.st_ino)
    with _LOADING_EXPORTS:
        loaded = _LOADED_EXPORTS.get(key)
        if loaded is None:
            loaded = _LOADED_EXPORTS[key] = tf.saved_model.load(path)
    return loaded


class ExportPredictor(Predictor):
    """A :class:`Predictor` over a SavedModel export's signatures (no Keras model needed to label).

    Sentences go to the signatures in batches packed by length within ``token_budget`` padded tokens
    (:func:`~data_pipeline.dataset.pack_by_length`), padded with ``""`` (the exports' padding) and,
    for a given parse, heads of ``-1``; each row's outputs are cut back to its sentence.

    Args:
        path: the export's version directory.
        max_sentence_tokens, token_budget, frames: as for :class:`Predictor` (``frames`` gives the
            meanings; the senses are chosen with the lexicon the export was built with).
        constraints: whether the export decodes under the frame constraints. An export records no such
            flag and decodes as it was exported (``export`` with the constraints unless
            ``--no-constraints``), so this says what the caller knows; a package's cached export is
            always built with them.
        keras_file: the ``.keras`` model the export was built from, read by :attr:`model` (default: a
            ``model.keras`` beside the version directory, in its base directory).
    """

    def __init__(self, path: str | os.PathLike, max_sentence_tokens: Optional[int] = None, token_budget: int = 4096,
                 frames: Optional[str | os.PathLike] = None, constraints: bool = True,
                 keras_file: Optional[str | os.PathLike] = None):
        import tensorflow as tf

        from lisa_tf.decoding.frame_meanings import check_frames

        self.frames = check_frames(frames)
        self.constraints = bool(constraints)
        self.keras_file = pathlib.Path(keras_file) if keras_file is not None else pathlib.Path(path).parent / MODEL_FILE
        self.token_budget = _positive(token_budget, "token_budget")
        self.max_sentence_tokens = _positive(model_max_tokens_per_sentence(path) if max_sentence_tokens is None
                                             else max_sentence_tokens,
                                             "max_sentence_tokens")
        self.path = str(path)
        config = pathlib.Path(path) / "assets" / "config.json"
        if config.exists() and json.loads(config.read_text(encoding="utf-8"))["model"].get("contextual"):
            import tensorflow_text  # noqa: F401  (the encoder's word-piece tokenizer ops, registered on import)
        self.loaded = shared_export(self.path)
        self.signature = self.loaded.signatures["serving_default"]
        self.takes_predicates = "predicate_index" in self.signature.structured_input_signature[1]
        self.finds_predicates = not self.takes_predicates or "find_predicates" in self.loaded.signatures
        self.uses_syntax = "with_parse" in self.loaded.signatures

    @property
    def tells_verbs(self) -> bool:
        return "pos" in self.signature.structured_outputs

    @functools.cached_property
    def model(self):
        """The Keras model the export was built from, read from ``keras_file`` on first use (labelling
        never reads it) with the user's own frames merged as :class:`Predictor` merges them, for code that
        inspects or exports the model.

        Raises:
            NoKerasModelError: there is no such file (an export given by its path rarely has one beside it;
                load the run or the ``.keras`` file instead).
        """
        if not self.keras_file.is_file():
            raise NoKerasModelError(f"{self.path}: a SavedModel export, which holds no Keras model, and no {MODEL_FILE} "
                                    f"beside it ({self.keras_file}); load the run or the .keras file it was exported "
                                    "from to read its model")
        from lisa_tf.models.runs import load_model_file, with_frames
        from lisa_tf.util.native_logs import without_onednn_note

        with without_onednn_note("load"):
            return with_frames(load_model_file(self.keras_file), self.frames)

    def srl_tags(self) -> list[str]:
        """The export's SRL tags (its ``assets/srl_labels.tsv``: the training data's BIO tags)."""
        path = pathlib.Path(self.path) / "assets" / "srl_labels.tsv"
        return [line.split("\t")[0] for line in path.read_text(encoding="utf-8").splitlines() if line]

    def _run(self, rows: Sequence[Sequence[str]], **extra) -> Iterator[tuple[int, dict]]:
        """``(row index, {output: that row's numpy value})`` for every row, run in packed batches;
        ``extra``: per-row inputs besides the tokens (``predicate_index``, ``parse_heads``)."""
        import tensorflow as tf

        if "parse_heads" in extra:
            function = self.loaded.signatures["with_parse"]
        elif self.takes_predicates and "predicate_index" not in extra:
            function = self.loaded.signatures["find_predicates"]
        else:
            function = self.signature
        for index in pack_by_length([len(row) for row in rows], self.token_budget):
            width = max(len(rows[i]) for i in index)
            inputs = {"tokens": tf.constant([list(rows[i]) + [""] * (width - len(rows[i])) for i in index])}
            if "parse_heads" in extra:
                heads = [list(extra["parse_heads"][i]) + [-1] * (width - len(rows[i])) for i in index]
                inputs["parse_heads"] = tf.constant(heads, tf.int32)
            if "predicate_index" in extra:
                inputs["predicate_index"] = tf.constant([extra["predicate_index"][i] for i in index], tf.int32)
            with without_idle_passes():
                out = {k: v.numpy() for k, v in function(**inputs).items()}
            for b, i in enumerate(index):
                yield int(i), {k: v[b] for k, v in out.items()}

    def _label(self, inputs: list, predicates=None, parse=None) -> list[dict]:
        lengths = [len(toks) for _, toks, _ in inputs]
        if predicates is not None:
            predicates = _check_predicates(predicates, len(inputs), lengths)
        elif not self.finds_predicates:
            raise PredictionInputError("predicates: this export has no predicate identifier and labels given predicates "
                                       "only; pass predicates=[[...], ...]")
        if parse is not None:
            if not self.uses_syntax:
                raise PredictionInputError("parse: this export has no with_parse signature (LISA exports have)")
            parse = _check_parse(parse, len(inputs), lengths)
        results = [unlabelled(*item) for item in inputs]
        labelled = [s for s, (_, toks, skipped) in enumerate(inputs) if toks and not skipped]
        words = {s: [t.text for t in inputs[s][1]] for s in labelled}
        if self.takes_predicates and predicates is not None:
            pairs = [(s, position) for s in labelled for position in predicates[s]]
            rows_of: dict = {s: [] for s in labelled}
            found = self._run([words[s] for s, _ in pairs], predicate_index=[position for _, position in pairs])
            for k, out in sorted(found):
                s, position = pairs[k]
                n = lengths[s]
                tags = [t.decode() for t in out["srl_tags"][:n]]
                rows_of[s].append((position, [a for a in bio_to_spans(tags) if a.label not in ("V", "C-V")],
                                   out["srl_scores"][:n], export_sense(out)))
            for s in labelled:
                results[s] = frame(inputs[s][0], inputs[s][1], rows_of[s], frames=self.frames)
            return results
        extra = {"parse_heads": [parse[s] for s in labelled]} if parse is not None else {}
        for k, out in self._run([words[s] for s in labelled], **extra):
            s = labelled[k]
            n = lengths[s]
            rows = []
            for p, position in enumerate(out["predicate_positions"]):
                if position < 0 or (predicates is not None and int(position) not in predicates[s]):
                    continue
                tags = [t.decode() for t in out["srl_tags"][p][:n]]
                rows.append((int(position), [a for a in bio_to_spans(tags) if a.label not in ("V", "C-V")],
                             out["srl_scores"][p][:n], export_sense(out, p)))
            pos = [t.decode() for t in out["pos"][:n]] if "pos" in out else None
            heads = list(out["heads"][:n]) if "heads" in out else None
            deprels = [t.decode() for t in out["dep_labels"][:n]] if "dep_labels" in out else None
            results[s] = frame(inputs[s][0], inputs[s][1], rows, pos, heads, deprels, frames=self.frames)
        return results


def export_sense(out: dict, p: Optional[int] = None) -> Optional[tuple[str, str]]:
    """The sense of a predicate an export labelled, as :func:`frame` takes it, from one row of its
    ``senses`` and ``sense_sources`` outputs (predicate ``p`` of a sentence row, or the predicate-layout
    row itself): None for an export without senses."""
    if "senses" not in out:
        return None
    sense, source = (out["senses"], out["sense_sources"]) if p is None else (out["senses"][p], out["sense_sources"][p])
    return sense.decode(), source.decode()


class ParserModelError(UserError):
    """``predict`` was given the dependency parser, which labels no semantic roles: names the path and
    the command that parses."""

    def __init__(self, path):
        super().__init__(f"{path}: a dependency parser (model.kind = parser), which labels no semantic roles; "
                         f"parse with `python -m lisa_tf parse {path} --input FILE`")


def ahead(items, depth: int = 2):
    """``items`` as they come, produced by a thread that runs up to ``depth`` items ahead: the next
    chunk is read and tokenised (Python) while the model labels this one (TensorFlow runs without the
    GIL), so both cores work. An exception in the thread is raised here, where the item was due."""
    import queue
    import threading

    slots: queue.Queue = queue.Queue(maxsize=depth)
    stop = threading.Event()

    def offer(entry) -> bool:
        """Queue ``entry`` unless the consumer has stopped; whether it was queued."""
        while not stop.is_set():
            try:
                slots.put(entry, timeout=0.1)
                return True
            except queue.Full:
                continue
        return False

    def produce():
        try:
            for item in items:
                if not offer(("item", item)):
                    return
            offer(("end", None))
        except BaseException as error:  # noqa: BLE001 - handed to the consumer, raised there
            offer(("error", error))

    thread = threading.Thread(target=produce, name="read-ahead", daemon=True)
    thread.start()
    try:
        while True:
            kind, value = slots.get()
            if kind == "end":
                return
            if kind == "error":
                raise value
            yield value
    finally:
        stop.set()


def label_units(predictor: "Predictor", units: Iterable[tuple], predicates: str = "all", chunk: int = 256,
                failures: bool = False) -> Iterator[list]:
    """Label a stream of units (paragraphs, or sentences of tokens) ``chunk`` at a time: what
    ``predict --input`` and ``label-corpus`` run. A thread reads and prepares the next chunk
    (:func:`ahead`) while the model labels this one, so memory holds two chunks whatever the stream.

    Args:
        predictor: labels the sentences (:meth:`Predictor.prepare`, :meth:`Predictor.label`).
        units: ``(source, unit, heads, skipped, line)`` each, read lazily: ``unit`` a paragraph's text,
            or a list of tokens (one sentence); ``heads`` the sentence's parse or None; ``skipped``
            None, or why the unit cannot be labelled; ``source`` and ``line`` are the caller's.
        predicates: ``"all"`` or ``"verbal"`` (:meth:`Predictor.label`).
        chunk: units per model call.
        failures: a chunk whose labelling raises gives each of its sentences ``{"skipped": {"reason":
            "labelling failed: ..."}}`` instead of raising.

    Yields:
        a list per chunk of ``(unit tuple, results)``: ``results`` None for a skipped unit, ``[]`` for
        a blank one, else one dict per sentence of the unit, in order (a sentence over the limit as
        ``{"skipped": {...}}``).
    """
    import itertools

    def prepared():
        stream = iter(units)
        while True:
            block = list(itertools.islice(stream, chunk))
            if not block:
                return
            inputs, owners = [], []
            for k, (_, unit, _, skipped, _) in enumerate(block):
                if skipped:
                    continue
                given = {"tokens": [unit]} if isinstance(unit, list) else {"paragraphs": [unit]}
                sentences = predictor.prepare(**given, over_limit="skip")
                inputs += sentences
                owners += [k] * len(sentences)
            yield block, inputs, owners

    for block, inputs, owners in ahead(prepared()):
        parse = [block[k][2] for k in owners] if any(block[k][2] is not None for k in owners) else None
        try:
            results = predictor.label(inputs, predicates=predicates, parse=parse) if inputs else []
        except Exception as error:  # noqa: BLE001 - the caller asked for failures as skipped sentences
            if not failures:
                raise
            results = [{"skipped": {"reason": f"labelling failed: {type(error).__name__}: {error}"}}] * len(inputs)
        of_unit: dict = {}
        for k, result in zip(owners, results):
            of_unit.setdefault(k, []).append(result)
        yield [(unit, None if unit[3] else of_unit.get(k, [])) for k, unit in enumerate(block)]


def load(path: str | os.PathLike | None = None, token_budget: int = 4096,
         max_sentence_tokens: Optional[int] = None, prefer_export: bool = True,
         frames: Optional[str | os.PathLike] = None, constraints: bool = True) -> Predictor:
    """A :class:`Predictor` for a run directory, a ``.keras`` file, a SavedModel export or a packaged
    model (:mod:`lisa_tf.packages.finding`) of an SRL model, also by its name (``"srl"``); without ``path``,
    the shipped model (``models/srl``).

    A SavedModel is a program: loading it runs its graph. Give ``load`` only directories you trust.

    Args:
        path: the model (see above).
        token_budget: most padded tokens per batch.
        max_sentence_tokens: the longest sentence to label; default: the model's longest training
            sentence where the path records it (:mod:`data_pipeline.input_limits`).
        prefer_export: a packaged model whose SavedModel export has been built into the cache (by
            ``predict`` or ``serve``, on their first start: :mod:`lisa_tf.packages.export_cache`) with these
            ``frames`` is labelled through it (default): an :class:`ExportPredictor`, which gives the same
            frames and starts seconds sooner (no Keras model built, no graph traced); its ``model`` reads
            the package's ``.keras`` file on first use. Without a built export, the ``.keras`` model
            labels; ``load`` builds none. False: always the ``.keras`` model (a :class:`Predictor`).
        frames: a user's own PropBank frame index, merged over the shipped ``data/propbank-frames/frames.json.gz``
            (default: that alone) for a model with a sense head: the meanings
            (:mod:`lisa_tf.decoding.frame_meanings`) and the senses of the lemmas it adds
            (:mod:`lisa_tf.decoding.own_frames`). A SavedModel export chooses senses with the lexicon it
            was exported with (``export --frames``); a package labelled through its cached export uses
            the export built with these frames (:mod:`lisa_tf.packages.export_cache`).
        constraints: decode under the frame constraints (:class:`Predictor`); exports decode as they
            were exported (``export --no-constraints``), so ``False`` with an export path raises
            :class:`PredictionInputError`, and a package is then labelled through its ``.keras`` model.

    Raises:
        ParserModelError: the path holds the dependency parser or its export.
        FrameIndexError: ``frames`` names no file.
    """
    from lisa_tf.decoding.frame_meanings import check_frames
    from lisa_tf.packages.finding import is_package, model_path

    _positive(token_budget, "token_budget")
    check_frames(frames)
    path = model_path(path, "srl")
    # 0 is refused as any other value that is no positive whole number, not read as "the default"
    limit = model_max_tokens_per_sentence(path) if max_sentence_tokens is None else _positive(
        max_sentence_tokens, "max_sentence_tokens")
    package = is_package(path)
    export = None
    if package and prefer_export and constraints:  # the cached export is built with the constraints
        from lisa_tf.packages.export_cache import labelling_export

        export = labelling_export(path, frames)
    from lisa_tf.util.native_logs import without_onednn_note

    if export is None and (package or path.is_file() and path.suffix == ".keras" or (path / MODEL_FILE).exists()):
        from lisa_tf.models import DependencyParser
        from lisa_tf.models.runs import load_model_file, load_run

        with without_onednn_note("load"):  # building a model with a contextual encoder runs int32 ops
            model = load_model_file(path / MODEL_FILE if package else path) if package or path.is_file() else load_run(path)
        if isinstance(model, DependencyParser):
            raise ParserModelError(path)
        return Predictor(model, token_budget, limit, frames, constraints)
    if not constraints:
        raise PredictionInputError(f"constraints: {path} is a SavedModel export, which decodes as it was exported; "
                                   "give its run or .keras model to turn the constraints off, or export it with "
                                   "--no-constraints")
    with without_onednn_note("load"):  # restoring an export runs its first graphs
        predictor = ExportPredictor(export or latest_version(path), limit, token_budget, frames,
                                    keras_file=path / MODEL_FILE if export else None)
    if "srl_tags" not in predictor.signature.structured_outputs:
        raise ParserModelError(path)
    return predictor
