"""Semantic role labelling as a spaCy pipeline component: ``nlp.add_pipe("lisa_srl")``.

The factory ``lisa_srl`` is registered with spaCy through the ``spacy_factories`` entry point of the
``lisa_tf[spacy]`` install, so a config file or ``spacy.load`` finds it without importing ``lisa_tf``
first (this module imports neither lisa_tf nor TensorFlow: they are imported when a component is
made)::

    nlp = spacy.blank("en")
    nlp.add_pipe("sentencizer")
    nlp.add_pipe("lisa_srl")  # the shipped model "srl"; config={"model": "srl-fast"} for the fast one
    doc = nlp("The dog barked at the mailman.")
    doc._.frames            # [{"token": 2, "text": "barked", "arguments": [{"role": "ARG0", ...}], ...}]
    doc.spans["srl_2"]      # the frame of token 2: [The dog (ARG0), at the mailman (ARG2), barked (V)]

The component labels spaCy's own tokens and sentences (``doc.sents``, from a sentencizer, senter or
parser): each sentence's tokens go to :meth:`lisa_tf.labelling.predictor.Predictor.label` as
``predict(tokens=...)`` would send them, so every span lies exactly on spaCy tokens and the frames
are those ``predict`` gives for the same tokens. Whitespace tokens (``token.is_space``: the
``"\\n\\n"`` between paragraphs) are not words of the language the model was trained on and are not
sent; a span never starts or ends on one. A Doc without sentence boundaries is refused with an error
that names the fix (add a sentencizer before ``lisa_srl``): the component does not split sentences
itself, so the boundaries are always the pipeline's own.

Results, all plain JSON data kept where ``DocBin`` and ``Doc.to_bytes`` keep them:

- one :class:`~spacy.tokens.SpanGroup` per frame, ``doc.spans["srl_<token>"]`` (``<token>`` the
  predicate's index in the Doc; the prefix is the ``spans_prefix`` config): its spans are the
  arguments, labelled with their roles, in the order of the frame's ``arguments``, then the
  predicate itself labelled ``V`` whose ``kb_id_`` is the predicted sense where the model has one;
  the group's ``attrs["lisa_srl"]`` is the whole frame. ``displacy.render(doc, style="span",
  options={"spans_key": "srl_2"})`` draws it with the role codes (``ARG2``);
  ``displacy.render(displacy_frame(doc, "srl_2"), style="span", manual=True)`` with the roles' meanings
  as well (``ARG2 hearer``, as the frame's ``description`` shows them; :func:`displacy_frame`).
  A component replaces the groups it wrote before (an earlier run of it, or a Doc read back from a
  ``DocBin``): those with its prefix that hold the frame of their key. Any other group is left alone,
  so two components with different prefixes (all predicates and verbal ones, say) keep each other's
  frames; a group of another writer at one of its keys (the user's own ``doc.spans["srl_2"]``) is
  refused with an error naming the key, before anything on the Doc changes.
- ``doc._.frames``: the frames of the Doc in token order, read from those groups. Each is a
  predicate dict of :mod:`lisa_tf.labelling.predictor` with every key it has (sense and role meanings
  included, where the model gives them), its positions in the Doc's terms (``token``,
  ``token_start``/``token_end`` index the Doc's tokens, ``start``/``end`` its characters, ``text``
  is the Doc's text), plus ``sentence`` (the sentence's index in the Doc) and ``spans_key``. A group
  whose ``attrs["lisa_srl"]`` is not such a frame (another program's value under the same attr name)
  is not one: it is left out, with one warning that counts and names those groups.
- ``doc._.srl_skipped``: the sentences left unlabelled because they are longer than the model's
  limit (with ``over_limit = "skip"``), each with its token span and the reason; they are also the
  spans of ``doc.spans["srl_skipped"]``.

``nlp.pipe(texts, batch_size=N)`` labels the sentences of N Docs in one call, packed into batches
of at most ``token_budget`` padded tokens (through a packaged model's cached export when ``predict`` or
``serve`` has built it, else on the Keras model's compiled path). The model is referenced, not copied:
``nlp.to_disk`` writes the config (a shipped model's name, or the path given), and ``spacy.load``
loads that model again, so give an absolute path for a model of your own; components of one process
with the same model, budget and limit share one loaded copy (:func:`shared_predictor`). Reading a
``DocBin`` back needs the ``doc._`` extensions registered: ``import lisa_tf_spacy`` (loading a
pipeline with ``lisa_srl`` does it).

``nlp.pipe(texts, n_process=N)``: TensorFlow cannot run in a process forked from one where it has
started, and ``fork`` is the default way Python starts processes on Linux. Under it the component
refuses to label in a worker process with one line that says so (spaCy raises it in the parent),
instead of hanging. With ``multiprocessing.set_start_method("spawn")`` first, each worker loads the model
itself (the component is pickled as its config) and ``n_process`` works. On a few cores
``n_process=1`` is as fast: the component already batches sentences across Docs and TensorFlow uses every
core.
"""

from __future__ import annotations

import os
import warnings
import weakref
from typing import Iterable, Iterator, Optional

from spacy.language import Language
from spacy.pipeline import Pipe
from spacy.tokens import Doc, Span, SpanGroup
from spacy.util import minibatch

from data_pipeline.errors import UserError
from data_pipeline.input_limits import InputTooLong
from data_pipeline.predicate_kinds import check_kind

#: The ``SpanGroup.attrs`` key that holds a frame.
FRAME_ATTR = "lisa_srl"
#: The ``SpanGroup.attrs`` key that holds the skipped sentences.
SKIPPED_ATTR = "lisa_srl_skipped"
#: The choices of the ``over_limit`` config.
OVER_LIMIT = ("raise", "skip")


#: The loaded models, shared by the components that use the same one while any of them lives.
_PREDICTORS: "weakref.WeakValueDictionary" = weakref.WeakValueDictionary()


class SpacyComponentError(UserError):
    """A ``lisa_srl`` config value or an input Doc is wrong: names the config key or the fix."""


def shared_predictor(model: str, token_budget: int, max_sentence_tokens: Optional[int], constraints: bool = True,
                     frames: Optional[str] = None):
    """:func:`lisa_tf.labelling.predictor.load` of ``model``, loaded once per process: pipelines built with the
    same model, budget and limit (two configs, ``spacy.load`` of a saved pipeline beside the one that
    saved it) share one predictor, its weights and its compiled functions, while any of them lives.
    ``constraints`` and ``frames``: as for :func:`~lisa_tf.labelling.predictor.load`, which labels a packaged
    model through its cached export when one is built (the same frames, seconds sooner to the first Doc)."""
    from lisa_tf.labelling.predictor import load
    from lisa_tf.packages.finding import model_path

    key = (str(model_path(model).resolve()), token_budget, max_sentence_tokens, bool(constraints), frames)
    predictor = _PREDICTORS.get(key)
    if predictor is None:
        predictor = _PREDICTORS[key] = load(key[0], token_budget=token_budget, max_sentence_tokens=max_sentence_tokens,
                                            constraints=constraints, frames=frames)
    return predictor


def is_frame(key: str, value) -> bool:
    """Whether ``value``, the ``attrs["lisa_srl"]`` of the span group ``key``, is a frame as
    :class:`SrlComponent` writes it: a dict with the predicate's ``token``, its ``arguments`` and the
    group's own key as ``spans_key``. The attr name is a plain string any program may use; a value that
    is not a frame must not be read as one."""
    return (isinstance(value, dict) and type(value.get("token")) is int and isinstance(value.get("arguments"), list)
            and all(isinstance(a, dict) and "role" in a for a in value["arguments"]) and value.get("spans_key") == key)


def is_skipped_list(value) -> bool:
    """Whether ``value``, a group's ``attrs["lisa_srl_skipped"]``, is a list of skipped sentences as
    :class:`SrlComponent` writes it."""
    return isinstance(value, list) and all(isinstance(entry, dict) and "sentence" in entry for entry in value)


def _warn_foreign(extension: str, attr: str, what: str, keys: list[str]) -> None:
    """One warning for the span groups of one Doc whose ``attr`` holds something other than ``what``
    (:class:`SrlComponent` did not write it), counted and named, where ``doc._.<extension>`` is read."""
    warnings.warn(f"doc._.{extension}: skipped {len(keys)} span group{'s' if len(keys) > 1 else ''} whose "
                  f"attrs[{attr!r}] is not {what} written by lisa_srl: {', '.join(map(repr, keys))}",
                  stacklevel=4)  # _warn_foreign < frames_of < spaCy's doc._ getter < the line that reads doc._


def frames_of(doc: Doc) -> list[dict]:
    """``doc._.frames``: the frames of ``doc`` in token order (module docstring); a group whose
    ``attrs["lisa_srl"]`` is not a frame (:func:`is_frame`) is left out, with one warning naming it."""
    frames, foreign = [], []
    for key, group in doc.spans.items():
        if FRAME_ATTR in group.attrs:
            if is_frame(key, group.attrs[FRAME_ATTR]):
                frames.append(group.attrs[FRAME_ATTR])
            else:
                foreign.append(key)
    if foreign:
        _warn_foreign("frames", FRAME_ATTR, "a frame", foreign)
    return sorted(frames, key=lambda frame: frame["token"])


def skipped_of(doc: Doc) -> list[dict]:
    """``doc._.srl_skipped``: the sentences left unlabelled, in order (module docstring); a group whose
    ``attrs["lisa_srl_skipped"]`` is not such a list is left out, with one warning naming it."""
    entries, foreign = [], []
    for key, group in doc.spans.items():
        if SKIPPED_ATTR in group.attrs:
            if is_skipped_list(group.attrs[SKIPPED_ATTR]):
                entries.extend(group.attrs[SKIPPED_ATTR])
            else:
                foreign.append(key)
    if foreign:
        _warn_foreign("srl_skipped", SKIPPED_ATTR, "a list of skipped sentences", foreign)
    return entries


def shown_role(argument: dict) -> str:
    """An argument's label with its role's meaning, as the frame's ``description`` and lisa_tf's text
    output show it: ``ARG0 barker``; the role alone where the model gives no meaning."""
    return f"{argument['role']} {argument['description']}" if argument.get("description") else argument["role"]


def displacy_frame(doc: Doc, spans_key: str, *, meanings: bool = True) -> dict:
    """The frame of ``doc.spans[spans_key]`` as displaCy's span data, to draw with
    ``displacy.render(displacy_frame(doc, key), style="span", manual=True)``.

    The span group labels its arguments with role codes (``ARG2``), which is what
    ``displacy.render(doc, style="span", options={"spans_key": key})`` draws; a reader of the picture
    rarely knows what ``ARG2`` of a given verb is. With ``meanings`` each argument is labelled with its
    role's meaning as well (``ARG2 hearer``, :func:`shown_role`), where the model gives one; the
    predicate stays ``V`` with its sense as the span's ``kb_id``.

    Raises:
        SpacyComponentError: ``doc.spans`` has no frame of lisa_srl at ``spans_key`` (names the keys it has).
    """
    from spacy import displacy

    group = doc.spans[spans_key] if spans_key in doc.spans else None
    if group is None or not is_frame(spans_key, group.attrs.get(FRAME_ATTR)):
        keys = [frame["spans_key"] for frame in frames_of(doc)]
        raise SpacyComponentError(f"displacy_frame: the Doc has no lisa_srl frame at doc.spans[{spans_key!r}]; its "
                                  f"frames are at {', '.join(map(repr, keys)) or 'no key (no frames)'}")
    data = displacy.parse_spans(doc, {"spans_key": spans_key})
    if meanings:
        arguments = group.attrs[FRAME_ATTR]["arguments"]
        for span, argument in zip(data["spans"], arguments):  # the group's spans: its arguments in order, then V
            span["label"] = shown_role(argument)
    return data


Doc.set_extension("frames", getter=frames_of, force=True)
Doc.set_extension("srl_skipped", getter=skipped_of, force=True)


def _preview(span: Span, words: int = 6) -> str:
    tokens = [t.text for t in span if not t.is_space]
    return " ".join(tokens[:words]) + (" ..." if len(tokens) > words else "")


class SrlComponent(Pipe):
    """Labels the frames of each Doc's sentences with a lisa_tf model (see the module docstring).

    Args:
        nlp: the pipeline (its vocabulary is not used: the model has its own).
        name: the component's name in the pipeline.
        model: a shipped model's name (``"srl"``, ``"srl-fast"``), a packaged model, a run directory,
            a ``.keras`` file or a SavedModel export (:func:`lisa_tf.labelling.predictor.load`).
        predicates: ``"all"`` the predicates the model finds, ``"verbal"`` its verb frames only
            (:mod:`data_pipeline.predicate_kinds`).
        over_limit: ``"raise"`` refuses a sentence longer than the model's limit with
            :class:`~data_pipeline.input_limits.InputTooLong`; ``"skip"`` leaves it unlabelled and
            lists it in ``doc._.srl_skipped``.
        token_budget: most padded tokens per batch of the model.
        max_sentence_tokens: the longest sentence labelled, a positive whole number; ``None``: the model's
            longest training sentence (:mod:`data_pipeline.input_limits`).
        spans_prefix: the frames' SpanGroups are ``doc.spans[f"{spans_prefix}_{token}"]``; each ``lisa_srl``
            component of a pipeline needs its own (the groups with its prefix are the ones it replaces).
        constraints: decode each frame under PropBank's constraints (one of each core role, ``C-``/``R-``
            after their role, only the roleset's core roles; :mod:`lisa_tf.decoding.frame_viterbi`); False:
            the plain BIO Viterbi.
        frames: the PropBank frame index the senses' meanings come from (``None``: the shipped one).

    Raises:
        SpacyComponentError: a config value is wrong, the model or the frame index is missing, or another
            ``lisa_srl`` component of ``nlp`` has the same ``spans_prefix`` (names the key).
    """

    def __init__(self, nlp: Language, name: str = "lisa_srl", *, model: str = "srl", predicates: str = "all",
                 over_limit: str = "raise", token_budget: int = 4096, max_sentence_tokens: Optional[int] = None,
                 spans_prefix: str = "srl", constraints: bool = True, frames: Optional[str] = None):
        from lisa_tf.decoding.frame_meanings import FrameIndexError, check_frames, frame_index
        from lisa_tf.labelling.predictor import PredictionInputError

        self.name = name
        try:
            self.predicates = check_kind(predicates)
        except ValueError as error:
            raise SpacyComponentError(f"{name} config {error}") from None
        if over_limit not in OVER_LIMIT:
            raise SpacyComponentError(f"{name} config over_limit: expected one of {', '.join(OVER_LIMIT)}, "
                                      f"found {over_limit!r}")
        if not spans_prefix:
            raise SpacyComponentError(f"{name} config spans_prefix: expected a non-empty name")
        for other_name, other in getattr(nlp, "pipeline", []):
            if isinstance(other, SrlComponent) and other_name != name and other.spans_prefix == spans_prefix:
                raise SpacyComponentError(
                    f"{name} config spans_prefix: {other_name} already writes the span groups "
                    f"\"{spans_prefix}_<token>\" of this pipeline, and each would replace the other's; give {name} a "
                    "spans_prefix of its own")
        # 0 is refused as -1 is: only null/None stands for the model's own limit
        if max_sentence_tokens is not None and (type(max_sentence_tokens) is not int or max_sentence_tokens < 1):
            raise SpacyComponentError(f"{name} config max_sentence_tokens: expected a positive whole number, or null "
                                      f"for the model's longest training sentence; found {max_sentence_tokens!r}")
        try:
            if check_frames(frames, option="frames:") is not None:
                frame_index(frames)  # read now (once per process): a file that is not an index fails here, by its key
        except FrameIndexError as error:
            raise SpacyComponentError(f"{name} config {error}") from None
        except UserError as error:
            raise SpacyComponentError(f"{name} config frames: {error}") from None
        self.over_limit = over_limit
        self.spans_prefix = spans_prefix
        #: what rebuilds the component in another process (:meth:`__reduce__`)
        self.settings = {"model": model, "predicates": predicates, "over_limit": over_limit, "token_budget": token_budget,
                         "max_sentence_tokens": max_sentence_tokens, "spans_prefix": spans_prefix,
                         "constraints": constraints, "frames": frames}
        self._process = os.getpid()
        try:
            self.predictor = shared_predictor(model, token_budget, max_sentence_tokens, constraints, frames)
        except PredictionInputError as error:
            raise SpacyComponentError(f"{name} config {error}") from None
        except (UserError, FileNotFoundError) as error:
            raise SpacyComponentError(f"{name} config model: {error}") from None

    def __reduce__(self):
        """Pickled as its name and settings: a process that unpickles it (``nlp.pipe(n_process=N)`` under the
        ``spawn`` start method) loads the model itself."""
        return _rebuild, (self.name, self.settings)

    def __call__(self, doc: Doc) -> Doc:
        """Label the frames of ``doc`` (module docstring)."""
        self._label([doc])
        return doc

    def pipe(self, stream: Iterable[Doc], *, batch_size: int = 128) -> Iterator[Doc]:
        """Label ``batch_size`` Docs at a time: their sentences share the model's batches."""
        error_handler = self.get_error_handler()
        for docs in minibatch(stream, size=batch_size):
            try:
                self._label(docs)
            except Exception as error:  # noqa: BLE001 - spaCy's error handler decides (it raises by default)
                error_handler(self.name, self, docs, error)
            yield from docs

    def _owns(self, key: str, group: SpanGroup) -> bool:
        """Whether the span group ``key`` is one this component writes: the frame of its key under this
        component's prefix, or its skipped sentences. Another component's groups (another prefix) and
        the user's own are not, whatever their attrs."""
        if key == f"{self.spans_prefix}_skipped":
            return is_skipped_list(group.attrs.get(SKIPPED_ATTR))
        frame = group.attrs.get(FRAME_ATTR)
        return is_frame(key, frame) and key == f"{self.spans_prefix}_{frame['token']}"

    def _write(self, doc: Doc, groups: dict) -> None:
        """Replace the groups this component wrote on ``doc`` by ``groups`` (key -> SpanGroup)."""
        for key in [k for k, group in doc.spans.items() if self._owns(k, group)]:
            del doc.spans[key]
        for key, group in groups.items():
            doc.spans[key] = group

    def _check_keys(self, doc: Doc, groups: dict) -> None:
        """Refuse to write over a span group this component did not write (module docstring)."""
        for key in groups:
            if key in doc.spans and not self._owns(key, doc.spans[key]):
                raise SpacyComponentError(
                    f"{self.name}: the Doc already has a span group {key!r} that {self.name} did not write, and "
                    f"{self.name} writes its own there; rename that group, or give the component a config "
                    f"spans_prefix of its own (now {self.spans_prefix!r})")

    def _label(self, docs: list[Doc]) -> None:
        if os.getpid() != self._process:
            raise SpacyComponentError(
                f"{self.name}: this process was forked from the one that loaded the model (nlp.pipe with n_process > 1 "
                "under the 'fork' start method), and TensorFlow cannot run in a forked process; use n_process=1 (the "
                "component batches the sentences of batch_size Docs in one model call, and TensorFlow uses every "
                "core), or call multiprocessing.set_start_method(\"spawn\") first, so that each process loads the model")
        units = []  # (doc, sentence index, sentence span, the Doc indices of the tokens sent to the model)
        groups: dict = {id(doc): (doc, {}) for doc in docs}  # id(doc) -> (doc, {key: the SpanGroup to write})
        for doc in docs:
            if not len(doc):
                continue
            if not doc.has_annotation("SENT_START"):
                raise SpacyComponentError(
                    f"{self.name}: the Doc has no sentence boundaries ({_preview(doc[:], 8)!r}); add a sentencizer, "
                    f"senter or parser before it: nlp.add_pipe(\"sentencizer\", before=\"{self.name}\")")
            units.extend((doc, k, sent, [t.i for t in sent if not t.is_space]) for k, sent in enumerate(doc.sents))
        if units:
            self._label_units(units, groups)
        # every Doc's keys are checked before any Doc changes: a refused batch leaves its Docs as they were
        for doc, new in groups.values():
            self._check_keys(doc, new)
        for doc, new in groups.values():
            self._write(doc, new)

    def _label_units(self, units: list, groups: dict) -> None:
        """Label the sentences ``units`` (as :meth:`_label` lists them) and put the span groups of their frames
        and skipped sentences into ``groups``."""
        inputs = self.predictor.prepare(tokens=[[doc[i].text for i in kept] for doc, _, _, kept in units],
                                        over_limit="skip")
        if self.over_limit == "raise":
            for (doc, k, sent, _), (_, _, skipped) in zip(units, inputs):
                if skipped:
                    raise InputTooLong(
                        f"{self.name}: sentence {k + 1} of the Doc (tokens {sent.start}..{sent.end - 1}, "
                        f"{_preview(sent)!r}): {skipped['reason']}; in spaCy: the component's config "
                        f"max_sentence_tokens, or over_limit = \"skip\" to leave it unlabelled (doc._.srl_skipped)")
        results = self.predictor.label(inputs, predicates=self.predicates)
        skipped_of_doc: dict = {}  # id(doc) -> (doc, [(sentence span, entry), ...])
        for (doc, k, sent, kept), (_, _, skipped), result in zip(units, inputs, results):
            if skipped:
                skipped_of_doc.setdefault(id(doc), (doc, []))[1].append((sent, {
                    "sentence": k, "token_start": sent.start, "token_end": sent.end, "tokens": len(kept),
                    "reason": skipped["reason"]}))
                continue
            for predicate in result["predicates"]:
                group = self._frame_group(doc, k, kept, predicate)
                groups[id(doc)][1][group.name] = group
        for doc, entries in skipped_of_doc.values():
            key = f"{self.spans_prefix}_skipped"
            groups[id(doc)][1][key] = SpanGroup(doc, name=key, attrs={SKIPPED_ATTR: [entry for _, entry in entries]},
                                       spans=[Span(doc, sent.start, sent.end, label="skipped") for sent, _ in entries])

    def _frame_group(self, doc: Doc, sentence: int, kept: list[int], predicate: dict) -> SpanGroup:
        """One predicate dict of :mod:`lisa_tf.labelling.predictor` (positions in the sentence's kept tokens) as
        a frame in the Doc's terms, in its SpanGroup; every other key is carried as it is."""
        position = kept[predicate["token"]]
        token = doc[position]
        key = f"{self.spans_prefix}_{position}"
        arguments, spans = [], []
        for argument in predicate["arguments"]:
            span = doc[kept[argument["token_start"]] : kept[argument["token_end"] - 1] + 1]
            arguments.append({**argument, "token_start": span.start, "token_end": span.end,
                              "start": span.start_char, "end": span.end_char, "text": span.text})
            spans.append(Span(doc, span.start, span.end, label=argument["role"]))
        frame = {**predicate, "token": position, "start": token.idx, "end": token.idx + len(token),
                 "text": token.text, "arguments": arguments, "sentence": sentence, "spans_key": key}
        spans.append(Span(doc, position, position + 1, label="V", kb_id=str(frame.get("sense") or "")))
        return SpanGroup(doc, name=key, attrs={FRAME_ATTR: frame}, spans=spans)


def _rebuild(name: str, settings: dict) -> SrlComponent:
    """The component ``name`` made again from its settings, in the process that unpickles it."""
    return SrlComponent(None, name, **settings)


@Language.factory(
    "lisa_srl",
    default_config={"model": "srl", "predicates": "all", "over_limit": "raise", "token_budget": 4096,
                    "max_sentence_tokens": None, "spans_prefix": "srl", "constraints": True, "frames": None},
    assigns=["doc.spans", "doc._.frames", "doc._.srl_skipped"],
    requires=["token.is_sent_start"],
)
def make_lisa_srl(nlp: Language, name: str, model: str, predicates: str, over_limit: str, token_budget: int,
                  max_sentence_tokens: Optional[int], spans_prefix: str, constraints: bool,
                  frames: Optional[str]) -> SrlComponent:
    """The ``lisa_srl`` factory: an :class:`SrlComponent` with the config's values."""
    return SrlComponent(nlp, name, model=model, predicates=predicates, over_limit=over_limit,
                        token_budget=token_budget, max_sentence_tokens=max_sentence_tokens,
                        spans_prefix=spans_prefix, constraints=constraints, frames=frames)


__all__ = ["SpacyComponentError", "SrlComponent", "displacy_frame", "frames_of", "is_frame", "make_lisa_srl",
           "shared_predictor", "shown_role", "skipped_of"]
