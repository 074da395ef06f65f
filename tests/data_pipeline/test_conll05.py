"""CoNLL-2005 reader (official layout and pasted files) and props writer, on real test.wsj / test.brown data."""

import gzip
import io
import shutil

import pytest

from data_pipeline.errors import DataFormatError
from data_pipeline.props_writer import write_props
from data_pipeline.readers import read_sentences
from data_pipeline.readers.conll05 import read_conll05
from data_pipeline.sentence import Span
from tests.conftest import FIXTURES, shared_path

RELEASE = ("conll05st", "conll05st-release")
MINI = FIXTURES / "readers" / "test.wsj"
PASTED = FIXTURES / "readers" / "test.wsj.pasted"
LAYERS = ("words", "props", "synt.cha", "ne")


def _blocks(path):
    """Sentences of a column file as lists of whitespace-split rows, read without the reader."""
    opener = gzip.open if str(path).endswith(".gz") else open
    with opener(path, "rt", encoding="utf-8") as handle:
        lines = handle.read().split("\n")
    blocks, rows = [], []
    for line in lines + [""]:
        if line.strip():
            rows.append(line.split())
        elif rows:
            blocks.append(rows)
            rows = []
    return blocks


def _sentence_texts(path):
    """A plain layer file cut into sentence chunks (blank lines may carry spaces in the release)."""
    chunks, current = [], []
    for line in path.read_text(encoding="utf-8").split("\n"):
        if line.strip():
            current.append(line)
        elif current:
            chunks.append("\n".join(current))
            current = []
    return chunks + (["\n".join(current)] if current else [])


def _copy_mini(tmp_path, layers=LAYERS):
    split = tmp_path / "test.wsj"
    for layer in layers:
        shutil.copytree(MINI / layer, split / layer)
    return split


def _edit(path, line, new):
    """Replace 1-based ``line`` of a plain file (``None`` deletes it)."""
    lines = path.read_text(encoding="utf-8").split("\n")
    if new is None:
        del lines[line - 1]
    else:
        lines[line - 1] = new
    path.write_text("\n".join(lines), encoding="utf-8")


# --- official layout ------------------------------------------------------------------------------------------------


def test_mini_split_directory_words_syntax_and_predicates():
    sentences = read_conll05(MINI)
    words = _blocks(MINI / "words" / "test.wsj.words")
    props = _blocks(MINI / "props" / "test.wsj.props")
    assert len(sentences) == 3
    assert [s.words for s in sentences] == [[row[0] for row in block] for block in words]
    assert sentences[0].words == "No , it was n't Black Monday .".split()
    assert sentences[0].pos == ["UH", ",", "PRP", "AUX", "RB", "NNP", "NNP", "."]
    assert sentences[0].parse_bits == ["(S1(S(INTJ*)", "*", "(NP*)", "(VP*", "*", "(NP*", "*))", "*))"]
    assert sentences[0].predicates == [] and sentences[0].line == 1
    assert sentences[1].line == 10 and sentences[1].source.endswith("props/test.wsj.props")
    # Targets are the rows whose lemma is not '-', in order, one per bracket column.
    for sentence, block in zip(sentences, props):
        assert [(p.position, p.lemma) for p in sentence.predicates] == [
            (i, row[0]) for i, row in enumerate(block) if row[0] != "-"
        ]
        assert all(p.sense is None for p in sentence.predicates)
    fall = sentences[1].predicates[0]
    # Read off the paste printed in conll05st/SOURCE.md (tokens 0-based: "the"=2 … "Exchange"=6, "fall"=9).
    assert fall.lemma == "fall" and fall.position == 9
    assert fall.arguments == (
        Span(2, 6, "A1"), Span(8, 8, "AM-NEG"), Span(9, 9, "V"), Span(10, 10, "A4"), Span(11, 11, "AM-TMP"),
        Span(12, 29, "AM-TMP"),
    )
    # "say" in sentence 3 has a discontinuous A1: the C-A1 piece is kept raw and counted once.
    say = next(p for p in sentences[2].predicates if p.lemma == "say")
    assert [s.label for s in say.arguments] == ["A1", "A0", "V", "C-A1"]
    assert say.arguments[0] == Span(0, 14, "A1") and say.arguments[3].start == 19


def test_dispatcher_reads_the_same():
    assert read_sentences(MINI, "conll05") == read_conll05(MINI)
    with pytest.raises(ValueError, match="unknown format"):
        read_sentences(MINI, "conll09")


def test_section_files_are_concatenated_in_section_order(tmp_path):
    split = tmp_path / "train"
    for layer in ("words", "props", "synt.cha"):
        blocks = _sentence_texts(MINI / layer / f"test.wsj.{layer}")
        (split / layer).mkdir(parents=True)
        # Section 03 holds sentence 1, section 02 sentences 2-3: reading order must be 02 then 03.
        (split / layer / f"train.03.{layer}").write_text(blocks[0] + "\n\n", encoding="utf-8")
        with gzip.open(split / layer / f"train.02.{layer}.gz", "wt", encoding="utf-8") as handle:
            handle.write("\n\n".join(blocks[1:3]) + "\n\n")
    sentences = read_conll05(split)
    mini = read_conll05(MINI)
    assert [s.words for s in sentences] == [s.words for s in mini[1:]] + [mini[0].words]
    assert [s.predicates for s in sentences] == [s.predicates for s in mini[1:]] + [mini[0].predicates]
    assert sentences[0].source.endswith("train.02.props.gz") and sentences[2].source.endswith("train.03.props")
    assert sentences[2].line == 1
    (split / "synt.cha" / "train.03.synt.cha").rename(split / "synt.cha" / "train.04.synt.cha")
    with pytest.raises(DataFormatError, match="same files as props") as info:
        read_conll05(split)
    assert info.value.path.endswith("synt.cha")


def test_senses_layer_gives_predicate_senses(tmp_path):
    devel = shared_path(*RELEASE, "devel")
    split = tmp_path / "devel"
    n_sentences = 5
    for layer in ("props", "senses", "synt.cha"):
        (split / layer).mkdir(parents=True)
        with gzip.open(devel / layer / f"devel.24.{layer}.gz", "rt", encoding="utf-8") as handle:
            (split / layer / "all").write_text(handle.read(), encoding="utf-8")
        blocks = _sentence_texts(split / layer / "all")
        (split / layer / "all").unlink()
        (split / layer / f"devel.24.{layer}").write_text("\n\n".join(blocks[:n_sentences]) + "\n\n", encoding="utf-8")
    # devel words are Penn Treebank text, not in the release: a masked placeholder per token stands in.
    (split / "words").mkdir()
    synt = _blocks(split / "synt.cha" / "devel.24.synt.cha")
    (split / "words" / "devel.24.words").write_text(
        "".join("[WORD]\n" * len(block) + "\n" for block in synt), encoding="utf-8"
    )
    sentences = read_conll05(split)
    senses = _blocks(split / "senses" / "devel.24.senses")
    assert len(sentences) == n_sentences
    assert sentences[0].predicates[0].lemma == "take" and sentences[0].predicates[0].sense == "01"
    for sentence, block in zip(sentences, senses):
        assert [p.sense for p in sentence.predicates] == [block[p.position][0] for p in sentence.predicates]
        assert all(row[0] == "-" for i, row in enumerate(block) if i not in sentence.predicate_positions)
    # A sense on a row that is not a target is an error naming the senses file and line.
    _edit(split / "senses" / "devel.24.senses", 1, "05")
    with pytest.raises(DataFormatError) as info:
        read_conll05(split)
    assert info.value.path.endswith("devel.24.senses") and info.value.line == 1


@pytest.mark.parametrize(
    "split, expected",
    [("test.wsj", (2416, 56684, 5267)), ("test.brown", (426, 7159, 804))],
)
def test_public_test_sets(split, expected):
    directory = shared_path(*RELEASE, split)
    sentences = read_conll05(directory)
    words = _blocks(directory / "words" / f"{split}.words.gz")
    assert (len(sentences), sum(len(s) for s in sentences), sum(len(s.predicates) for s in sentences)) == expected
    assert sum(len(b) for b in words) == expected[1]
    assert all(s.pos is not None and len(s.pos) == len(s) == len(s.parse_bits) for s in sentences)
    # Each target has one V span starting on its row (phrasal verbs' V also covers the particle: "chalking up").
    v_starts = [[a.start for a in p.arguments if a.label == "V"] for s in sentences for p in s.predicates]
    assert v_starts == [[p.position] for s in sentences for p in s.predicates]


@pytest.mark.parametrize("split", ["test.wsj", "test.brown"])
def test_props_written_back_equal_the_gold_file(split, tmp_path):
    directory = shared_path(*RELEASE, split)
    gold = directory / "props" / f"{split}.props.gz"
    sentences = read_conll05(directory)
    out = tmp_path / f"{split}.props.gz"
    assert write_props(sentences, out) == len(sentences)
    assert _blocks(out) == _blocks(gold)
    # Plain text to an open stream gives the same rows.
    stream = io.StringIO()
    write_props(sentences, stream)
    plain = tmp_path / "plain.props"
    plain.write_text(stream.getvalue(), encoding="utf-8")
    assert _blocks(plain) == _blocks(gold)


# --- pasted files ---------------------------------------------------------------------------------------------------


def test_pasted_file_equals_the_layers_it_was_pasted_from():
    wsj = shared_path(*RELEASE, "test.wsj")
    by_line = {s.line: s for s in read_conll05(wsj)}
    pasted = read_conll05(PASTED)
    assert [s.line for s in pasted] == [1, 13]
    for sentence, line in zip(pasted, (2722, 8081)):
        original = by_line[line]
        assert (sentence.words, sentence.pos, sentence.parse_bits) == (original.words, original.pos, original.parse_bits)
        assert sentence.predicates == original.predicates


def test_pasted_variants_find_the_lemma_column(tmp_path):
    mini = read_conll05(MINI)
    layers = {layer: (MINI / layer / f"test.wsj.{layer}").read_text(encoding="utf-8").split("\n") for layer in LAYERS}

    def paste(names, target):
        target.write_text("\n".join("\t".join(layers[n][i] for n in names).strip() for i in range(len(layers["words"]))),
                          encoding="utf-8")
        return read_conll05(target)

    with_ne = paste(("words", "synt.cha", "ne", "props"), tmp_path / "with_ne.txt")
    assert [s.predicates for s in with_ne] == [s.predicates for s in mini]
    assert [s.parse_bits for s in with_ne] == [s.parse_bits for s in mini]
    words_only = paste(("words", "props"), tmp_path / "words_props.txt")
    assert [s.predicates for s in words_only] == [s.predicates for s in mini]
    assert all(s.pos is None and s.parse_bits is None for s in words_only)
    with pytest.raises(DataFormatError, match="lemma column"):
        paste(("props",), tmp_path / "props_only.txt")


# --- errors ---------------------------------------------------------------------------------------------------------


def test_missing_words_layer_explains_the_penn_treebank(tmp_path):
    split = _copy_mini(tmp_path, layers=("props", "synt.cha"))
    with pytest.raises(DataFormatError, match="Penn Treebank") as info:
        read_conll05(split)
    assert info.value.path == str(split / "words") and info.value.line is None
    assert "test.wsj.words.gz" in info.value.message


def test_missing_words_of_the_real_devel_split():
    devel = shared_path(*RELEASE, "devel")
    with pytest.raises(DataFormatError, match="sections 02-21 .train. and 24 .devel.") as info:
        read_conll05(devel)
    assert "devel.24.words.gz" in info.value.message


def test_unbalanced_brackets(tmp_path):
    split = _copy_mini(tmp_path)
    props = split / "props" / "test.wsj.props"
    lines = props.read_text(encoding="utf-8").split("\n")
    assert lines[19].split() == ["-", "(A4*)", "*", "*", "*"]  # "apart", sentence 2
    _edit(props, 20, "-  (A4*  *  *  *")
    with pytest.raises(DataFormatError, match="unbalanced brackets") as info:
        read_conll05(split)
    assert info.value.path == str(props) and info.value.line == 20


def test_a_second_v_in_a_predicate_column_is_refused_at_its_line(tmp_path):
    """A column marks its predicate once: a second ``(V*)`` (here "apart", after "fall") is an error
    naming the props file and its line, in the split layout and the pasted one."""
    split = _copy_mini(tmp_path)
    props = split / "props" / "test.wsj.props"
    _edit(props, 20, "-  (V*)  *  *  *")
    with pytest.raises(DataFormatError, match=r"a second \(V\*\) in the predicate's column") as info:
        read_conll05(split)
    assert info.value.path == str(props) and info.value.line == 20
    assert str(info.value).startswith(f"{props}:20: ")
    pasted = tmp_path / "test.wsj.pasted"
    lines = (FIXTURES / "readers" / "test.wsj.pasted").read_text(encoding="utf-8").split("\n")
    row = 19  # "the", inside "remain"'s (A3* phrase; "remain" (V*) is line 18
    assert lines[row].split()[0] == "the" and lines[row - 2].split()[-1] == "(V*)"
    lines[row] = lines[row].rstrip()[:-1] + "(V*)"
    pasted.write_text("\n".join(lines), encoding="utf-8")
    with pytest.raises(DataFormatError, match=r"a second \(V\*\)") as info:
        read_conll05(pasted)
    assert (info.value.path, info.value.line) == (str(pasted), row + 1)


def test_wrong_column_counts(tmp_path):
    split = _copy_mini(tmp_path)
    props = split / "props" / "test.wsj.props"
    _edit(props, 12, "-  *  *  (AM-ADV*")  # one cell short
    with pytest.raises(DataFormatError, match="expected 5 columns") as info:
        read_conll05(split)
    assert (info.value.path, info.value.line) == (str(props), 12)
    split = _copy_mini(tmp_path / "b")
    props = split / "props" / "test.wsj.props"
    _edit(props, 19, "-  (V*)  *  *  *")  # "fall" no longer a target: 3 targets, 4 columns
    with pytest.raises(DataFormatError, match="3 targets but 4 argument columns") as info:
        read_conll05(split)
    assert (info.value.path, info.value.line) == (str(props), 10)
    split = _copy_mini(tmp_path / "c")
    words = split / "words" / "test.wsj.words"
    _edit(words, 3, "it it")
    with pytest.raises(DataFormatError, match="1 column") as info:
        read_conll05(split)
    assert (info.value.path, info.value.line) == (str(words), 3)


def test_layers_with_different_line_counts(tmp_path):
    split = _copy_mini(tmp_path)
    words = split / "words" / "test.wsj.words"
    _edit(words, 5, None)  # sentence 1 loses "n't": its blank line moves up to line 8
    with pytest.raises(DataFormatError, match="do not align") as info:
        read_conll05(split)
    assert (info.value.path, info.value.line) == (str(words), 8)
    split = _copy_mini(tmp_path / "b")
    synt = split / "synt.cha" / "test.wsj.synt.cha"
    synt.write_text("\n\n".join(_sentence_texts(synt)[:2]) + "\n\n", encoding="utf-8")  # 2 of 3 sentences
    with pytest.raises(DataFormatError, match="3 sentences") as info:
        read_conll05(split)
    assert info.value.line == 51 and info.value.path.endswith("props/test.wsj.props")


def test_non_utf8_bytes(tmp_path):
    split = _copy_mini(tmp_path)
    words = split / "words" / "test.wsj.words"
    raw = words.read_bytes().split(b"\n")
    raw[2] = b"it\xff"
    words.write_bytes(b"\n".join(raw))
    with pytest.raises(DataFormatError, match="UTF-8") as info:
        read_conll05(split)
    assert (info.value.path, info.value.line) == (str(words), 3)
