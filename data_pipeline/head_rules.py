"""Constituency trees to dependency heads with Collins-style head rules, in pure Python.

LISA (Strubell et al. 2018, §2.2) supervises one attention head with dependency parents. Corpora that only
carry constituency trees (CoNLL-2005 ``synt.cha``, CoNLL-2012 parse bits) are converted here:

1. :func:`parse_tree` builds the tree from a CoNLL parse-bit column (``(S1(S(NP*``, ``*)``: each ``*``
   is the leaf ``(POS word)``), the POS column and the words.
2. :func:`find_heads` picks a head child in every phrase, so every word is headed by the lexical head of
   the lowest phrase that contains it and is not its own projection; the head of the whole tree is the root.
3. Each dependency gets a coarse label from the categories of the phrase where it attaches (below).

Head rules. The table is the one of Collins (1999, *Head-Driven Statistical Models for Natural Language
Parsing*, Appendix A, Table A.1): per parent category a search direction and a priority list. For each
category of the list in turn the children are scanned in the direction (left = from the first child,
right = from the last); the first match is the head. With no match the first child in the direction is the
head. NPs use Collins's special rule: last child ``POS`` → it; else the rightmost child in {NN, NNP, NNPS,
NNS, NX, POS, JJR}; else the leftmost NP; else the rightmost in {$, ADJP, PRN}; else the rightmost CD; else
the rightmost in {JJ, JJS, RB, QP}; else the last child. Coordination (Collins): if the chosen head child
is immediately preceded by a ``CC``/``CONJP`` that is not the first child, the child before the
coordinator is the head instead (skipping punctuation: ``X , nor Y``), so the first conjunct heads a
coordination.

Differences from Collins, all for the inputs this project reads:

* Function tags and indices are stripped (``NP-SBJ-1`` → ``NP``; ``-NONE-``/``-LRB-`` stay whole).
* Charniak's ``AUX``/``AUXG`` tags (``synt.cha``) match ``VB``/``VBG`` in the lists, so auxiliaries head
  their VP as in Collins's table (where ``did`` is ``VBD``).
* ``NML`` (OntoNotes/EWT NP-internal bracketing) is handled like ``NX`` (NP rule; listed next to NX).
* Root labels ``S1`` (Charniak), ``TOP``, ``ROOT`` and categories absent from the table (``EDITED``,
  ``META``, …) take their leftmost child.
* The "first child in the direction" fallbacks (and the NP rule's last child) skip punctuation children
  when the phrase has another child: Collins removed punctuation before finding heads, so a punctuation
  mark never heads a phrase here either.

Content heads. ``find_heads(tree, content_heads=True)`` then moves the head of PPs, SBARs, auxiliary VPs and
copular VPs to the content word (details in :func:`find_heads`), which is much closer to Universal
Dependencies: on the English EWT trees of ``data/propbank-ewt`` the unlabelled attachment score against the
gold UD heads (punctuation excluded) is about 43 % with the Collins heads and about 83 % with content heads.
The rest differs by scheme (UD attaches a coordinator to the following conjunct, makes the noun, not the
possessive marker, the head of a possessive, uses flat structures for names, etc.).

Coarse labels (after the Penn2Malt scheme of Yamada & Matsumoto 2003 / CoNLL-2007, reduced): with ``d`` a
dependent whose maximal projection ``M`` is a child of phrase ``P`` (whose head child is ``H``)

===========  ===================================================================================
``ROOT``     the head word of the sentence (head 0)
``P``        ``d`` is a punctuation tag (``, . : `` '' -LRB- -RRB- ( ) # HYPH NFP``)
``SBJ``      ``M`` is an NP (or has function tag ``SBJ``) before ``H`` in an ``S``/``SQ``/``SINV``
``OBJ``      ``M`` is an NP after ``H`` in a ``VP``
``NMOD``     ``P`` is nominal: NP, NX, NML, NAC, WHNP, QP
``PMOD``     ``P`` is PP or WHPP
``AMOD``     ``P`` is ADJP, ADVP, WHADJP, WHADVP
``SBAR``     ``P`` is SBAR (the clause below its complementizer)
``VMOD``     ``P`` is verbal or clausal: VP, S, SQ, SINV, SBARQ, RRC
``DEP``      anything else
===========  ===================================================================================
"""

from __future__ import annotations

import dataclasses
import re
from typing import Optional, Sequence

from data_pipeline.errors import DataFormatError
from data_pipeline.sentence import Sentence

_PARSE_BIT = re.compile(r"^((?:\([^()*\s]+)*)\*(\)*)$")

PUNCTUATION_TAGS = frozenset({",", ".", ":", "``", "''", "-LRB-", "-RRB-", "(", ")", "#", "HYPH", "NFP"})
LABELS = ("ROOT", "P", "SBJ", "OBJ", "NMOD", "PMOD", "AMOD", "SBAR", "VMOD", "DEP")

LEFT, RIGHT = "left", "right"

# Collins (1999), Table A.1. NP is handled by _np_head_child.
HEAD_TABLE: dict[str, tuple[str, tuple[str, ...]]] = {
    "ADJP": (LEFT, ("NNS", "QP", "NN", "$", "ADVP", "JJ", "VBN", "VBG", "ADJP", "JJR", "NP", "JJS", "DT", "FW",
                    "RBR", "RBS", "SBAR", "RB")),
    "ADVP": (RIGHT, ("RB", "RBR", "RBS", "FW", "ADVP", "TO", "CD", "JJR", "JJ", "IN", "NP", "JJS", "NN")),
    "CONJP": (RIGHT, ("CC", "RB", "IN")),
    "FRAG": (RIGHT, ()),
    "INTJ": (LEFT, ()),
    "LST": (RIGHT, ("LS", ":")),
    "NAC": (LEFT, ("NN", "NNS", "NNP", "NNPS", "NP", "NAC", "EX", "$", "CD", "QP", "PRP", "VBG", "JJ", "JJS", "JJR",
                   "ADJP", "FW")),
    "PP": (RIGHT, ("IN", "TO", "VBG", "VBN", "RP", "FW")),
    "PRN": (LEFT, ()),
    "PRT": (RIGHT, ("RP",)),
    "QP": (LEFT, ("$", "IN", "NNS", "NN", "JJ", "RB", "DT", "CD", "NCD", "QP", "JJR", "JJS")),
    "RRC": (RIGHT, ("VP", "NP", "ADVP", "ADJP", "PP")),
    "S": (LEFT, ("TO", "IN", "VP", "S", "SBAR", "ADJP", "UCP", "NP")),
    "SBAR": (LEFT, ("WHNP", "WHPP", "WHADVP", "WHADJP", "IN", "DT", "S", "SQ", "SINV", "SBAR", "FRAG")),
    "SBARQ": (LEFT, ("SQ", "S", "SINV", "SBARQ", "FRAG")),
    "SINV": (LEFT, ("VBZ", "VBD", "VBP", "VB", "MD", "VP", "S", "SINV", "ADJP", "NP")),
    "SQ": (LEFT, ("VBZ", "VBD", "VBP", "VB", "MD", "VP", "SQ")),
    "UCP": (RIGHT, ()),
    "VP": (LEFT, ("TO", "VBD", "VBN", "MD", "VBZ", "VB", "VBG", "VBP", "VP", "ADJP", "NN", "NNS", "NP")),
    "WHADJP": (LEFT, ("CC", "WRB", "JJ", "ADJP")),
    "WHADVP": (RIGHT, ("CC", "WRB")),
    "WHNP": (LEFT, ("WDT", "WP", "WP$", "WHADJP", "WHPP", "WHNP")),
    "WHPP": (RIGHT, ("IN", "TO", "FW")),
}
NP_LIKE = frozenset({"NP", "NX", "NML"})
_NP_NOUNS = frozenset({"NN", "NNP", "NNPS", "NNS", "NX", "NML", "POS", "JJR"})
# Charniak's auxiliary tags, matched as the PTB verb tags they stand for.
_TAG_ALIASES = {"AUX": "VB", "AUXG": "VBG"}

_NOMINAL = frozenset({"NP", "NX", "NML", "NAC", "WHNP", "QP"})
_PREPOSITIONAL = frozenset({"PP", "WHPP"})
_ADJECTIVAL = frozenset({"ADJP", "ADVP", "WHADJP", "WHADVP"})
_VERBAL = frozenset({"VP", "S", "SQ", "SINV", "SBARQ", "RRC"})
_SUBJECT_CLAUSES = frozenset({"S", "SQ", "SINV"})
# Content-head mode (find_heads(content_heads=True)).
_CLAUSES = frozenset({"S", "SQ", "SINV", "SBAR", "SBARQ", "FRAG"})
_AUXILIARY_TAGS = frozenset({"MD", "TO", "VB", "VBD", "VBG", "VBN", "VBP", "VBZ"})
_COPULAS = frozenset({"be", "is", "are", "was", "were", "been", "being", "am", "'s", "'re", "'m", "s", "re", "m"})
_PREDICATIVE = frozenset({"NP", "ADJP", "PP", "ADVP", "NML", "UCP"})


@dataclasses.dataclass
class Tree:
    """A constituency tree node.

    Attributes:
        label: the label as written (``NP-SBJ``); a preterminal's label is its POS tag.
        children: sub-trees, empty for a preterminal.
        index: 0-based token index for a preterminal, ``None`` for a phrase.
        word: the token of a preterminal.
    """

    label: str
    children: list["Tree"] = dataclasses.field(default_factory=list)
    index: Optional[int] = None
    word: Optional[str] = None

    @property
    def category(self) -> str:
        """The label without function tags and indices (``NP-SBJ-1`` → ``NP``)."""
        return category(self.label)

    @property
    def is_leaf(self) -> bool:
        return self.index is not None

    def leaves(self) -> list["Tree"]:
        """Preterminals in order."""
        if self.is_leaf:
            return [self]
        return [leaf for child in self.children for leaf in child.leaves()]

    def __str__(self) -> str:
        if self.is_leaf:
            return f"({self.label} {self.word if self.word is not None else '*'})"
        return f"({self.label} {' '.join(str(c) for c in self.children)})"


def category(label: str) -> str:
    """Phrase category of a label: function tags (``-SBJ``) and indices (``-1``, ``=2``) removed."""
    if label.startswith("-"):
        return label  # -NONE-, -LRB-, -RRB-
    return re.split(r"[-=]", label, maxsplit=1)[0] or label


def parse_tree(
    parse_bits: Sequence[str],
    pos: Sequence[str],
    words: Optional[Sequence[str]] = None,
    path: Optional[str] = None,
    first_line: Optional[int] = None,
) -> Tree:
    """Build the tree of one sentence from its parse-bit column.

    Args:
        parse_bits: one cell per token, ``(LABEL(LABEL*``, ``*``, ``*))``; ``*`` stands for the token's leaf.
        pos: POS tags (the preterminal labels), one per token.
        words: tokens (kept on the leaves), or ``None``.
        path, first_line: where the column comes from, for error messages (line of token 0).

    Raises:
        DataFormatError: a cell that is not a parse bit, a token outside every phrase, a close with nothing
            open, a phrase left open, more than one top-level phrase, or columns of different lengths.
    """

    def line_of(i: int) -> Optional[int]:
        return None if first_line is None else first_line + i

    n = len(parse_bits)
    if n == 0:
        raise DataFormatError(path, first_line, "expected a sentence of at least one token, found an empty one")
    if len(pos) != n or (words is not None and len(words) != n):
        raise DataFormatError(
            path, first_line, f"expected as many POS tags and words as parse bits ({n}), found {len(pos)} POS tags"
            + ("" if words is None else f" and {len(words)} words")
        )
    stack: list[Tree] = []
    root: Optional[Tree] = None
    for i, bit in enumerate(parse_bits):
        match = _PARSE_BIT.match(bit)
        if match is None:
            raise DataFormatError(path, line_of(i), f"expected a parse bit like '(S(NP*', '*' or '*))', found {bit!r}")
        for label in match.group(1).split("(")[1:]:
            if root is not None:
                raise DataFormatError(
                    path, line_of(i), f"expected one tree per sentence, found a second top-level phrase '({label}' here"
                )
            node = Tree(label)
            if stack:
                stack[-1].children.append(node)
            stack.append(node)
        if not stack:
            raise DataFormatError(path, line_of(i), f"expected token {i + 1} inside a phrase, found {bit!r} outside every phrase")
        stack[-1].children.append(Tree(pos[i], index=i, word=None if words is None else words[i]))
        for _ in match.group(2):
            if not stack:
                raise DataFormatError(path, line_of(i), f"unbalanced brackets: {bit!r} closes a phrase that was never opened")
            node = stack.pop()
            if not stack:
                root = node
    if stack:
        raise DataFormatError(
            path, line_of(n - 1), f"unbalanced brackets: {len(stack)} phrase(s) ('({stack[-1].label}' …) still open at the end of the sentence"
        )
    assert root is not None
    return root


def _tag(node: Tree) -> str:
    cat = node.category
    return _TAG_ALIASES.get(cat, cat) if node.is_leaf else cat


def _is_punct(node: Tree) -> bool:
    return node.is_leaf and node.label in PUNCTUATION_TAGS


def _first(children: Sequence[Tree], direction: str) -> int:
    """First child in ``direction``, skipping punctuation when something else is there."""
    order = range(len(children)) if direction == LEFT else range(len(children) - 1, -1, -1)
    for i in order:
        if not _is_punct(children[i]):
            return i
    return order[0]


def _search(children: Sequence[Tree], direction: str, categories: Sequence[str]) -> Optional[int]:
    order = list(range(len(children))) if direction == LEFT else list(range(len(children) - 1, -1, -1))
    tags = [_tag(c) for c in children]
    for wanted in categories:
        for i in order:
            if tags[i] == wanted:
                return i
    return None


def _search_set(children: Sequence[Tree], direction: str, categories: frozenset[str]) -> Optional[int]:
    order = range(len(children)) if direction == LEFT else range(len(children) - 1, -1, -1)
    for i in order:
        if _tag(children[i]) in categories:
            return i
    return None


def _np_head_child(children: Sequence[Tree]) -> int:
    if _tag(children[-1]) == "POS":
        return len(children) - 1
    for direction, wanted in (
        (RIGHT, _NP_NOUNS),
        (LEFT, frozenset({"NP"})),
        (RIGHT, frozenset({"$", "ADJP", "PRN"})),
        (RIGHT, frozenset({"CD"})),
        (RIGHT, frozenset({"JJ", "JJS", "RB", "QP"})),
    ):
        found = _search_set(children, direction, wanted)
        if found is not None:
            return found
    return _first(children, RIGHT)


def head_child(node: Tree, content_heads: bool = False) -> int:
    """Index of the head child of a phrase (Collins 1999 rules with the differences in the module docstring).

    With ``content_heads`` the Collins choice is then moved to the content word (see :func:`find_heads`).
    """
    h = _collins_head_child(node)
    return _content_head_child(node, h) if content_heads else h


def _content_head_child(node: Tree, h: int) -> int:
    children = node.children
    head = children[h]
    cat = node.category
    right = children[h + 1:]
    if cat in _PREPOSITIONAL or (cat == "SBAR" and (head.is_leaf or head.category.startswith("WH"))):
        wanted = _CLAUSES if cat == "SBAR" else None
        for offset, child in enumerate(right, start=h + 1):
            if not child.is_leaf and (wanted is None or child.category in wanted):
                return offset
        return h
    if cat in ("VP", "SQ", "SINV") and head.is_leaf and _tag(head) in _AUXILIARY_TAGS:
        for offset, child in enumerate(right, start=h + 1):
            if child.category == "VP":
                return offset
        if head.word is not None and head.word.lower() in _COPULAS:
            for offset, child in enumerate(right, start=h + 1):
                if child.category in _PREDICATIVE:
                    return offset
    return h


def _collins_head_child(node: Tree) -> int:
    children = node.children
    if len(children) == 1:
        return 0
    cat = node.category
    if cat in NP_LIKE:
        h = _np_head_child(children)
    elif cat in HEAD_TABLE:
        direction, categories = HEAD_TABLE[cat]
        h = _search(children, direction, categories)
        if h is None:
            h = _first(children, direction)
    else:
        h = _first(children, LEFT)
    if h >= 2 and _tag(children[h - 1]) in ("CC", "CONJP"):
        # The conjunct before the coordinator; a comma between them is skipped ("X , nor Y").
        for j in range(h - 2, -1, -1):
            if not _is_punct(children[j]):
                return j
    return h


def _label(parent: Tree, child: Tree, child_position: int, head_position: int) -> str:
    cat = parent.category
    child_cat = child.category
    if cat in _SUBJECT_CLAUSES and child_position < head_position and (
        child_cat == "NP" or "SBJ" in child.label.split("-")[1:]
    ):
        return "SBJ"
    if cat == "VP" and child_cat == "NP" and child_position > head_position:
        return "OBJ"
    if cat in _NOMINAL:
        return "NMOD"
    if cat in _PREPOSITIONAL:
        return "PMOD"
    if cat in _ADJECTIVAL:
        return "AMOD"
    if cat == "SBAR":
        return "SBAR"
    if cat in _VERBAL:
        return "VMOD"
    return "DEP"


def find_heads(tree: Tree, content_heads: bool = False) -> tuple[list[int], list[str]]:
    """1-based dependency heads (0 = root) and coarse labels for the leaves of ``tree``, in token order.

    Args:
        tree: from :func:`parse_tree`.
        content_heads: ``False`` (default) keeps Collins's function-word heads. ``True`` moves the head to the
            content word, closer to Universal Dependencies / Stanford basic with copula as dependent: a PP is
            headed by its object (the first phrase after the preposition), an SBAR by its clause, a VP (or
            SQ/SINV) whose head is an auxiliary verb, ``MD`` or ``TO`` by its VP complement, and a VP whose head
            is a form of *be* with no VP complement by its predicate (NP, ADJP, PP, ADVP).
    """
    leaves = tree.leaves()
    n = len(leaves)
    heads = [-1] * n
    labels = [""] * n

    def lexical_head(node: Tree) -> int:
        if node.is_leaf:
            return node.index
        child_heads = [lexical_head(c) for c in node.children]
        h = head_child(node, content_heads)
        for position, (child, token) in enumerate(zip(node.children, child_heads)):
            if position != h:
                heads[token] = child_heads[h] + 1
                labels[token] = "P" if leaves[token].label in PUNCTUATION_TAGS else _label(node, child, position, h)
        return child_heads[h]

    top = lexical_head(tree)
    heads[top] = 0
    labels[top] = "ROOT"
    return heads, labels


def sentence_heads(sentence: Sentence, content_heads: bool = False) -> tuple[list[int], list[str]]:
    """Heads (1-based, 0 = root) and coarse labels of a sentence from its parse bits and POS.

    ``content_heads`` as in :func:`find_heads`.

    Raises:
        DataFormatError: the sentence has no parse bits or POS, or they do not form one tree.
    """
    if sentence.parse_bits is None or sentence.pos is None:
        raise DataFormatError(
            sentence.source, sentence.line, "expected a constituency tree (parse bits and POS) to derive heads from, found none"
        )
    tree = parse_tree(sentence.parse_bits, sentence.pos, sentence.words, sentence.source, sentence.line)
    return find_heads(tree, content_heads)
