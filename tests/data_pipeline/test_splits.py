"""read_split: a data file without sentences is an error; a parse must have the data's words."""

from __future__ import annotations

import gzip

import pytest

from benchmarks.fuzz_readers import target
from data_pipeline.errors import DataFormatError
from data_pipeline.readers import FORMATS
from data_pipeline.splits import read_split
from tests.conftest import shared_path

NAMES = {"conll05": "train.pasted", "conll12": "train.gold_conll", "lisa": "train.lisa", "conllu": "train.conllu"}
EMPTY = {"empty": b"", "blank lines": b"\n \n\t\n\r\n", "empty gzip": gzip.compress(b"", mtime=0)}


@pytest.mark.parametrize("fmt", FORMATS)
@pytest.mark.parametrize("content", sorted(EMPTY))
def test_a_data_file_without_sentences_is_an_error(tmp_path, fmt, content):
    path = tmp_path / NAMES[fmt]
    path.write_bytes(EMPTY[content])
    with pytest.raises(DataFormatError, match=f"no sentences found; expected {fmt} data: ") as caught:
        read_split(str(path), fmt)
    assert (caught.value.path, caught.value.line) == (str(path), None)


@pytest.mark.parametrize("fmt, text", [
    ("conllu", "# sent_id = 1\n# text = nothing follows\n\n"),
    ("conll12", "#begin document (empty); part 000\n\n#end document\n"),
])
def test_a_file_of_comments_or_document_markers_only_is_an_error(tmp_path, fmt, text):
    path = tmp_path / NAMES[fmt]
    path.write_text(text, encoding="utf-8")
    with pytest.raises(DataFormatError, match=f"{path}: no sentences found; expected {fmt} data"):
        read_split(str(path), fmt)


def test_a_conll05_split_directory_with_empty_layers_is_an_error(tmp_path):
    split = tmp_path / "test.wsj"
    for layer in ("words", "props", "synt.cha"):
        (split / layer).mkdir(parents=True)
        (split / layer / f"test.wsj.{layer}").write_text("\n", encoding="utf-8")
    with pytest.raises(DataFormatError, match=f"{split}: no sentences found; expected conll05 data"):
        read_split(str(split), "conll05")



def _write_parse_pair(tmp_path, edit_data=None, edit_parse=None):
    """Aligned real excerpts of PropBank-EWT dev (.gold_conll and its CoNLL-U), each line list optionally edited."""
    files = target("parse").files
    data, parse = list(files["dev.gold_conll"]), list(files["dev.conllu"])
    data = edit_data(data) if edit_data else data
    parse = edit_parse(parse) if edit_parse else parse
    (tmp_path / "dev.gold_conll").write_text("\n".join(data) + "\n", encoding="utf-8")
    (tmp_path / "dev.conllu").write_text("\n".join(parse) + "\n", encoding="utf-8")
    return str(tmp_path / "dev.gold_conll"), str(tmp_path / "dev.conllu")


def _set_word(lines, number, column, word):
    """``lines`` with the cell ``column`` of line ``number`` (1-based) replaced by ``word``."""
    separator = "\t" if "\t" in lines[number - 1] else "   "
    cells = lines[number - 1].split("\t") if separator == "\t" else lines[number - 1].split()
    assert cells[column] != word
    cells[column] = word
    return lines[: number - 1] + [separator.join(cells)] + lines[number:]


def _token_lines(lines, sentence):
    """1-based numbers of the token lines of sentence ``sentence`` (0-based) of a column file."""
    blocks, current = [], []
    for number, line in enumerate(lines, start=1):
        if line.strip() and not line.startswith("#"):
            current.append(number)
        elif not line.strip() and current:
            blocks.append(current)
            current = []
    return (blocks + [current])[sentence]


@pytest.mark.parametrize("sentence, word, replacement", [(1, 6, "individual"), (3, 29, "not")])
def test_a_parse_word_that_differs_from_the_data_is_an_error_naming_both_places(tmp_path, sentence, word, replacement):
    # Only token counts were compared: a parse of other words with the same length was attached silently.
    # Sentence 4 of the excerpt has a range line (29-30 didn't) before its word 30, so lines are not first + i.
    lines = target("parse").files["dev.conllu"]
    parse_line = _word_lines(lines, sentence)[word]
    data_line = _token_lines(target("parse").files["dev.gold_conll"], sentence)[word]
    data, parse = _write_parse_pair(tmp_path, edit_parse=lambda ls: _set_word(ls, parse_line, 1, replacement))
    original = lines[parse_line - 1].split("\t")[1]
    with pytest.raises(DataFormatError) as caught:
        read_split(data, "conll12", parse)
    assert (caught.value.path, caught.value.line) == (parse, parse_line)
    assert caught.value.message.startswith(
        f"sentence {sentence + 1}, word {word + 1}: expected {original!r} as in the data at {data}:{data_line}, "
        f"found {replacement!r} in the parse")


def _word_lines(lines, sentence):
    """Lines of the syntactic words of a CoNLL-U sentence (range lines left out)."""
    return [n for n in _token_lines(lines, sentence) if lines[n - 1].split("\t")[0].isdigit()]


@pytest.mark.parametrize("bracket, matches", [("(", True), ("[", False)])
def test_ptb_spellings_and_masked_words_of_the_data_match_the_parse(tmp_path, bracket, matches):
    # The data may spell brackets and quotes the Penn Treebank way, or mask words ([WORD] in PropBank skeletons);
    # a parse of the raw text spells them plainly. A bracket of another kind is still a different word.
    lines = target("parse").files["dev.gold_conll"]
    first, second = _token_lines(lines, 0), _token_lines(lines, 1)

    def ptb(data):
        data = _set_word(data, first[0], 3, "[WORD]")
        data = _set_word(data, second[0], 3, "-LRB-")
        return _set_word(data, second[1], 3, "``")

    def raw_text(parse):
        parse = _set_word(parse, _word_lines(parse, 1)[0], 1, bracket)
        return _set_word(parse, _word_lines(parse, 1)[1], 1, '"')

    data, parse = _write_parse_pair(tmp_path, ptb, raw_text)
    if not matches:
        with pytest.raises(DataFormatError, match=r"sentence 2, word 1: expected '-LRB-' as in the data .* found '\['"):
            read_split(data, "conll12", parse)
        return
    sentences = read_split(data, "conll12", parse)
    assert sentences[0].words[0] == "[WORD]" and sentences[1].words[:2] == ["-LRB-", "``"]
    assert all(s.heads for s in sentences)


def test_ud_english_ewt_parses_attach_to_the_propbank_skeletons_they_give_words_to():
    # Masked skeleton words ([WORD]) match the UD words; 40 documents whose sentences align one to one.
    from data_pipeline.readers.conll12 import read_conll12
    from data_pipeline.readers.conllu import attach_parse, read_conllu

    ud = shared_path("ud-english-ewt", "not-to-release", "sources")
    skeletons = sorted(shared_path("propbank-release", "data", "google", "ewt").glob("*/00/*.gold_skel.gz"))
    attached = 0
    for skeleton in skeletons:
        parse = ud / skeleton.parent.parent.name / skeleton.name.replace(".gold_skel.gz", ".conllu.gz")
        data, trees = read_conll12(skeleton), read_conllu(parse)
        if [len(s) for s in data] != [len(t) for t in trees]:
            continue
        joined = attach_parse(data, trees, parse)
        assert [s.heads for s in joined] == [t.heads for t in trees]
        attached += 1
        if attached == 40:
            break
    assert attached == 40


@pytest.mark.parametrize("fmt, name", [("conll12", "dev.gold_conll.gz"), ("conllu", "dev.conllu.gz")])
def test_a_limit_reads_the_first_sentences_only(tmp_path, fmt, name):
    """``limit`` keeps the first sentences, as a cut of the whole file would, and stops reading there: a
    broken line after them (here one appended to the shipped EWT dev file) is never reached."""
    from tests.conftest import DATA

    shipped = DATA / "propbank-ewt" / name
    whole = read_split(str(shipped), fmt)
    assert read_split(str(shipped), fmt, limit=25) == whole[:25]
    broken = tmp_path / name.replace(".gz", "")
    broken.write_text(gzip.decompress(shipped.read_bytes()).decode("utf-8") + "broken line\n\n", encoding="utf-8")
    with pytest.raises(DataFormatError):
        read_split(str(broken), fmt)

    def content(sentences):  # the copy has another path, and no parse file beside it
        return [(s.words, s.pos, s.predicates) for s in sentences]

    assert content(read_split(str(broken), fmt, limit=25)) == content(whole[:25])
