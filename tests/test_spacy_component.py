"""The ``lisa_srl`` spaCy component (lisa_tf_spacy/component.py) with the shipped fast model on real
EWT test sentences: its frames are ``predict(tokens=...)`` on spaCy's tokens, they survive DocBin,
``Doc.to_bytes`` and ``nlp.to_disk``/``spacy.load`` (spaCy finds the factory through the entry
point), and empty Docs, Docs without sentences, sentences over the limit and a missing model each
get what the module docstring promises."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import warnings

import pytest
import spacy  # the spaCy extra (requirements-spacy.txt), installed by tools/ensure_venv.sh
from spacy import displacy
from spacy.tokens import Doc, DocBin, SpanGroup

from benchmarks.raw_text_srl import texts_of
from data_pipeline.input_limits import InputTooLong
from lisa_tf_spacy import SpacyComponentError
from tests.conftest import DATA

MODEL = "srl-fast"
#: A paragraph break (a whitespace token) between two sentences, and a contraction spaCy splits.
EXTRA = "The cat sat on the mat.\n\nMr. Smith didn't agree with the board."


def ewt_texts(count: int) -> list[str]:
    """The ``# text`` lines of the first ``count`` EWT test sentences."""
    return texts_of(DATA / "propbank-ewt" / "test.conllu.gz")[:count]


@pytest.fixture(scope="module")
def nlp():
    nlp = spacy.blank("en")
    nlp.add_pipe("sentencizer")
    nlp.add_pipe("lisa_srl", config={"model": MODEL})
    return nlp


@pytest.fixture(scope="module")
def docs(nlp):
    """Labelled in one call of the predictor, as ``predict`` labels them below: the same batches, so the
    same numbers (a row's padding may change a score's fourth decimal)."""
    return list(nlp.pipe(ewt_texts(10) + [EXTRA]))


def _words(sent) -> list[str]:
    return [t.text for t in sent if not t.is_space]


def test_frames_are_predict_on_spacys_tokens(nlp, docs):
    predictor = nlp.get_pipe("lisa_srl").predictor
    sentences = [(doc, k, sent) for doc in docs for k, sent in enumerate(doc.sents)]
    expected = predictor.predict(tokens=[_words(sent) for _, _, sent in sentences])
    want: dict = {}
    for (doc, k, sent), result in zip(sentences, expected):
        kept = [t.i for t in sent if not t.is_space]  # the Doc index of each word sent
        for predicate in result["predicates"]:
            token = doc[kept[predicate["token"]]]
            arguments = [{**a, "token_start": kept[a["token_start"]], "token_end": kept[a["token_end"] - 1] + 1,
                          "start": doc[kept[a["token_start"]]].idx,
                          "end": doc[kept[a["token_end"] - 1]].idx + len(doc[kept[a["token_end"] - 1]]),
                          "text": doc[kept[a["token_start"]]: kept[a["token_end"] - 1] + 1].text}
                         for a in predicate["arguments"]]
            want.setdefault(id(doc), []).append(
                {**predicate, "token": token.i, "start": token.idx, "end": token.idx + len(token), "text": token.text,
                 "arguments": arguments, "sentence": k, "spans_key": f"srl_{token.i}"})
    assert sum(len(v) for v in want.values()) >= 15  # real frames, not an empty comparison
    for doc in docs:
        assert doc._.frames == want.get(id(doc), [])
        for frame in doc._.frames:
            group = doc.spans[frame["spans_key"]]
            assert [(s.start, s.end, s.label_) for s in group] == [
                (a["token_start"], a["token_end"], a["role"]) for a in frame["arguments"]] + [
                (frame["token"], frame["token"] + 1, "V")]
            assert group.attrs["lisa_srl"] == frame
    # the paragraph break is a whitespace token inside the first sentence span: never sent, never a span edge
    extra = docs[-1]
    space = [t.i for t in extra if t.is_space]
    assert space and all(a["token_start"] not in space and a["token_end"] - 1 not in space
                         for f in extra._.frames for a in f["arguments"])
    assert "agree" in [f["text"] for f in extra._.frames]
    json.dumps([d._.frames for d in docs])  # plain JSON data


def test_pipe_labels_the_sentences_of_several_docs_in_one_call(nlp, monkeypatch):
    predictor = nlp.get_pipe("lisa_srl").predictor
    calls = []
    label = predictor.label
    monkeypatch.setattr(predictor, "label", lambda inputs, **kw: calls.append(len(inputs)) or label(inputs, **kw))
    texts = ewt_texts(6)
    sentences = [len(list(doc.sents)) for doc in nlp.pipe(texts, batch_size=3)]
    list(nlp.pipe(texts, batch_size=6))
    assert calls == [sum(sentences[:3]), sum(sentences[3:]), sum(sentences)]


def test_docbin_and_to_bytes_keep_every_frame(nlp, docs):
    before = [d._.frames for d in docs]
    assert any(before)
    data = DocBin(docs=docs).to_bytes()  # the default: user_data is not stored, span groups are
    again = list(DocBin().from_bytes(data).get_docs(nlp.vocab))
    assert [d._.frames for d in again] == before
    for old, new in zip(docs, again):
        assert {k: [(s.start, s.end, s.label_, s.kb_id_) for s in g] for k, g in new.spans.items()} == \
               {k: [(s.start, s.end, s.label_, s.kb_id_) for s in g] for k, g in old.spans.items()}
        assert Doc(nlp.vocab).from_bytes(old.to_bytes())._.frames == old._.frames


def test_to_disk_then_spacy_load_gives_the_same_frames(nlp, docs, tmp_path):
    nlp.to_disk(tmp_path / "pipeline")
    loaded = spacy.load(tmp_path / "pipeline")
    assert loaded.pipe_names == ["sentencizer", "lisa_srl"]
    assert loaded.get_pipe_config("lisa_srl") == nlp.get_pipe_config("lisa_srl")
    assert [d._.frames for d in loaded.pipe([d.text for d in docs])] == [d._.frames for d in docs]
    # the same model, budget and limit: one predictor in the process, not a second copy of the weights
    assert loaded.get_pipe("lisa_srl").predictor is nlp.get_pipe("lisa_srl").predictor


def test_spacy_finds_the_factory_through_its_entry_point_without_importing_tensorflow(tmp_path):
    """spaCy imports every ``spacy_factories`` entry point whenever it makes a pipeline: a new process's
    ``spacy.blank`` finds ``lisa_srl`` and its config without importing lisa_tf or TensorFlow (they are
    imported when a component is made)."""
    script = ("import json, sys, spacy; from spacy.language import Language; spacy.blank('en'); "
              "meta = Language.get_factory_meta('lisa_srl'); "
              "imported = sorted(m for m in ('lisa_tf', 'tensorflow') if m in sys.modules); "
              "print(json.dumps([meta.default_config, imported]))")
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}  # the installed project, as a user has it
    done = subprocess.run([sys.executable, "-c", script], cwd=tmp_path, env=env, capture_output=True, text=True,
                          timeout=300)
    assert done.returncode == 0, done.stderr[-3000:]
    config, imported = json.loads(done.stdout)
    assert config["model"] == "srl" and config["over_limit"] == "raise" and imported == []


def test_an_empty_doc_and_a_blank_one_have_no_frames(nlp):
    for text in ("", "  \n\n "):
        doc = nlp(text)
        assert doc._.frames == [] and doc._.srl_skipped == [] and len(doc.spans) == 0


def test_forked_workers_refuse_with_one_line_and_a_pickled_component_loads_its_model_again(nlp, docs):
    """``nlp.pipe(n_process=2)`` forks (Linux's default), and TensorFlow hangs in a forked process: the
    component refuses there instead, and spaCy raises its line in the parent. Under ``spawn`` the workers
    unpickle the component, which is rebuilt from its settings and labels as the original does."""
    import pickle

    with pytest.raises(ValueError, match=r"TensorFlow cannot run in a forked process; use n_process=1"):
        list(nlp.pipe(ewt_texts(4), batch_size=2, n_process=2))
    component = nlp.get_pipe("lisa_srl")
    copy = pickle.loads(pickle.dumps(component))
    assert type(copy) is type(component) and copy.settings == component.settings and copy.settings["model"] == MODEL
    sentencizer = nlp.get_pipe("sentencizer")
    labelled = [(copy(sentencizer(nlp.make_doc(doc.text)))._.frames, component(sentencizer(nlp.make_doc(doc.text)))._.frames)
                for doc in docs[:4]]
    assert all(mine == theirs for mine, theirs in labelled) and any(mine for mine, _ in labelled)


def test_a_doc_without_sentence_boundaries_names_the_fix(nlp):
    doc = nlp.make_doc("The dog barked at the mailman.")  # the tokenizer only: no sentencizer ran
    with pytest.raises(SpacyComponentError, match=r'no sentence boundaries .*nlp.add_pipe\("sentencizer", '
                                                  r'before="lisa_srl"\)'):
        nlp.get_pipe("lisa_srl")(doc)


def test_a_sentence_over_the_limit_raises_or_is_skipped_and_listed(nlp, tmp_path):
    limit = nlp.get_pipe("lisa_srl").predictor.max_sentence_tokens
    long = " ".join(["the dog barked and"] * (limit // 4 + 1)) + " ran."
    text = f"The cat sat on the mat. {long}"
    with pytest.raises(InputTooLong, match=r"lisa_srl: sentence 2 of the Doc \(tokens 7\.\..*over the model's limit "
                                           rf"of {limit} tokens.*max_sentence_tokens.*over_limit = \"skip\""):
        nlp(text)
    skipping = spacy.blank("en")
    skipping.add_pipe("sentencizer")
    skipping.add_pipe("lisa_srl", config={"model": MODEL, "over_limit": "skip"})
    doc = skipping(text)
    [skipped] = doc._.srl_skipped
    assert skipped["sentence"] == 1 and skipped["token_start"] == 7 and skipped["token_end"] == len(doc)
    assert skipped["tokens"] == len(doc) - 7 > limit and "over the model's limit" in skipped["reason"]
    assert [f["text"] for f in doc._.frames] == ["sat"] and all(f["token"] < 7 for f in doc._.frames)
    assert [(s.start, s.end, s.label_) for s in doc.spans["srl_skipped"]] == [(7, len(doc), "skipped")]
    again = list(DocBin().from_bytes(DocBin(docs=[doc]).to_bytes()).get_docs(skipping.vocab))[0]
    assert again._.srl_skipped == doc._.srl_skipped and again._.frames == doc._.frames


def test_a_model_that_does_not_exist_is_one_clear_error(tmp_path):
    nlp = spacy.blank("en")
    missing = tmp_path / "no-such-model"
    with pytest.raises(SpacyComponentError) as raised:
        nlp.add_pipe("lisa_srl", config={"model": str(missing)})
    message = str(raised.value)
    assert message == f"lisa_srl config model: {missing}: no such file or directory"
    assert raised.value.__cause__ is None and raised.value.__suppress_context__  # one error, not a chain
    with pytest.raises(SpacyComponentError, match=r"lisa_srl config model: no-such-name: .*shipped: .*srl-fast"):
        nlp.add_pipe("lisa_srl", config={"model": "no-such-name"})
    with pytest.raises(SpacyComponentError, match=r"lisa_srl config predicates: expected one of all, verbal"):
        nlp.add_pipe("lisa_srl", config={"model": MODEL, "predicates": "nouns"})
    with pytest.raises(SpacyComponentError, match=r"lisa_srl config over_limit: expected one of raise, skip"):
        nlp.add_pipe("lisa_srl", config={"model": MODEL, "over_limit": "truncate"})
    assert nlp.pipe_names == []


def test_verbal_predicates_are_predicts_verbal_frames(nlp, docs):
    verbal = spacy.blank("en")
    verbal.add_pipe("sentencizer")
    verbal.add_pipe("lisa_srl", config={"model": MODEL, "predicates": "verbal"})
    doc = verbal(docs[-1].text)
    predictor = nlp.get_pipe("lisa_srl").predictor
    expected = predictor.predict(tokens=[_words(s) for s in doc.sents], predicates="verbal")
    assert [f["text"] for f in doc._.frames] == [p["text"] for r in expected for p in r["predicates"]]
    assert "did" in [f["text"] for f in docs[-1]._.frames] and "did" not in [f["text"] for f in doc._.frames]


def test_the_constraints_key_reaches_the_predictor(nlp, docs):
    plain = spacy.blank("en")
    plain.add_pipe("sentencizer")
    plain.add_pipe("lisa_srl", config={"model": MODEL, "constraints": False})
    predictor = plain.get_pipe("lisa_srl").predictor
    assert predictor.constraints is False and nlp.get_pipe("lisa_srl").predictor.constraints is True
    doc = plain(docs[-1].text)
    expected = predictor.predict(tokens=[_words(s) for s in doc.sents])
    assert doc._.frames and [f["description"] for f in doc._.frames] == [
        p["description"] for r in expected for p in r["predicates"]]


def test_labelling_a_doc_again_replaces_its_frames_and_displacy_draws_one(nlp):
    doc = nlp("Mr. Smith didn't agree with the board.")
    keys = sorted(doc.spans)
    nlp.get_pipe("lisa_srl")(doc)
    assert sorted(doc.spans) == keys
    [frame] = [f for f in doc._.frames if f["text"] == "agree"]
    html = displacy.render(doc, style="span", options={"spans_key": frame["spans_key"]})
    assert all(a["role"] in html for a in frame["arguments"]) and ">V<" in html.replace(" ", "").replace("\n", "")


def test_every_key_of_a_predicate_and_an_argument_is_carried_and_the_sense_is_the_v_spans_kb_id(nlp, monkeypatch):
    """Keys the predictor adds (a model with senses gives ``sense``, ``sense_name``, and per argument its
    ``description``, ``function_tag``, ``vn_role``) reach ``doc._.frames`` as they are, and survive DocBin."""
    predictor = nlp.get_pipe("lisa_srl").predictor
    label = predictor.label

    def with_senses(inputs, **options):
        results = label(inputs, **options)
        for result in results:
            for predicate in result["predicates"]:
                predicate.update(sense=f"{predicate['text'].lower()}.01", sense_name="a meaning", sense_source="model")
                for k, argument in enumerate(predicate["arguments"]):
                    argument.update(description=f"role {k}", function_tag=None, vn_role=["agent", "theme"][k % 2])
        return results

    monkeypatch.setattr(predictor, "label", with_senses)
    doc = nlp("Mr. Smith didn't agree with the board.")
    [frame] = [f for f in doc._.frames if f["text"] == "agree"]
    assert frame["sense"] == "agree.01" and frame["sense_name"] == "a meaning" and frame["sense_source"] == "model"
    assert [a["vn_role"] for a in frame["arguments"]] == ["agent", "theme", "agent"][: len(frame["arguments"])]
    assert all(a["description"] == f"role {k}" and a["function_tag"] is None for k, a in enumerate(frame["arguments"]))
    [v] = [s for s in doc.spans[frame["spans_key"]] if s.label_ == "V"]
    assert v.kb_id_ == "agree.01"
    again = list(DocBin().from_bytes(DocBin(docs=[doc]).to_bytes()).get_docs(nlp.vocab))[0]
    assert again._.frames == doc._.frames
    assert [s.kb_id_ for s in again.spans[frame["spans_key"]] if s.label_ == "V"] == ["agree.01"]


def _pipeline(*components: dict):
    """``spacy.blank("en")``, a sentencizer, and a ``lisa_srl`` component of the fast model per config
    given (``name`` and config keys; the model is shared with the module's pipeline)."""
    pipeline = spacy.blank("en")
    pipeline.add_pipe("sentencizer")
    for config in components:
        config = dict(config)
        pipeline.add_pipe("lisa_srl", name=config.pop("name", "lisa_srl"), config={"model": MODEL, **config})
    return pipeline


def test_two_components_with_their_own_prefixes_keep_each_others_frames(nlp):
    """Each component replaces only the groups of its own prefix: all predicates under ``srl``, then verb
    frames under ``other``, both stay (and both stay when either labels the Doc again); a group of
    another writer under a prefix of neither is left alone; a second component with a prefix already in
    use is refused when it is added."""
    text = "Mr. Smith didn't agree with the board."
    both = _pipeline({"name": "srl_a"}, {"name": "srl_b", "spans_prefix": "other", "predicates": "verbal"})
    alone = nlp(text)._.frames
    verbal = _pipeline({"predicates": "verbal"})(text)._.frames
    assert [f["text"] for f in alone] == ["did", "agree"] and [f["text"] for f in verbal] == ["agree"]
    doc = both.make_doc(text)
    doc.spans["mine"] = SpanGroup(doc, name="mine", spans=[doc[0:2]], attrs={"note": "the user's"})
    doc = both(doc)
    assert sorted(doc.spans) == ["mine", "other_4", "srl_2", "srl_4"]
    mine = {f["spans_key"]: f for f in doc._.frames}
    assert [mine[f["spans_key"]] for f in alone] == alone
    assert [{**mine[f"other_{f['token']}"], "spans_key": f["spans_key"]} for f in verbal] == verbal
    for name in ("srl_a", "srl_b"):
        both.get_pipe(name)(doc)
        assert sorted(doc.spans) == ["mine", "other_4", "srl_2", "srl_4"] and len(doc._.frames) == 3
    assert [(s.start, s.end) for s in doc.spans["mine"]] == [(0, 2)]
    assert doc.spans["mine"].attrs == {"note": "the user's"}
    with pytest.raises(SpacyComponentError, match=r'^srl_c config spans_prefix: srl_a already writes the span groups '
                                                  r'"srl_<token>" of this pipeline.*give srl_c a spans_prefix of its '
                                                  r'own$'):
        both.add_pipe("lisa_srl", name="srl_c", config={"model": MODEL})
    assert both.pipe_names == ["sentencizer", "srl_a", "srl_b"]


def test_a_span_group_of_the_users_at_a_frames_key_is_refused_by_name_and_the_doc_is_left_as_it_was(nlp):
    text = "Mr. Smith didn't agree with the board."
    doc = nlp(text)
    earlier = doc._.frames
    assert [f["spans_key"] for f in earlier] == ["srl_2", "srl_4"]
    doc.spans["srl_4"] = SpanGroup(doc, name="srl_4", spans=[doc[0:2]])  # the user's own, where "agree"'s frame goes
    with pytest.raises(SpacyComponentError) as raised:
        nlp.get_pipe("lisa_srl")(doc)
    assert str(raised.value) == ("lisa_srl: the Doc already has a span group 'srl_4' that lisa_srl did not write, and "
                                 "lisa_srl writes its own there; rename that group, or give the component a config "
                                 "spans_prefix of its own (now 'srl')")
    assert sorted(doc.spans) == ["srl_2", "srl_4"] and [(s.start, s.end) for s in doc.spans["srl_4"]] == [(0, 2)]
    assert doc._.frames == earlier[:1]  # the frame it wrote before is still there, nothing new was written
    # a Doc of nlp.pipe is refused as well, and the other Docs of its batch are left unlabelled with it
    fresh, clashing = nlp.make_doc("The cat sat on the mat."), nlp.make_doc(text)
    clashing.spans["srl_2"] = SpanGroup(clashing, name="srl_2", spans=[clashing[0:1]])
    with pytest.raises(SpacyComponentError, match=r"^lisa_srl: the Doc already has a span group 'srl_2' "):
        list(nlp.pipe([fresh, clashing]))
    assert fresh._.frames == [] and sorted(clashing.spans) == ["srl_2"]


def test_a_frames_path_that_is_no_frame_index_is_an_error_of_the_frames_key(tmp_path):
    """``frames`` names no file, or a file that is no frame index: an error of the ``frames`` setting with
    the path and what was expected, when the component is made."""
    nlp = spacy.blank("en")
    missing = tmp_path / "missing" / "frames.json.gz"
    with pytest.raises(SpacyComponentError) as raised:
        nlp.add_pipe("lisa_srl", config={"model": MODEL, "frames": str(missing)})
    assert str(raised.value).startswith(f"lisa_srl config frames: {missing}: no such file; expected a frame index "
                                        "(frames.json.gz, built with python -m data_pipeline.frame_index build")
    assert raised.value.__cause__ is None and raised.value.__suppress_context__
    not_an_index = tmp_path / "frames.json.gz"
    not_an_index.write_text("not gzip\n")
    with pytest.raises(SpacyComponentError, match=rf"^lisa_srl config frames: {re.escape(str(not_an_index))}: "):
        nlp.add_pipe("lisa_srl", config={"model": MODEL, "frames": str(not_an_index)})
    assert nlp.pipe_names == []


def test_max_sentence_tokens_0_is_refused_as_minus_1_is():
    """The model's own limit is ``null``: 0 is no limit a sentence could meet, refused with the same line as
    -1; a positive number is the limit."""
    nlp = spacy.blank("en")
    for value in (0, -1):
        with pytest.raises(SpacyComponentError) as raised:
            nlp.add_pipe("lisa_srl", config={"model": MODEL, "max_sentence_tokens": value})
        assert str(raised.value) == ("lisa_srl config max_sentence_tokens: expected a positive whole number, or null "
                                     f"for the model's longest training sentence; found {value}")
    assert nlp.pipe_names == []
    nlp.add_pipe("lisa_srl", config={"model": MODEL, "max_sentence_tokens": 12})
    assert nlp.get_pipe("lisa_srl").predictor.max_sentence_tokens == 12


def test_a_docbin_group_with_a_foreign_lisa_srl_attr_is_skipped_with_one_warning_naming_it(nlp, docs):
    """Span groups whose ``lisa_srl``/``lisa_srl_skipped`` attrs another program wrote (no ``token``, a plain
    string) are not frames: ``doc._.frames`` and ``doc._.srl_skipped`` leave them out, with one warning
    each that counts and names them; the component's own frames are all there."""
    doc = Doc(nlp.vocab).from_bytes(docs[-1].to_bytes())
    frames = doc._.frames
    assert frames
    doc.spans["theirs"] = SpanGroup(doc, name="theirs", spans=[doc[0:2]], attrs={"lisa_srl": {"label": "a topic"}})
    doc.spans["theirs_too"] = SpanGroup(doc, name="theirs_too", spans=[],
                                        attrs={"lisa_srl": "v2", "lisa_srl_skipped": "none"})
    again = list(DocBin().from_bytes(DocBin(docs=[doc]).to_bytes()).get_docs(nlp.vocab))[0]
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        assert again._.frames == frames
        assert again._.srl_skipped == []
    messages = sorted(str(w.message) for w in caught)
    assert len(messages) == 2, messages
    assert re.fullmatch(r"doc\._\.frames: skipped 2 span groups whose attrs\['lisa_srl'\] is not a frame written by "
                        r"lisa_srl: '(theirs|theirs_too)', '(theirs|theirs_too)'", messages[0]), messages[0]
    assert "'theirs'" in messages[0] and "'theirs_too'" in messages[0]
    assert messages[1] == ("doc._.srl_skipped: skipped 1 span group whose attrs['lisa_srl_skipped'] is not a list of "
                           "skipped sentences written by lisa_srl: 'theirs_too'")
    # labelling it again replaces the component's own groups and leaves the others as they are
    nlp.get_pipe("lisa_srl")(again)
    assert again.spans["theirs"].attrs == {"lisa_srl": {"label": "a topic"}} and "theirs_too" in again.spans
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        assert again._.frames == frames


def test_displacy_frame_labels_each_role_with_its_meaning(nlp):
    """The fast model gives role meanings (``ARG0 agreer``): :func:`displacy_frame` gives displaCy the
    frame's spans labelled with them, or with the codes (the span group's labels) with ``meanings=False``;
    a key that holds no frame is one error naming it."""
    from lisa_tf_spacy import displacy_frame

    doc = nlp("Mr. Smith didn't agree with the board.")
    [frame] = [f for f in doc._.frames if f["text"] == "agree"]
    key = frame["spans_key"]
    data = displacy_frame(doc, key)
    labels = [f"{a['role']} {a['description']}" if a.get("description") else a["role"] for a in frame["arguments"]]
    assert [s["label"] for s in data["spans"]] == labels + ["V"]
    assert "ARG0 agreer" in labels  # a meaning is shown, not only codes
    assert [(s["start_token"], s["end_token"]) for s in data["spans"]] == [(s.start, s.end) for s in doc.spans[key]]
    html = displacy.render(data, style="span", manual=True)
    assert all(label in html for label in labels) and "ARG0 agreer" not in displacy.render(
        doc, style="span", options={"spans_key": key})
    codes = displacy_frame(doc, key, meanings=False)
    assert [s["label"] for s in codes["spans"]] == [s.label_ for s in doc.spans[key]]
    with pytest.raises(SpacyComponentError, match=r"^displacy_frame: the Doc has no lisa_srl frame at "
                                                  r"doc\.spans\['srl_0'\]; its frames are at 'srl_2', 'srl_4'$"):
        displacy_frame(doc, "srl_0")
