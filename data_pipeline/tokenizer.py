"""Tokeniser and sentence splitter for raw English text, following UD English-EWT / PTB conventions.

One ordered rule table (:data:`RULES`), executed two ways with identical tokens and offsets:

- :func:`tokenize` runs it with Python's :mod:`re` on one string and returns :class:`Token` objects;
- :func:`tokenize_tf` runs it in-graph on a ``[B]`` string tensor with **core** TensorFlow ops only
  (``tf.strings.regex_replace``, ``tf.strings.split``, ``tf.strings.length(unit="UTF8_CHAR")``,
  ``tf.strings.unicode_decode``/``unicode_encode``, ``tf.strings.regex_full_match``, ragged ops). tensorflow_text's ops are custom
  ops that a plain ``tensorflow`` build and TensorFlow Serving do not know, so a SavedModel using them
  only loads where tensorflow_text is imported; one using this tokeniser loads anywhere.

How the rules work. Each rule is a ``(pattern, rewrite)`` pair applied as a global replacement. The
rewrites only reorder captured groups and insert the separator ``SEP = "\\x01"`` at token boundaries and
around whitespace runs; splitting on ``SEP`` then gives pieces whose lengths in characters, summed,
give every piece's offsets, and whitespace and empty pieces are dropped. Before the rules the text is
mapped character for character (:data:`NORMALIZE`: ``SEP`` to a space, and the long s and Kelvin sign,
which RE2 folds onto ``s``/``k`` in some case-pair classes and Python does not, to those letters) and
gets a trailing ``SEP`` as end-of-text marker (Python's ``$`` also matches before a final newline,
RE2's does not). Token text is taken from the original string, so ``text[start:end] == token``.

1. **Lexer** (one rule): an alternation scanned left to right; every match is one token or one
   whitespace run, written back between separators. There is no lookahead in RE2, so alternatives that
   must end at a word boundary capture the following token too (group 3, also a complete token).
   Priority: whitespace; URLs (``http://``, ``www.``) and e-mail addresses (``a.b@c.com``,
   ``Rice@ENRON``, ``bmc...@patriot.net``, ``mailto:``); then, with the next token: domains and file
   names (``enron.com``, ``memo.doc``), newsgroups (``alt.animals.cat``), initialisms (``U.S.``,
   ``a.m.``, ``e.g.``, ``U.K``), a clitic after a space (``'s``), ``w/o``, ``L/C``, US and ZIP+4
   numbers, ordinals and decades (``9th``, ``1960s``), ``'07``, ``P&L``, ``:D``; then the abbreviation
   list (``Mr.``, ``Dr.``, ``St.``, ``etc.``, ``Inc.``, months, days, states…), one letter and its
   period (``J.``), dates and telephone numbers with hyphens (``713-853-1696``, ``01-Feb-02``),
   numbers (``3.5``, ``1,000``, ``10:30``, ``01/19/2001``; letters after digits are a token of their own,
   ``5 pm``, ``65 k``), words with a prefix EWT keeps hyphenated (:data:`PREFIXES`: ``e-mail``,
   ``non-stop``, ``anti-American``; every other hyphen is split: ``search - engine``, ``1969 - 1970``),
   words (letters, digits, ``_`` and inner apostrophes), hashtags, punctuation runs (``...``, ``!!``,
   ``?!``, ``--``, ``''``, emoticons) and any other single character.
2. **Whole-token rules**: each matches a complete token between separators, so it sees both ends of
   the token without lookarounds: clitics (``do n't``, ``ca n't``, ``wo n't``, ``it 's``, ``I 'm``,
   ``we 're``, ``we 'll``, ``I 'd``, ``I 've``, also with ``’`` and a backquote), ``I 'm a``,
   ``it s`` for "its" before a word the possessive cannot precede (``its a``, ``its not``:
   :data:`ITS_IS_BEFORE`), the spellings EWT splits as multiword tokens (:data:`GLUED`: ``can not``,
   ``gon na``, ``got ta``, ``do nt``, ``i m``…), and the **sentence-final period**: when the last token
   of the text ends in a period that is not the whole token (``etc.``, ``U.S.``), the period becomes a
   token of its own, as in EWT, where a sentence-final abbreviation's period is the full stop.

Portability. Classes are explicit sets written out in the patterns: no ``\\w``, ``\\d``, ``\\s``,
``\\b`` (Unicode-aware in Python, ASCII-only in RE2) and no case-insensitive flag; a "word character"
is anything that is not whitespace, separator or one of the listed punctuation and symbol characters,
so accented and non-Latin letters behave alike in both engines. A backslash only escapes ASCII
punctuation (RE2 has no ``\\uXXXX``). Rewrites use ``\\1``…``\\9`` only, read alike by both
(RE2 has no ``\\g<1>``, Python reads ``\\0`` as NUL). Both engines take the leftmost match and, among
alternatives, the first that matches. :func:`_check_portable` enforces the syntax when the module loads.

Work. Tokenising time is linear in the length of the text, in both engines. Each lexer match starts
where the previous one ended; an alternative that fails after scanning past the token taken would scan
the same stretch again from the next token start, so the two that can scan far are bounded: an e-mail
local part without ``@`` (``a-a-a-…``, ``a%b.c+…``) is given up after RFC 5321's 64 characters, a dotted
name without a known ending (``ab.ab.ab.…``) after 16 labels (:data:`_LOCAL_PART_CHARACTERS`,
:data:`_NAME_LABELS`; a longer address or name is tokenised like other text). Any other alternative
fails within the token taken and the one after it (a URL's scan after ``http://`` may go further, but
no later start repeats it), and the whole-token rules scan one token from each separator. The bounds are
counted repetitions, which RE2 compiles to one copy of the repeated pattern per count; the program stays
well within RE2's default memory, past which its DFA gives up and leaves every match to a far slower
matcher. Word lists are prefix trees (:func:`_words`), so trying one, as the name rule does after every
period, costs a character or two.

Sentences (:func:`split_sentences`; in-graph, with the same rules and core ops only,
:func:`split_sentences_tf`) are found on the tokens of a paragraph: a sentence
ends after ``.``, ``?``, ``!`` or a run of them (with the closing quotes and brackets attached) when
whitespace follows (``...`` only before a capital, digit or opening quote); after an abbreviation of
:data:`ENDERS` (``etc.``, ``Inc.``, ``p.m.``) only before a capitalised word, never after the other
abbreviations (``Mr.``, ``U.S.``, ``Sept.``) or initials; and, for e-mail text, before a capitalised
word after ``10:30 AM``, an emoticon, ``>>`` or a closing (``Regards``), before an e-mail header date
(``11/28/2000``) that follows a name, and before an opening word (``Please``, ``Thanks``…). Blank lines
always end a sentence; single line breaks are ordinary whitespace (the EWT ``# text`` lines keep no line
breaks to measure a rule on).

UD English-EWT test (``benchmarks/tokenizer.py``): 99.41 % of the gold syntactic words reproduced with
their spans, 95.96 % of the sentences tokenised entirely right; sentence-internal boundary F1 90.4
(precision 98.1 %; only 79.6 % of EWT's boundaries follow sentence-final punctuation), UD sentence F1
87.6.
"""

from __future__ import annotations

import functools
import re
import string
from typing import NamedTuple, Sequence

SEP = "\x01"


class Token(NamedTuple):
    """A token and its character span in the text it came from (``end`` exclusive)."""

    text: str
    start: int
    end: int


# ---------------------------------------------------------------------------------------------------
# character classes (bodies of [...] classes, identical in Python re and RE2)

_WS = "\t\n\x0b\x0c\r\x1c-\x1f \x85\xa0\u1680\u2000-\u200b\u2028\u2029\u202f\u205f\u2060\u3000\ufeff"


def _ascii_punct(keep: str = "") -> str:
    return "".join("\\" + c for c in string.punctuation if c != "_" and c not in keep)


_ASCII_PUNCT = _ascii_punct()
_UNI_PUNCT = (
    "\u00a1\u00a2\u00a3\u00a4\u00a5\u00a6\u00a7\u00a8\u00a9\u00ab\u00ac\u00ae\u00af\u00b0\u00b1\u00b4"
    "\u00b6\u00b7\u00b8\u00bb\u00bf\u00d7\u00f7"
    "\u2010-\u2027\u2030-\u205e\u20a0-\u20cf\u2100-\u214f\u2190-\u23ff\u2500-\u27bf\u2e00-\u2e7f"
    "\u3001-\u3003\u3008-\u3011\uff01-\uff0f\U0001f000-\U0001faff"
)
_P = _ASCII_PUNCT + _UNI_PUNCT                     # punctuation and symbols: never inside a word
_NOT_W = _WS + _P + SEP
W = f"[^{_NOT_W}]"                                 # word character (letters, digits, _ …)
L = f"[^{_NOT_W}0-9]"                              # letter-like word character


def _w_plus(chars: str) -> str:
    """Class of word characters and the given ASCII punctuation."""
    return f"[^{_WS}{_ascii_punct(keep=chars)}{_UNI_PUNCT}{SEP}]"


D = "[0-9]"
WS = f"[{_WS}]"
PUNCT = f"[{_P}]"
_APOS = "['\u2019`]"                               # apostrophes of clitics


def _ci(word: str) -> str:
    """Case-insensitive literal without a flag: ``"com"`` -> ``[Cc][Oo][Mm]``."""
    return "".join(f"[{c.upper()}{c.lower()}]" if c.isalpha() else re.escape(c) for c in word)


def _alt(items: Sequence[str]) -> str:
    return "(?:" + "|".join(items) + ")"


def _words(words: str, ci: bool = False) -> str:
    """Alternation of literal words as a prefix tree: ``"doc docx pdf"`` -> ``(?:doc(?:x)?|pdf)``.

    Where one word is a prefix of another the longer is tried first (so a prefix never wins over the
    longer word), and an attempt that fails costs a character or two rather than one try per word (the
    top-level domains are tried after every period of a name)."""

    def tree(items: set[str]) -> str:
        branches = [(_ci(c) if ci else re.escape(c)) + tree({w[1:] for w in items if w[:1] == c})
                    for c in sorted({w[0] for w in items if w})]
        if not branches:
            return ""
        body = _alt(branches) if len(branches) > 1 else branches[0]
        if "" not in items:
            return body
        return body + "?" if len(branches) > 1 else f"(?:{body})?"

    return f"(?:{tree(set((words.lower() if ci else words).split()))})"


# ---------------------------------------------------------------------------------------------------
# word lists

#: Abbreviations whose period belongs to the token (case as written; with the period, those of
#: :data:`ENDERS` may end a sentence).
ABBREVIATIONS = (
    "Mr Mrs Ms Mssrs Messrs Dr Drs Prof Gen Gov Sen Sens Rep Reps Rev Capt Lt Col Sgt Maj Cmdr Adm Hon "
    "Pres Supt Insp St Sts Mt Ft No Nos vs Vs v Jr Sr Inc Corp Co Ltd Bros LLC Assn Dept Univ "
    "Ave Blvd Rd Hwy Pl Ct Ln Sq Ste Apt "
    "Jan Feb Mar Apr Jun Jul Aug Sep Sept Oct Nov Dec Mon Tue Tues Wed Thu Thur Thurs Fri Sat Sun "
    "etc Etc al approx est ext Ext tel Tel fax Fax attn Attn dept misc Misc vol Vol pp pg ed eds fig Fig "
    "ca cf eg ie yrs hrs mins secs lb lbs oz ft sq Spec Arrv arrv Ph Mob Para Conf Sec Sc Esp esp "
    "Ala Ariz Ark Calif Colo Conn Del Fla Ga Ill Ind Kan Ky La Md Mass Mich Minn Miss Mo Mont Neb Nev "
    "Okla Ont Ore Pa Penn Tenn Tex Va Vt Wash Wis Wyo Que"
)
#: Top-level domains and file extensions that make ``name.tld`` one token (no country code that is also
#: an English word or word start, such as "it", "in", "me", "us", "no": "great.It was" is two words).
TLDS = (
    "com net org gov edu mil info biz uk au fr nl jp cn ru br nz za ie ch se dk tv cc ws fm io ly eu "
    "doc docx xls xlsx ppt pptx pdf txt rtf csv xml htm html shtml php asp aspx jsp cgi ssf jpg jpeg gif "
    "png bmp tif tiff zip exe dat log wav mp3 mp4 avi mov mpg wmv"
)
#: First components of Usenet newsgroup names (``alt.animals.cat``).
_NEWSGROUPS = "alt comp rec sci soc talk misc news ba"
#: Prefixes after which EWT keeps a hyphenated word whole.
PREFIXES = (
    "e non anti pre re mid co post pro multi ex counter semi sub cross neo psycho socio intra micro macro "
    "mini un mis arch over ultra infra bi tri dis meta pseudo quasi trans"
)
#: EWT multiword tokens written without apostrophe: second word -> the first words it follows; a token
#: that is exactly first + second (any case) is split.
GLUED = {
    "not": "can", "na": "gon wan", "ta": "got",
    "nt": "do does did is was are were have has had ca wo ai would could should",
    "m": "i", "ve": "i", "s": "that what there he let", "re": "you",
}

#: Words after which "its" is "it's" (EWT: "it s"): "its a", "its not", "its really" (lower case).
ITS_IS_BEFORE = (
    "a an the not really very all like still kind simply just also only been getting going gonna definitely "
    "now pretty too always never"
)

_CLITICS = [_ci("n") + _APOS + _ci("t")] + [_APOS + _ci(c) for c in ("s", "m", "d", "re", "ve", "ll")]


# ---------------------------------------------------------------------------------------------------
# the rule table


#: Longest e-mail local part (RFC 5321) and most labels of a domain or file name before its top-level
#: domain or extension: what bounds the lexer's work (module docstring). Names in text have a few labels
#: (EWT: at most 3); a bound in characters (253 for a domain name) would put one copy of the word class
#: per character into RE2's program, too large for its DFA.
_LOCAL_PART_CHARACTERS = 64
_NAME_LABELS = 16


def _lexer() -> tuple[str, str]:
    """The scanning rule: group 1 = single tokens (part A), 2 + 3 = token + right context, 4 = part B."""
    url_char = f"[^{_WS}{SEP}<>\"\u201c\u201d]"
    url_end = f"[^{_WS}{SEP}<>\"\u201c\u201d.,;:!?)'\\]}}]"
    url = _alt([_alt([_ci("http"), _ci("https"), _ci("ftp")]) + "://", _ci("www") + r"\."]) + f"{url_char}*{url_end}"
    local_part = f"{W}{_w_plus('.%+-')}{{0,{_LOCAL_PART_CHARACTERS - 1}}}"
    email = f"(?:{_ci('mailto')}:)?{local_part}@{W}+(?:[.\\-]{W}+)*"

    punct_runs = [
        "[.?!\u2026]+", r"\-+", r"\*+", r"=+", r"~+", r"#+", "<<", ">>", "''", "``", "\u2018\u2019",
        "\u2019\u2019", r"\|+", r"\++", r"\$+",
    ]
    emoticons = [r"[:;=]\-?[()\[\]/|]", r"\(:", r"\^_\^", "<3", r":'\("]
    punct_token = _alt(emoticons + punct_runs + [PUNCT])
    right = f"({SEP}|{WS}+|{punct_token})"

    with_right = _alt([
        f"{W}+(?:\\.{W}+){{0,{_NAME_LABELS - 1}}}\\.{_words(TLDS, ci=True)}",
        f"{_words(_NEWSGROUPS)}(?:\\.{W}+)+",
        f"{L}(?:\\.{L})+\\.?",
        f"{_APOS}{_alt(['s', 'S', 'm', 'M', 'd', 'D', 're', 'RE', 've', 'VE', 'll', 'LL'])}",
        f"{L}/{L}", "[Ww]/[Oo]ut", "[Ww]/",
        f"{D}{{3}}/{D}{{3}}\\-{D}{{4}}", f"{D}{{5}}\\-{D}{{4}}",
        f"{D}+{_words('st nd rd th s ST ND RD TH S')}",
        f"['\u2019]{D}{D}s?",
        f"{L}{L}?&{L}{L}?{L}?",
        r"[:;=]\-?[DPOpo]",
        f"{D}{{1,3}}\\-{D}{{4}}",
    ])
    part_a = _alt([f"{WS}+", url, email])
    part_b = _alt([
        f"{_words(ABBREVIATIONS)}\\.",
        "Yahoo!",
        f"{L}\\.",
        f"{D}+(?:\\-{D}+){{2,}}",
        f"{D}{{1,2}}\\-{L}{L}{L}\\-{D}{D}(?:{D}{D})?",
        f"\\+{D}+",
        f"{D}+'s",
        f"{D}+(?:[.,:/]{D}+)*",
        f"{_words(PREFIXES, ci=True)}\\-{W}+",
        f"{W}+(?:{_APOS}{W}+)*",
        f"#{L}{W}*",
        punct_token,
        f"[^{SEP}]",
    ])
    pattern = f"({part_a})|({with_right}){right}|({part_b})"
    return pattern, f"{SEP}\\1\\2\\4{SEP}{SEP}\\3{SEP}"


def _whole(token: str, rewrite_groups: Sequence[int]) -> tuple[str, str]:
    """A rule on a complete token: ``token`` (with groups) between separators, written back as the
    listed groups, each its own token."""
    return f"{SEP}{token}{SEP}", SEP + (SEP + SEP).join(f"\\{g}" for g in rewrite_groups) + SEP


def _build_rules() -> list[tuple[str, str]]:
    rules = [_lexer()]
    # clitics: do|n't, it|'s (the stem must end in a letter: 50's stays whole)
    rules.append(_whole(f"([^{SEP}]*?{L})({_alt(_CLITICS)})", (1, 2)))
    # I'ma -> I 'm a
    rules.append(_whole(f"([Ii])({_APOS}[mM])([aA])", (1, 2, 3)))
    # "its" followed by a word that cannot follow the possessive is EWT's "it s" (it's)
    rules.append((f"{SEP}([Ii]t)(s){SEP}((?:{SEP}|{WS})+)({_words(ITS_IS_BEFORE)}){SEP}",
                  f"{SEP}\\1{SEP}{SEP}\\2{SEP}\\3\\4{SEP}"))
    for second, firsts in GLUED.items():
        rules.append(_whole(f"({_words(firsts, ci=True)})({_ci(second)})", (1, 2)))
    # sentence-final period of an abbreviation / initialism
    rules.append((f"{SEP}([^{SEP}]*[^{SEP}.!?\u2026])(\\.){SEP}((?:{SEP}|{WS})*)$", f"{SEP}\\1{SEP}{SEP}\\2{SEP}\\3"))
    return rules


def _check_portable(pattern: str, rewrite: str) -> None:
    """Only syntax both engines read alike: a backslash escapes ASCII punctuation (no \\w, \\d, \\s, \\b,
    \\u…: they differ or do not exist in RE2); rewrites are groups 1-9 and separators."""
    i = 0
    while i < len(pattern):
        if pattern[i] == "\\":
            if i + 1 >= len(pattern) or pattern[i + 1] not in string.punctuation:
                raise ValueError(f"non-portable escape {pattern[i:i + 2]!r} in {pattern[:60]!r}…")
            i += 1
        i += 1
    if re.fullmatch(f"(?:\\\\[1-9]|{SEP})*", rewrite) is None:
        raise ValueError(f"rewrite {rewrite!r} is not made of groups \\1-\\9 and separators")


RULES: list[tuple[str, str]] = _build_rules()
#: Applied character for character before the rules (offsets and token text come from the original):
#: the separator becomes a space, and the two characters that RE2 folds onto ASCII letters in some
#: case-pair classes (long s, Kelvin sign) become those letters, so both engines see the same text.
NORMALIZE = {SEP: " ", "\u017f": "s", "\u212a": "K"}
for _pattern, _rewrite in RULES:
    _check_portable(_pattern, _rewrite)
_WS_RUN = f"{WS}+"

# ---------------------------------------------------------------------------------------------------
# Python executor

_PY_RULES = [(re.compile(p), r) for p, r in RULES]
_PY_WS = re.compile(_WS_RUN)
_PY_NORMALIZE = str.maketrans(NORMALIZE)


def _pieces(text: str) -> list[str]:
    s = text.translate(_PY_NORMALIZE) + SEP
    for regex, rewrite in _PY_RULES:
        s = regex.sub(rewrite, s)
    return s.split(SEP)


def tokenize(text: str) -> list[Token]:
    """Tokens of ``text`` (one sentence; see the module docstring for the conventions), with offsets.

    ``text[t.start:t.end] == t.text`` for every token. A period at the very end of ``text`` after an
    abbreviation is a token of its own (sentence-final), so tokenise sentence by sentence
    (:func:`sentences`) rather than a whole paragraph at once.
    """
    tokens, position = [], 0
    for piece in _pieces(text):
        end = position + len(piece)
        if piece and not _PY_WS.fullmatch(piece):
            tokens.append(Token(text[position:end], position, end))
        position = end
    return tokens


# ---------------------------------------------------------------------------------------------------
# TensorFlow executor


def tokenize_tf(texts):
    """Tokenise a ``[B]`` string tensor in-graph with core TensorFlow ops (same rules as :func:`tokenize`).

    Returns:
        ``(tokens, starts, ends)``: ``tf.RaggedTensor`` of shape ``[B, None]`` (string, int64, int64);
        offsets are in Unicode characters of the input strings (valid UTF-8 expected) and each token is
        the substring ``[start, end)`` of its input. A SavedModel signature cannot return ragged tensors:
        return e.g. ``tokens.to_tensor("")`` and ``starts.to_tensor(-1)``, or the ``flat_values`` and
        ``row_splits``.
    """
    import tensorflow as tf

    from data_pipeline.graph_masks import masked

    texts = tf.convert_to_tensor(texts, dtype=tf.string)
    s = texts
    for char, replacement in NORMALIZE.items():
        s = tf.strings.regex_replace(s, char, replacement)
    s = tf.strings.join([s, tf.fill(tf.shape(s), SEP)])
    for pattern, rewrite in RULES:
        s = tf.strings.regex_replace(s, pattern, rewrite)
    pieces = tf.strings.split(s, sep=SEP)
    flat = pieces.flat_values
    lengths = tf.cast(tf.strings.length(flat, unit="UTF8_CHAR"), tf.int64)
    cumulative = tf.cumsum(lengths)
    before_row = tf.gather(tf.concat([tf.zeros([1], tf.int64), cumulative], 0), pieces.row_splits[:-1])
    rows = pieces.value_rowids()
    ends = cumulative - tf.gather(before_row, rows)
    keep = tf.logical_and(lengths > 0, tf.logical_not(tf.strings.regex_full_match(flat, _WS_RUN)))
    rows, ends, lengths = masked(rows, keep), masked(ends, keep), masked(lengths, keep)
    starts = ends - lengths
    tokens = substrings_tf(texts, rows, starts, lengths)
    n = tf.shape(texts, out_type=tf.int64)[0]

    def ragged(values):
        return tf.RaggedTensor.from_value_rowids(values, rows, nrows=n, validate=False)

    return ragged(tokens), ragged(starts), ragged(ends)


def substrings_tf(texts, rows, starts, lengths):
    """In-graph, for each ``i``: ``lengths[i]`` characters of ``texts[rows[i]]`` from character ``starts[i]``.

    Each piece costs its own characters: the texts are decoded to code points once and every piece is
    gathered from them. ``tf.strings.substr`` of ``tf.gather(texts, rows)`` would copy a whole text
    once per piece, and walk it from its start (a 1 MB paragraph of 768 tokens: 760 MB and 2.6 s).

    Args:
        texts: string ``[B]``, valid UTF-8 (anything else is an ``InvalidArgumentError``).
        rows, starts, lengths: int64 ``[N]``.

    Returns:
        string ``[N]``.
    """
    import tensorflow as tf

    chars = tf.strings.unicode_decode(texts, "UTF-8", errors="strict")
    first = tf.gather(chars.row_splits, rows) + starts
    return tf.strings.unicode_encode(tf.gather(chars.flat_values, tf.ragged.range(first, first + lengths)), "UTF-8")


# ---------------------------------------------------------------------------------------------------
# sentence splitting

_FINAL = re.compile("[.?!\u2026]+")
_ELLIPSIS = re.compile("(?:\\.\\.+|\u2026)[.\u2026]*")
_CLOSERS = {'"', "'", "''", "\u201d", "\u2019", "\u2019\u2019", ")", "]", "}", "\u00bb"}
_OPENERS = ('"', "'", "\u201c", "\u2018", "(", "[", "``", "\u00ab")
#: Abbreviations that end a sentence when a capitalised word follows (EWT: "etc. The" is a boundary,
#: "Mr. Smith", "Sept. 11", "U.S. Army" are not).
ENDERS = {"etc.", "Etc.", "Inc.", "Corp.", "Co.", "Ltd.", "LLC.", "Bros.", "Jr.", "Sr.", "No.", "al.",
          "fax.", "a.m.", "p.m.", "A.M.", "P.M."}
#: Words that start a sentence even without punctuation before them (e-mail openings and closings).
STARTERS = {"Please", "Thanks", "Attached", "Dear", "Regards", "Sorry", "Subject", "Sent", "Hi"}
#: Tokens that end a sentence when a capitalised word follows: e-mail closings, emoticons, ``>>``.
CLOSINGS = {"Regards", "Sincerely", "Cheers", ">>", ">"}
_EMOTICON = re.compile(r"[:;=]-?[()DPp]")
_TIME = re.compile(f"{D}{{1,2}}:{D}{D}(?::{D}{D})?")
_HEADER_DATE = re.compile(f"{D}{D}/{D}{D}/{D}{D}{D}{D}")   # e-mail header dates: "Sara Shackleton 11/28/2000 …"
_BLANK_LINE = re.compile(f"\n[ \t\r\f\v]*\n{WS}*")  # read alike by Python's re and RE2


def _starts(token: str) -> bool:
    first = token[0]
    return first.isupper() or first.isdigit() or token.startswith(_OPENERS)


def _boundary_after(tokens: Sequence[Token], i: int) -> int:
    """If a sentence ends with ``tokens[i]`` (or with closers attached to it), the index of its last
    token, else -1."""
    token, end = tokens[i], i
    if _FINAL.fullmatch(token.text):
        while end + 1 < len(tokens) and tokens[end + 1].text in _CLOSERS and tokens[end + 1].start == tokens[end].end:
            end += 1
    if end + 1 >= len(tokens) or tokens[end + 1].start == tokens[end].end:
        return -1
    following = tokens[end + 1].text
    if _FINAL.fullmatch(token.text):
        ok = _starts(following) if _ELLIPSIS.fullmatch(token.text) else True
    elif token.text in ENDERS:
        ok = following[0].isupper()
    elif token.text in ("AM", "PM", "am", "pm") and i > 0 and _TIME.fullmatch(tokens[i - 1].text):
        ok = following[0].isupper()
    elif token.text in CLOSINGS or _EMOTICON.fullmatch(token.text):
        ok = following[0].isupper()
    elif _HEADER_DATE.fullmatch(following):
        ok = token.text[0].isupper() or "@" in token.text
    else:
        ok = following in STARTERS
    return end if ok else -1


def _paragraph_sentences(text: str, offset: int) -> list[tuple[int, int]]:
    tokens = tokenize(text)
    spans, start, i = [], 0, 0
    while i < len(tokens):
        end = _boundary_after(tokens, i)
        if end >= 0:
            spans.append((offset + tokens[start].start, offset + tokens[end].end))
            start, i = end + 1, end + 1
        else:
            i += 1
    if start < len(tokens):
        spans.append((offset + tokens[start].start, offset + tokens[-1].end))
    return spans


def split_sentences(text: str) -> list[tuple[int, int]]:
    """Character spans ``(start, end)`` of the sentences of ``text`` (rule-based; see the module
    docstring). Spans start at a sentence's first token and end after its last; whitespace between
    sentences belongs to none."""
    spans, position = [], 0
    for blank in list(_BLANK_LINE.finditer(text)) + [None]:
        stop = len(text) if blank is None else blank.start()
        spans.extend(_paragraph_sentences(text[position:stop], position))
        if blank is not None:
            position = blank.end()
    return spans


_PY_GAP = re.compile(f"(?:{WS}|{SEP})+")


def longest_run(text: str) -> int:
    """The characters of the longest run of ``text`` without whitespace (or ``SEP``), in one linear pass.

    Sentences end only where whitespace separates two tokens (:func:`_boundary_after`: the characters
    between tokens are whitespace pieces), so such a run lies inside one sentence whatever the rules
    make of it: a sentence is at least as long as its longest run, known before the text is tokenised.
    """
    longest, position = 0, 0
    for gap in _PY_GAP.finditer(text):
        longest = max(longest, gap.start() - position)
        position = gap.end()
    return max(longest, len(text) - position)


def sentences(text: str) -> list[list[Token]]:
    """The tokens of each sentence of ``text``, with offsets into ``text``."""
    return [[Token(t.text, t.start + start, t.end + start) for t in tokenize(text[start:end])]
            for start, end in split_sentences(text)]


# ---------------------------------------------------------------------------------------------------
# sentence splitting in-graph


def _one_of(words) -> str:
    return _alt([re.escape(w) for w in sorted(words, key=lambda w: (-len(w), w))])


@functools.lru_cache(maxsize=None)
def _python_class(method: str) -> str:
    """An RE2 class of exactly the characters for which ``str.<method>()`` is true (Python's Unicode
    data, not RE2's: ``\\p{Lu}`` misses e.g. Roman numerals, which ``isupper`` accepts)."""
    ranges, first, last = [], None, None
    for code in range(0x110000):
        if 0xD800 <= code <= 0xDFFF or not getattr(chr(code), method)():
            continue
        if last is not None and code == last + 1:
            last = code
            continue
        if first is not None:
            ranges.append((first, last))
        first = last = code
    if first is not None:
        ranges.append((first, last))
    return "[" + "".join(chr(a) if a == b else f"{chr(a)}-{chr(b)}" for a, b in ranges) + "]"


def split_sentences_tf(texts):
    """The sentences of each of a ``[B]`` string tensor's texts, in-graph with core ops: the spans
    :func:`split_sentences` gives, in order.

    Each text is cut into paragraphs at blank lines and tokenised (:func:`tokenize_tf`); a token ends a
    sentence where :func:`_boundary_after` says so, decided for all tokens at once (a final mark's closing
    quotes and brackets are found by counting, not by a loop).

    Returns:
        ``(rows, starts, ends)``: int64 ``[N]`` tensors, one entry per sentence of all texts in order:
        the index of its text and its character span there (end exclusive).
    """
    import tensorflow as tf

    from data_pipeline.graph_masks import masked

    texts = tf.convert_to_tensor(texts, dtype=tf.string)
    # paragraphs: a mark on each side of every blank-line run, so the even pieces of a text are its paragraphs
    # (SEP + "b" marks; the text's own SEPs are escaped as SEP + "a" meanwhile, which no blank line contains)
    escaped = tf.strings.regex_replace(texts, SEP, SEP + "a")
    pieces = tf.strings.split(tf.strings.regex_replace(escaped, _BLANK_LINE.pattern, f"{SEP}b\\0{SEP}b"), sep=SEP + "b")
    pieces = pieces.with_flat_values(tf.strings.regex_replace(pieces.flat_values, SEP + "a", SEP))
    lengths = tf.cast(tf.strings.length(pieces.flat_values, unit="UTF8_CHAR"), tf.int64)
    piece_rows = pieces.value_rowids()
    position = tf.range(tf.size(piece_rows, out_type=tf.int64))
    first_piece = tf.gather(pieces.row_splits, piece_rows)
    row_start = tf.gather(tf.concat([[0], tf.cumsum(lengths)], 0), first_piece)
    offsets = tf.cumsum(lengths, exclusive=True) - row_start
    paragraph = (position - first_piece) % 2 == 0
    paragraph_rows = masked(piece_rows, paragraph)
    tokens, starts, ends = tokenize_tf(masked(pieces.flat_values, paragraph))
    shift = tf.gather(masked(offsets, paragraph), tokens.value_rowids())
    # flat token arrays with one sentinel after the last token (another paragraph), so i + 1 can always be read
    row = tf.concat([tokens.value_rowids(), [-1]], 0)
    text = tf.concat([tokens.flat_values, [""]], 0)
    start = tf.concat([starts.flat_values + shift, [-1]], 0)
    end = tf.concat([ends.flat_values + shift, [-1]], 0)
    count = tf.size(tokens.flat_values, out_type=tf.int64)
    index = tf.range(count)
    same_as_previous = tf.concat([[False], tf.equal(row[1:], row[:-1])], 0)
    attached = same_as_previous & tf.equal(start, tf.concat([[-1], end[:-1]], 0))

    def matches(pattern, values=text):
        return tf.strings.regex_full_match(values, f"(?s){pattern}")

    upper, digit = _python_class("isupper"), _python_class("isdigit")
    final = matches(_FINAL.pattern)
    # a final mark takes the closing quotes and brackets attached after it: its sentence ends before the
    # first token after it that is not such a closer
    not_closer = tf.cast(~(matches(_one_of(_CLOSERS)) & attached), tf.int64)
    seen = tf.cumsum(not_closer)
    last = tf.where(final[:-1], tf.searchsorted(seen, seen[:-1] + 1, side="left", out_type=tf.int64) - 1, index)
    after = last + 1
    following = tf.gather(text, after)
    capital_follows = matches(f"{upper}.*", following)
    starts_follows = matches(f"(?:{upper}|{digit}|{_one_of(_OPENERS)}).*", following)
    token = text[:-1]
    time_before = same_as_previous[:-1] & matches(_TIME.pattern, tf.gather(text, tf.maximum(index - 1, 0)))
    ok = tf.where(final[:-1], tf.where(matches(_ELLIPSIS.pattern, token), starts_follows, True),
         tf.where(matches(_one_of(ENDERS), token), capital_follows,
         tf.where(matches("AM|PM|am|pm", token) & time_before, capital_follows,
         tf.where(matches(_one_of(CLOSINGS), token) | matches(_EMOTICON.pattern, token), capital_follows,
         tf.where(matches(_HEADER_DATE.pattern, following),
                  matches(f"{upper}.*", token) | matches(".*@.*", token),
                  matches(_one_of(STARTERS), following))))))
    boundary = ok & tf.equal(tf.gather(row, after), row[:-1]) & ~tf.gather(attached, after)
    ends_sentence = tf.scatter_nd(masked(last, boundary)[:, None],
                                  tf.ones_like(masked(last, boundary)), [count]) > 0
    ends_sentence |= ~tf.equal(row[1:], row[:-1])  # a paragraph's last token
    sentence = tf.cumsum(tf.cast(ends_sentence, tf.int64), exclusive=True)
    sentences = tf.reduce_sum(tf.cast(ends_sentence, tf.int32))
    rows = tf.math.unsorted_segment_min(tf.gather(paragraph_rows, row[:-1]), sentence, sentences)
    return (rows, tf.math.unsorted_segment_min(start[:-1], sentence, sentences),
            tf.math.unsorted_segment_max(end[:-1], sentence, sentences))


def sentences_tf(texts):
    """Each sentence of a ``[B]`` string tensor's texts (:func:`split_sentences_tf`) as its own string.

    Returns:
        ``(sentences, rows, starts, ends)``: string ``[N]``, and int64 ``[N]``: each sentence's text
        index and its character span there.
    """
    import tensorflow as tf

    texts = tf.convert_to_tensor(texts, dtype=tf.string)
    rows, starts, ends = split_sentences_tf(texts)
    return substrings_tf(texts, rows, starts, ends - starts), rows, starts, ends
