"""Constituency -> dependency conversion: valid trees on all of CoNLL-2005 test, hand-derived heads, errors, EWT UAS."""

import pytest

from data_pipeline.errors import DataFormatError
from data_pipeline.head_rules import LABELS, find_heads, parse_tree, sentence_heads
from data_pipeline.readers.conll05 import read_conll05
from data_pipeline.sentence import Sentence
from tests.conftest import DATA, FIXTURES, shared_path

RELEASE = ("conll05st", "conll05st-release")


def _is_tree(heads):
    """Independent check: exactly one root, heads in range, every token reaches the root without a cycle."""
    n = len(heads)
    if heads.count(0) != 1 or any(not 0 <= h <= n for h in heads):
        return False
    for token in range(1, n + 1):
        seen, current = set(), token
        while current != 0:
            if current in seen:
                return False
            seen.add(current)
            current = heads[current - 1]
    return True


@pytest.mark.parametrize("split", ["test.wsj", "test.brown"])
def test_every_charniak_tree_gives_a_dependency_tree(split):
    sentences = read_conll05(shared_path(*RELEASE, split))
    for sentence in sentences:
        heads, labels = sentence_heads(sentence)
        assert len(heads) == len(labels) == len(sentence)
        assert _is_tree(heads), sentence.where()
        assert set(labels) <= set(LABELS)
        assert [labels[i] for i, h in enumerate(heads) if h == 0] == ["ROOT"]
        assert all(labels[i] == "P" for i, tag in enumerate(sentence.pos) if tag in {",", ".", "``", "''"})
        content, _ = sentence_heads(sentence, content_heads=True)
        assert _is_tree(content), sentence.where()


def test_tree_is_rebuilt_from_the_parse_bits():
    sentence = read_conll05(FIXTURES / "readers" / "test.wsj")[0]
    tree = parse_tree(sentence.parse_bits, sentence.pos, sentence.words)
    assert str(tree) == (
        "(S1 (S (INTJ (UH No)) (, ,) (NP (PRP it)) (VP (AUX was) (RB n't) (NP (NNP Black) (NNP Monday))) (. .)))"
    )
    assert [leaf.index for leaf in tree.leaves()] == list(range(8))


# Heads derived by hand from the rules in data_pipeline/head_rules.py (1-based, 0 = root), for real test.wsj trees.
def test_hand_derived_heads_no_it_was_nt_black_monday():
    # (S1 (S (INTJ No) (, ,) (NP it) (VP (AUX was) (RB n't) (NP Black Monday)) (. .)))
    # S: left search, VP found -> head of VP; VP: left search, AUX counts as VB -> "was" is the root.
    # NP Black Monday: rightmost noun -> Monday. NP "it" before the head in S -> SBJ; NP after the verb in VP -> OBJ.
    sentence = read_conll05(FIXTURES / "readers" / "test.wsj")[0]
    heads, labels = sentence_heads(sentence)
    assert heads == [4, 4, 4, 0, 4, 7, 4, 4]
    assert labels == ["VMOD", "P", "SBJ", "ROOT", "VMOD", "NMOD", "OBJ", "P"]
    # Content heads: "was" is a copula without VP complement, so the predicate NP (Monday) heads the VP.
    content, _ = sentence_heads(sentence, content_heads=True)
    assert content == [7, 7, 7, 7, 7, 7, 0, 7]


def test_hand_derived_heads_hoare_govett_is_acting_as():
    # (S (NP Hoare Govett) (VP (AUX is) (VP (VBG acting) (PP (IN as) (NP (NP the consortium 's) investment bankers)))) .)
    # Collins: VP -> AUX "is" (as VB) heads; inner VP -> VBG "acting"; PP (right search) -> IN "as";
    # NP -> rightmost noun "bankers"; inner NP ends in POS -> "'s" heads "the consortium 's".
    sentence = read_conll05(FIXTURES / "readers" / "test.wsj.pasted")[0]
    assert sentence.words[:5] == ["Hoare", "Govett", "is", "acting", "as"]
    heads, labels = sentence_heads(sentence)
    assert heads == [2, 3, 0, 3, 4, 8, 8, 10, 10, 5, 3]
    assert labels == ["NMOD", "SBJ", "ROOT", "VMOD", "VMOD", "NMOD", "NMOD", "NMOD", "NMOD", "PMOD", "P"]
    # Content heads: the auxiliary VP is headed by its VP complement, the PP by its NP.
    content, _ = sentence_heads(sentence, content_heads=True)
    assert content == [2, 4, 4, 0, 10, 8, 8, 10, 10, 4, 4]


def test_hand_derived_heads_coordinated_clauses():
    # (S (S (NP Two workers) (VP died)) (CC and) (S (NP six) (VP remain (PP in (NP the hospital)))) (. .))
    # Top S: left search finds the first S -> "died" is the root; "and" and the second clause attach to it.
    # NP "six": no noun, no NP, no $/ADJP/PRN -> rightmost CD.
    sentence = read_conll05(FIXTURES / "readers" / "test.wsj.pasted")[1]
    assert sentence.words == "Two workers died and six remain in the hospital .".split()
    heads, labels = sentence_heads(sentence)
    assert heads == [2, 3, 0, 3, 6, 3, 6, 9, 7, 3]
    assert labels == ["NMOD", "SBJ", "ROOT", "VMOD", "SBJ", "VMOD", "VMOD", "NMOD", "PMOD", "P"]
    content, _ = sentence_heads(sentence, content_heads=True)
    assert content == [2, 3, 0, 3, 6, 3, 9, 9, 6, 3]


def test_np_coordination_takes_the_first_conjunct():
    # From test.wsj: "Pratt & Whitney is a unit of ..." has (NP (NNP Pratt) (CC &) (NNP Whitney)).
    tree = parse_tree(["(S(NP*", "*", "*)", "(VP*)", "*)"], ["NNP", "CC", "NNP", "VBZ", "."])
    heads, labels = find_heads(tree)
    assert heads == [4, 1, 1, 0, 4] and labels[0] == "SBJ"


@pytest.mark.parametrize(
    "bits, line, fragment",
    [
        (["(S(NP*)", "(VP*", "*)"], 12, "still open"),
        (["(S(NP*)", "(VP*)))", "*"], 11, "never opened"),
        (["(S*)", "(S*", "*)"], 11, "second top-level"),
        (["*", "(S*", "*)"], 10, "outside every phrase"),
        (["(S(NP*)", "(VP", "*))"], 11, "parse bit"),
    ],
)
def test_malformed_parse_bits(bits, line, fragment):
    with pytest.raises(DataFormatError, match=fragment) as info:
        parse_tree(bits, ["PRP", "VBD", "."], ["It", "fell", "."], path="x.synt.cha", first_line=10)
    assert (info.value.path, info.value.line) == ("x.synt.cha", line)


def test_missing_tree_and_length_mismatch():
    with pytest.raises(DataFormatError, match="constituency tree"):
        sentence_heads(Sentence(words=["It"], pos=["PRP"], source="f", line=3))
    with pytest.raises(DataFormatError, match="as many POS tags"):
        parse_tree(["(S*", "*)"], ["PRP"])
    with pytest.raises(DataFormatError, match="empty"):
        parse_tree([], [])


def test_uas_against_ud_gold_heads_on_ewt():
    """Sanity figure: heads from the EWT trees against the gold UD heads of the same tokens (different schemes)."""
    from data_pipeline.readers.conll12 import read_conll12
    from data_pipeline.readers.conllu import read_conllu
    from lisa_tf.evaluation.parse_eval import is_punctuation

    trees = read_conll12(DATA / "propbank-ewt" / "dev.gold_conll.gz")
    gold = read_conllu(DATA / "propbank-ewt" / "dev.conllu.gz")
    assert len(trees) == len(gold)
    scores = {}
    for content in (False, True):
        correct = total = 0
        for sentence, ud in zip(trees, gold):
            assert sentence.words == ud.words
            heads, _ = sentence_heads(sentence, content_heads=content)
            assert _is_tree(heads)
            for word, head, gold_head in zip(ud.words, heads, ud.heads):
                if not is_punctuation(word):
                    total += 1
                    correct += head == gold_head
        scores[content] = correct / total
    # UD heads content words; Collins heads function words (prepositions, auxiliaries, complementizers).
    assert scores[True] > 0.75 and scores[True] > scores[False] + 0.25
