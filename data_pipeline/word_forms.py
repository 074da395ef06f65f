"""The inflected forms of an English word: regular inflection, corrected by a shipped table.

Regular English inflection (:func:`regular_inflections`: verb -s, -ed, -ing; noun -s; adjective -er,
-est) gives most forms of a word but misses the irregular ones (``lend`` → *lent*, ``rise`` → *risen*,
``go`` → *went*) and over-generates: ``form`` + -er is *former*, a word of its own. :class:`WordForms`
corrects it with a table, per lemma, of

- ``irregular``: its forms regular inflection does not give (``lend``: lent; ``good``: better, best);
- ``not_inflections``: forms regular inflection gives that are other words' lemmas and not inflections
  of this one (``form``: former; ``compute``: computer; ``us``: used, using).

The shipped table (``data/english-word-forms/word_forms.json``, :data:`DEFAULT_WORD_FORMS`) is built from
the LemmInflect package's English dictionary (derived from the NLM SPECIALIST Lexicon; attribution and
licences beside it) for the words of the shipped frame index, so nothing beyond the table is needed at
run time. On UD English-EWT's gold lemmas it finds the lemma of 99.03 % of the content tokens whose lemma
is a frame index word, where regular inflection alone finds 82.59 % (``benchmarks/sense_lexicon.py``;
the resources compared in ``benchmarks/lemma_resources.py``). Rebuild it, with ``lemminflect`` installed::

    python -m data_pipeline.word_forms build --out data/english-word-forms/word_forms.json

Bad input: a table that is not this format raises :class:`~data_pipeline.errors.DataFormatError` naming
the file and what is wrong.
"""

from __future__ import annotations

import argparse
import csv
import dataclasses
import functools
import gzip
import json
import os
import pathlib
import re
import sys
from typing import Iterable

from data_pipeline.errors import DataFormatError, UserError

ROOT = pathlib.Path(__file__).resolve().parents[1]
FORMAT = "lisa_tf.word_forms/1"
_VOWELS = "aeiou"


def _shipped() -> pathlib.Path:
    """``data/english-word-forms`` of the repository; after ``pip install .``, the installed copy
    (``data_pipeline/english_word_forms``, pyproject.toml)."""
    repository = ROOT / "data" / "english-word-forms"
    return repository if repository.is_dir() else pathlib.Path(__file__).resolve().parent / "english_word_forms"


#: the table shipped with the repository (see the ATTRIBUTION and LICENSE beside it)
DEFAULT_WORD_FORMS = _shipped() / "word_forms.json"


def regular_inflections(word: str) -> set[str]:
    """Every regular English inflection of ``word`` (verb: -s, -ed, -ing; noun: -s; adjective: -er,
    -est), over-generated: a form no English word has does no harm, it is never looked up; one that is
    another word (``former``) is taken out by the table (:class:`WordForms`)."""
    forms = {word}
    if not word.isalpha():
        return forms
    sibilant = word.endswith(("s", "x", "z", "ch", "sh"))
    consonant_y = len(word) > 1 and word.endswith("y") and word[-2] not in _VOWELS
    silent_e = word.endswith("e") and not word.endswith(("ee", "ye", "oe"))  # make → making, agree → agreeing
    doubles = len(word) >= 3 and word[-1] not in _VOWELS + "wxy" and word[-2] in _VOWELS and word[-3] not in _VOWELS
    forms.add(word + "es" if sibilant else (word[:-1] + "ies" if consonant_y else word + "s"))
    if word.endswith("e"):
        stems = [word[:-1]] + ([] if silent_e else [word])
    elif consonant_y:
        stems = [word[:-1] + "i"]
    else:
        stems = [word] + ([word + word[-1]] if doubles else []) + ([word + "k"] if word.endswith("c") else [])
    for stem in stems:  # stop → stopp-ed, panic → panick-ed, carry → carri-ed
        forms.update({stem + "ed", stem + "er", stem + "est"})
    forms.add((word[:-1] if silent_e else word) + "ing")
    if doubles:
        forms.add(word + word[-1] + "ing")
    if word.endswith("ie"):
        forms.add(word[:-2] + "ying")  # die → dying
    return forms


@dataclasses.dataclass(frozen=True)
class WordForms:
    """The corrections of regular inflection, per lower-cased lemma (module docstring).

    Attributes:
        irregular: lemma → its forms :func:`regular_inflections` does not give.
        not_inflections: lemma → forms :func:`regular_inflections` gives that are not its inflections.
        source: where the table comes from (``resource``, ``data``, ``licence``, ``words``).
    """

    irregular: dict[str, frozenset[str]]
    not_inflections: dict[str, frozenset[str]]
    source: dict[str, str] = dataclasses.field(default_factory=dict)

    def inflections(self, word: str) -> set[str]:
        """Every inflected form of the lower-cased ``word``, itself included:
        ``inflections("lend") ⊇ {"lends", "lent", "lending"}``, ``"former" ∉ inflections("form")``."""
        return (regular_inflections(word) - self.not_inflections.get(word, frozenset())) \
            | self.irregular.get(word, frozenset())

    @classmethod
    def load(cls, path: str | os.PathLike = DEFAULT_WORD_FORMS) -> "WordForms":
        """Read a table :meth:`save` wrote.

        Raises:
            DataFormatError: the file is not JSON of this format.
        """
        path = pathlib.Path(path)
        try:
            data = json.loads(path.read_text(encoding="utf-8"))
        except (UnicodeDecodeError, json.JSONDecodeError) as error:
            raise DataFormatError(path, None, f"expected a word-form table (JSON), found: {error}") from None
        if not isinstance(data, dict) or data.get("format") != FORMAT:
            found = data.get("format") if isinstance(data, dict) else type(data).__name__
            raise DataFormatError(path, None, f"expected format {FORMAT!r}, found {found!r}")
        tables = {}
        for key in ("irregular", "not_inflections"):
            table = data.get(key)
            if not isinstance(table, dict) or not all(
                    isinstance(forms, list) and all(isinstance(form, str) for form in forms) for forms in table.values()):
                raise DataFormatError(path, None, f"{key}: expected an object of lemma → list of word forms")
            tables[key] = {lemma: frozenset(forms) for lemma, forms in table.items()}
        source = data.get("source", {})
        if not isinstance(source, dict) or not all(isinstance(v, str) for v in source.values()):
            raise DataFormatError(path, None, "source: expected an object of strings")
        return cls(tables["irregular"], tables["not_inflections"], source)

    def save(self, path: str | os.PathLike) -> None:
        """Write the table as JSON, keys and forms sorted (the same table gives the same bytes)."""
        data = {"format": FORMAT, "source": self.source,
                "irregular": {lemma: sorted(forms) for lemma, forms in self.irregular.items()},
                "not_inflections": {lemma: sorted(forms) for lemma, forms in self.not_inflections.items()}}
        pathlib.Path(path).write_text(json.dumps(data, sort_keys=True, indent=0, ensure_ascii=False) + "\n",
                                      encoding="utf-8")


@functools.lru_cache(maxsize=1)
def shipped_word_forms() -> WordForms:
    """The shipped table (:data:`DEFAULT_WORD_FORMS`), read once per process."""
    return WordForms.load(DEFAULT_WORD_FORMS)


def index_heads(words: Iterable[str]) -> set[str]:
    """The lower-cased words whose inflections a frame index's ``words`` (lemmas, aliases) are looked up
    by: each word, and the first word of a phrasal one (``pick_up`` → pick), where PropBank puts the
    predicate."""
    heads = set()
    for word in words:
        key = word.lower()
        heads.add(key)
        parts = re.split(r"[_ ]", key)
        if len(parts) > 1:
            heads.add(parts[0])
    return heads


def build(words: Iterable[str]) -> WordForms:
    """The table for ``words`` (lower-cased lemmas) from LemmInflect's dictionary: a word's forms are
    those whose lemma (any part of speech) is the word, and the inflections LemmInflect gives it; a
    regular inflection is dropped when LemmInflect has it as a lemma but not as a form of the word.

    Raises:
        UserError: LemmInflect is not installed.
    """
    try:
        import lemminflect
        from lemminflect import config as lemminflect_config
    except ImportError:
        raise UserError("building the word-form table needs LemmInflect: pip install lemminflect==0.2.3") from None
    words = set(words)

    def lemmas_of(form: str) -> set[str]:
        return {lemma.lower() for lemmas in lemminflect.getAllLemmas(form).values() for lemma in lemmas}

    forms_of: dict[str, set[str]] = {word: set() for word in words}
    with gzip.open(lemminflect_config.lemma_lu_fn, "rt", encoding="utf-8") as file:  # form,pos,lemma/lemma…
        for form in sorted({row[0].lower() for row in csv.reader(file) if row}):
            for lemma in lemmas_of(form) & words:
                forms_of[lemma].add(form)
    for word in words:
        forms_of[word].update(form.lower() for forms in lemminflect.getAllInflections(word).values() for form in forms)
    irregular, not_inflections = {}, {}
    for word in sorted(words):
        regular = regular_inflections(word)
        extra = forms_of[word] - regular
        wrong = {form for form in regular - forms_of[word] - {word} if form in lemmas_of(form)}
        if extra:
            irregular[word] = frozenset(extra)
        if wrong:
            not_inflections[word] = frozenset(wrong)
    version = getattr(lemminflect, "__version__", "")
    return WordForms(irregular, not_inflections, {
        "resource": f"LemmInflect {version}".strip() + " (https://github.com/bjascob/LemmInflect), MIT licence",
        "data": "the NLM SPECIALIST Lexicon, as LemmInflect's lemma and inflection dictionaries",
    })


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(prog="python -m data_pipeline.word_forms", description=__doc__.splitlines()[0])
    commands = parser.add_subparsers(dest="command", required=True)
    build_parser = commands.add_parser("build", help="build the table for the words of a frame index (needs lemminflect)")
    build_parser.add_argument("--index", default=None, help="frame index (default: the shipped one)")
    build_parser.add_argument("--out", required=True)
    args = parser.parse_args(argv)
    from data_pipeline.frame_index import DEFAULT_FRAME_INDEX, FrameIndex

    try:
        index = FrameIndex.load(args.index or DEFAULT_FRAME_INDEX)
        table = build(index_heads(index.lemmas()))
    except UserError as error:
        print(f"error: {error}", file=sys.stderr)
        return 2
    source = dict(table.source, words=f"the lemmas and aliases of the frame index {index.source.get('repository', '')} "
                                      f"{index.source.get('commit', '')}".rstrip())
    dataclasses.replace(table, source=source).save(args.out)
    print(f"{args.out}: {sum(map(len, table.irregular.values()))} irregular forms of {len(table.irregular)} words, "
          f"{sum(map(len, table.not_inflections.values()))} regular forms that are not inflections")
    return 0


if __name__ == "__main__":
    sys.exit(main())
