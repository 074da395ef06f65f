"""The PropBank frame index on real frame files (tests/fixtures/propbank-frames, from propbank/propbank-frames:
the 3.4 release and, for the older role-link layout, 3.1). Expected values are read from the XML by hand."""

from __future__ import annotations

import gzip
import shutil

import pytest

from data_pipeline import frame_index
from data_pipeline.errors import DataFormatError
from data_pipeline.frame_index import DEFAULT_FRAME_INDEX, FrameIndex, Role
from tests.conftest import DATA, FIXTURES

FRAMES = FIXTURES / "propbank-frames" / "v3.4.0"
FRAMES_3_1 = FIXTURES / "propbank-frames" / "v3.1"
PINNED = "4087fa9ab5c40907c34ff91a56acc2cab1670145"
SOURCE = {"repository": "https://github.com/propbank/propbank-frames", "commit": PINNED, "licence": "CC BY-SA 4.0",
          "attribution": "PropBank frames 3.4"}


@pytest.fixture(scope="module")
def index():
    return FrameIndex.from_frame_files(FRAMES, SOURCE)


def test_bark_01_as_its_frame_file_gives_it(index):
    bark = index.roleset("bark.01")
    assert bark.name == "vocalize like a dog" and bark.lemma == "bark"
    assert bark.aliases == (("bark", "v"), ("barking", "n"))
    assert [(r.label, r.number, r.function, r.description) for r in bark.roles] == [
        ("ARG0", "0", "PAG", "barker"), ("ARG1", "1", "PPT", "utterance"), ("ARG2", "2", "GOL", "hearer")]
    barker, utterance, hearer = bark.roles
    # VerbNet 3.3 and 3.4 give the same class and role: kept once
    assert barker.vn_roles == (("manner_speaking-37.3", "agent"),)
    assert barker.fn_roles == (("Communication_noise", "speaker"),)
    assert utterance.fn_roles == (("Communication_noise", "message"), ("Communication_noise", "topic"))
    assert hearer.vn_roles == (("manner_speaking-37.3", "recipient"),)
    assert bark.role("ARG2") is hearer and bark.role("ARG3") is None
    idiom = index.roleset("bark_up_wrong_tree.02")
    assert idiom.lemma == "bark_up_wrong_tree" and idiom.name == "follow the wrong lead"
    assert idiom.aliases == (("bark_up_wrong_tree", "m"),)
    assert [(r.label, r.description) for r in idiom.roles] == [
        ("ARG0", "barker, person following bad lead"), ("ARG1", "incorrect proposition or assumption")]
    assert all(r.vn_roles == r.fn_roles == () for r in idiom.roles)


def test_counts_phrasal_lemmas_modifier_roles_and_entities(index):
    # bark.xml 2 rolesets (5 roles), give.xml 14 (36), kill.xml 4 (12), await.xml 1 (3)
    assert len(index) == 21 and index.counts["files"] == 4 and index.counts["roles"] == 56
    assert index.counts["skipped"] == 0 and index.skipped == ()
    give_up = index.roleset("give_up.08")
    assert give_up.lemma == "give_up" and give_up.name == "give up: surrender"
    assert [r.description for r in give_up.roles] == ["giver", "gift", "given-to"]
    # await.xml: <role descr="period of time waited through" f="TMP" n="m"/>
    waited = index.roleset("await.01").roles[2]
    assert (waited.number, waited.function, waited.label) == ("M", "TMP", "ARGM-TMP")
    assert waited.description == "period of time waited through"
    # kill.xml: <role descr="fixed: &quot;it&quot;" f="PPT" n="2"/>
    assert index.roleset("kill.03").role("ARG2").description == 'fixed: "it"'
    assert index.roleset("kill.01").role("ARG2").function == "MNR"
    assert index.source == SOURCE


def test_rolesets_of_finds_lemmas_and_aliases(index):
    assert index.rolesets_of("barking") == ["bark.01"]  # a noun alias
    assert index.rolesets_of("killing") == ["kill.01", "kill.03"]
    assert index.rolesets_of("kill") == ["kill.01", "kill.03", "kill.04"]
    assert index.rolesets_of("given") == ["give.14"]  # an adjective alias
    assert index.rolesets_of("give_up") == ["give_up.07", "give_up.08"]
    assert index.rolesets_of("hug") == [] and index.roleset("hug.01") is None
    assert {"barking", "give_up", "await", "kill_off"} <= set(index.lemmas())
    assert index.lemmas() == sorted(index.lemmas())


def test_propbank_3_1_role_links(tmp_path):
    """PropBank 3.1 files give VerbNet roles as <vnrole vncls vntheta/> and no FrameNet roles."""
    old = FrameIndex.from_frame_files(FRAMES_3_1, SOURCE)
    bark = old.roleset("bark.01")
    assert bark.name == "like a dog" and bark.aliases == (("bark", "v"),)
    assert [(r.label, r.function, r.description, r.vn_roles, r.fn_roles) for r in bark.roles] == [
        ("ARG0", "PAG", "barker", (("37.3", "Agent"),), ()), ("ARG1", "PPT", "utterance", (("37.3", "Topic"),), ()),
        ("ARG2", "GOL", "hearer", (("37.3", "Recipient"),), ())]
    assert old.rolesets_of("bark_up_the_wrong_tree") == ["bark_up_the_wrong_tree.02"]


def test_an_index_over_another_wins_its_clashes_and_keeps_the_rest(index, tmp_path):
    """``over``: a user's own index merged over the shipped one (3.1's bark.xml over the 3.4 files): its
    bark.01 in place of 3.4's, whole; 3.4's other rolesets kept; its own added; a saved merge loads."""
    old = FrameIndex.from_frame_files(FRAMES_3_1, {**SOURCE, "commit": "v3.1"})
    merged = old.over(index)
    assert merged.roleset("bark.01").name == "like a dog"  # 3.1's (3.4: "vocalize like a dog")
    assert merged.roleset("bark.01").roles[0].vn_roles == (("37.3", "Agent"),)
    assert merged.roleset("kill.01") == index.roleset("kill.01")
    assert merged.roleset("bark_up_wrong_tree.02") == index.roleset("bark_up_wrong_tree.02")  # 3.4's only
    assert merged.rolesets_of("bark_up_the_wrong_tree") == ["bark_up_the_wrong_tree.02"]  # 3.1's only
    assert len(merged) == len(index) + 1
    assert merged.source["commit"] == PINNED and merged.source["over_commit"] == "v3.1"
    assert (len(index), len(old)) == (index.counts["rolesets"], old.counts["rolesets"])  # neither changed
    merged.save(tmp_path / "merged.json.gz")
    assert FrameIndex.load(tmp_path / "merged.json.gz") == merged


def test_save_load_round_trip_and_same_bytes(index, tmp_path):
    index.save(tmp_path / "a.json.gz")
    assert FrameIndex.load(tmp_path / "a.json.gz") == index
    # the files read in another order give the same bytes; the gzip header carries no time
    again = FrameIndex.from_frame_files([FRAMES / "kill.xml", FRAMES / "await.xml", FRAMES / "give.xml",
                                         FRAMES / "bark.xml"], SOURCE)
    again.save(tmp_path / "b.json.gz")
    data = (tmp_path / "a.json.gz").read_bytes()
    assert data == (tmp_path / "b.json.gz").read_bytes()
    assert data[4:8] == b"\0\0\0\0"  # MTIME
    assert sorted(p.name for p in tmp_path.iterdir()) == ["a.json.gz", "b.json.gz"]  # no scratch file left


def test_a_malformed_file_is_named_with_its_line(tmp_path):
    broken = tmp_path / "bark.xml"
    lines = (FRAMES / "bark.xml").read_text(encoding="utf-8").splitlines(keepends=True)
    assert lines[6].strip() == '<alias pos="v">bark</alias>'
    lines[6] = lines[6].replace("</alias>", "</alia>")
    broken.write_text("".join(lines), encoding="utf-8")
    with pytest.raises(DataFormatError) as error:
        FrameIndex.from_frame_files(tmp_path, SOURCE)
    assert str(error.value).startswith(f"{broken}:7: expected well-formed XML: mismatched tag")


def test_the_build_command_prints_counts_and_refuses_a_malformed_file(tmp_path, capsys):
    out = tmp_path / "frames.json.gz"
    args = ["--repository", SOURCE["repository"], "--commit", PINNED]
    assert frame_index.main(["build", str(FRAMES), "--out", str(out), *args]) == 0
    assert "files 4, rolesets 21, roles 56, skipped 0 (0 without id, 0 duplicate id)" in capsys.readouterr().out
    assert len(FrameIndex.load(out)) == 21 and FrameIndex.load(out).source["commit"] == PINNED
    broken = tmp_path / "frames"
    broken.mkdir()
    (broken / "await.xml").write_text((FRAMES / "await.xml").read_text(encoding="utf-8")[:-30], encoding="utf-8")
    assert frame_index.main(["build", str(broken), "--out", str(tmp_path / "x.json.gz"), *args]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and err.startswith(f"error: {broken / 'await.xml'}:") and "XML" in err
    assert not (tmp_path / "x.json.gz").exists()


def test_rolesets_without_id_or_with_a_repeated_id_are_skipped_and_counted(tmp_path):
    no_id = tmp_path / "await.xml"
    text = (FRAMES / "await.xml").read_text(encoding="utf-8")
    assert '<roleset id="await.01" name="wait for">' in text.splitlines()[4]
    no_id.write_text(text.replace(' id="await.01"', ""), encoding="utf-8")
    built = FrameIndex.from_frame_files([FRAMES / "bark.xml", no_id, FRAMES / "bark.xml"], SOURCE)
    assert sorted(built.rolesets) == ["bark.01", "bark_up_wrong_tree.02"]
    counts = built.counts
    assert (counts["skipped"], counts["skipped_without_id"], counts["skipped_duplicate_id"]) == (3, 1, 2)
    assert built.skipped[0] == f"{no_id}:5: a roleset of 'await' without id"
    assert built.skipped[1] == f"{FRAMES / 'bark.xml'}:5: roleset bark.01 already read from {FRAMES / 'bark.xml'}:5"


def test_a_modifier_role_without_function_tag_is_refused(tmp_path):
    path = tmp_path / "await.xml"
    text = (FRAMES / "await.xml").read_text(encoding="utf-8")
    path.write_text(text.replace('f="TMP" n="m"', 'f="" n="m"'), encoding="utf-8")
    with pytest.raises(DataFormatError, match=rf"^{path}:12: roleset await.01: expected a function tag"):
        FrameIndex.from_frame_files([path], SOURCE)
    path.write_text(text.replace('f="TMP" n="m"', 'f="TMP" n="x"'), encoding="utf-8")
    with pytest.raises(DataFormatError, match=rf"^{path}:12: roleset await.01: expected a role number"):
        FrameIndex.from_frame_files([path], SOURCE)


def test_loading_what_is_not_an_index_names_the_file(tmp_path):
    plain = tmp_path / "frames.json.gz"
    plain.write_bytes(b"{}")
    with pytest.raises(DataFormatError, match=rf"^{plain}: expected a gzip-compressed JSON frame index"):
        FrameIndex.load(plain)
    plain.write_bytes(gzip.compress(b'{"format": "other"}'))
    with pytest.raises(DataFormatError, match=rf"^{plain}: expected a frame index of format"):
        FrameIndex.load(plain)


def test_the_shipped_index_has_the_pinned_frames(index):
    assert DEFAULT_FRAME_INDEX == DATA / "propbank-frames" / "frames.json.gz"
    shipped = FrameIndex.load()
    bark = shipped.roleset("bark.01")
    assert bark.name == "vocalize like a dog"
    assert bark.role("ARG0").description == "barker" and bark.role("ARG2").description == "hearer"
    assert bark.role("ARG2") == Role("2", "GOL", "hearer", (("manner_speaking-37.3", "recipient"),),
                                     (("Communication_noise", "addressee"),))
    # built from the same commit as the fixtures: every fixture roleset is in it, unchanged
    assert all(shipped.roleset(rid) == roleset for rid, roleset in index.rolesets.items())
    assert shipped.source["commit"] == PINNED and shipped.source["licence"] == "CC BY-SA 4.0"
    assert PINNED in (DATA / "propbank-frames" / "ATTRIBUTION").read_text(encoding="utf-8")
    assert len(shipped) == shipped.counts["rolesets"] > 11000
    assert shipped.rolesets_of("killing") == ["kill.01", "kill.03"]


def test_a_directory_without_frame_files_is_refused(tmp_path):
    with pytest.raises(DataFormatError, match="expected PropBank frame files"):
        FrameIndex.from_frame_files(tmp_path, SOURCE)
    shutil.copy(FRAMES / "bark.xml", tmp_path / "bark.xml")
    with pytest.raises(ValueError, match="needs commit"):
        FrameIndex.from_frame_files(tmp_path, {**SOURCE, "commit": ""})


# A saved index is checked whole against one schema before it is used. Each case below is the index of
# the fixture frames with one thing wrong, and the one line that names the file, where in it and what
# was expected; unchecked, each was read without a word, or ended in a traceback when read or when
# used (KeyError, AttributeError, TypeError, ValueError while labelling or exporting).
def _drop_rolesets(data):
    del data["rolesets"]


def _drop_source(data):
    del data["source"]


def _bark(data):
    return data["rolesets"]["bark.01"]


def _barker(data):
    return data["rolesets"]["bark.01"]["roles"][0]


BARK = "rolesets['bark.01']"
MALFORMED = {
    "no rolesets": (_drop_rolesets, "the index: expected a frame index (format, source, counts, skipped, rolesets), "
                                    "found no 'rolesets'"),
    "a list for an object": (lambda d: d.update(rolesets=list(d["rolesets"].values())),
                             "rolesets: expected an object of roleset id → roleset, found a list of 21 items"),
    "no source": (_drop_source, "the index: expected a frame index (format, source, counts, skipped, rolesets), "
                                "found no 'source'"),
    "a name not a string": (lambda d: _bark(d).update(name=123),
                            f"{BARK}.name: expected a string without control characters (tab, newline, escape …), "
                            "found 123"),
    "a null description": (lambda d: _barker(d).update(descr=None),
                           f"{BARK}.roles[0].descr: expected a string without control characters (tab, newline, "
                           "escape …), found null"),
    "a VerbNet pair of one": (lambda d: _barker(d).update(vn=[["manner_speaking-37.3"]]),
                              f"{BARK}.roles[0].vn[0]: expected a [VerbNet class, thematic role] pair (a list of 2 "
                              "strings), found a list of 1 item"),
    "skipped a number": (lambda d: d.update(skipped=5),
                         "skipped: expected a list of strings (the rolesets and files skipped), found 5"),
    "a count not a number": (lambda d: d["counts"].update(roles="56"),
                             "counts.roles: expected a whole number of at least 0, found '56'"),
    "an alias of three": (lambda d: _bark(d)["aliases"][0].append("x"),
                          f"{BARK}.aliases[0]: expected a [word, part of speech] pair (a list of 2 strings), found a "
                          "list of 3 items"),
    # a role number that labels nothing, a misspelt key, a count that is wrong: nothing failed, ever
    "a role number of no label": (lambda d: _barker(d).update(n="Z"),
                                  f"{BARK}.roles[0].n: expected a role number: one of 0-9, A or M, found 'Z'"),
    "a misspelt key": (lambda d: _barker(d).update(VN=_barker(d).pop("vn")),
                       f"{BARK}.roles[0]: expected a role (n, f, descr; vn, fn where linked), found 'VN' besides"),
    "counts that disagree": (lambda d: d["counts"].update(rolesets=20),
                             "counts.rolesets: expected 21 (the rolesets the index holds), found 20"),
}


def _index_file(index, tmp_path, change=None, text=None):
    """The path of the fixture index saved as gzip JSON, after ``change`` (a function of its JSON), or
    with ``text`` (the JSON as written) in its place."""
    import copy
    import json

    data = copy.deepcopy(index.to_json())
    if change is not None:
        change(data)
    path = tmp_path / "frames.json.gz"
    path.write_bytes(gzip.compress((text if text is not None else json.dumps(data)).encode("utf-8"), compresslevel=1))
    return path


@pytest.mark.parametrize("case", list(MALFORMED))
def test_a_malformed_index_is_one_error_naming_where_and_what(index, tmp_path, case):
    change, message = MALFORMED[case]
    path = _index_file(index, tmp_path, change)
    with pytest.raises(DataFormatError) as error:
        FrameIndex.load(path)
    assert str(error.value) == f"{path}: {message}"


def test_a_roleset_given_twice_is_refused_not_lost(index, tmp_path):
    """JSON readers keep the last of a repeated key: bark.01 would lose its name and roles to the second."""
    import json

    text = json.dumps(index.to_json(), sort_keys=True)
    assert text.count('"give.01": {') == 1
    text = text.replace('"give.01": {', '"bark.01": {"aliases": [], "lemma": "bark", "name": "", "roles": []}, '
                                        '"give.01": {')
    path = _index_file(index, tmp_path, text=text)
    with pytest.raises(DataFormatError, match=rf"^{path}: rolesets: expected an object of roleset id → roleset, each "
                                              r"key once, found 'bark.01' more than once$"):
        FrameIndex.load(path)


def test_json_nested_too_deep_is_refused_without_a_recursion_error(tmp_path):
    path = tmp_path / "frames.json.gz"
    path.write_bytes(gzip.compress(b"[" * 200_000 + b"]" * 200_000))
    with pytest.raises(DataFormatError, match=rf"^{path}: expected a frame index \(JSON objects and lists nested 7 "
                                              r"deep\), found JSON nested too deep to read$"):
        FrameIndex.load(path)


def test_the_decompressed_size_is_bounded(index, tmp_path):
    """An index is read up to MAX_INDEX_BYTES decompressed, a documented limit well above the shipped
    index; one byte more is refused, whatever the JSON (here a valid index padded with white space,
    which JSON allows), and a gzip that decompresses to far more (1.7 MB may hold 1 GiB of spaces) is
    refused without being read whole."""
    import json
    import tracemalloc

    shipped = len(gzip.decompress(DEFAULT_FRAME_INDEX.read_bytes()))
    assert shipped == 3_468_004 and frame_index.MAX_INDEX_BYTES >= 9 * shipped
    text = json.dumps(index.to_json())
    path = _index_file(index, tmp_path, text=text.ljust(frame_index.MAX_INDEX_BYTES))
    assert FrameIndex.load(path) == index
    path = _index_file(index, tmp_path, text=text.ljust(frame_index.MAX_INDEX_BYTES + 1))
    with pytest.raises(DataFormatError, match=rf"^{path}: expected a frame index of at most 33,554,432 bytes "
                                              r"decompressed \(MAX_INDEX_BYTES; .*\), found more$"):
        FrameIndex.load(path)
    bomb = tmp_path / "bomb.json.gz"
    with gzip.open(bomb, "wb", compresslevel=1) as handle:
        for _ in range(8):
            handle.write(b" " * (frame_index.MAX_INDEX_BYTES // 2))
    tracemalloc.start()
    try:
        with pytest.raises(DataFormatError, match="found more$"):
            FrameIndex.load(bomb)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert peak < 2.5 * frame_index.MAX_INDEX_BYTES  # 4 x MAX_INDEX_BYTES decompressed, of which 1 read


@pytest.mark.parametrize("where, change, found", ids=["tab in f", "bar in id", "newline in name", "escape in name",
                                                      "title sequence in descr"], argvalues=[
    # a tab in a function tag broke export --frames (Invalid number of columns in function_tag.tsv)
    (f"{BARK}.roles[0].f", lambda d: _barker(d).update(f="PAG\tX"), r"'PAG\tX' (a tab at character 4)"),
    # a "|" in a roleset id: keys of the meaning tables are roleset|label
    ("rolesets['bark|01'] (the roleset id)", lambda d: d["rolesets"].update({"bark|01": d["rolesets"].pop("bark.01")}),
     "'bark|01' ('|' at character 5)"),
    (f"{BARK}.name", lambda d: _bark(d).update(name="vocalize\nlike a dog"),
     r"'vocalize\nlike a dog' (a newline at character 9)"),
    # escape sequences for a terminal: red text, a window title
    (f"{BARK}.name", lambda d: _bark(d).update(name="\x1b[31mvocalize"),
     r"'\x1b[31mvocalize' (the control character '\x1b' at character 1)"),
    (f"{BARK}.roles[0].descr", lambda d: _barker(d).update(descr="\x1b]0;TITLE\x07barker"),
     r"'\x1b]0;TITLE\x07barker' (the control character '\x1b' at character 1)"),
])
def test_an_index_string_with_tabs_line_breaks_bars_or_control_characters_is_refused(index, tmp_path, where,
                                                                                    change, found):
    path = _index_file(index, tmp_path, change)
    with pytest.raises(DataFormatError) as error:
        FrameIndex.load(path)
    expected = frame_index.KEY if where.endswith((".f", "(the roleset id)")) else frame_index.TEXT
    assert str(error.value) == f"{path}: {where}: expected {expected}, found {found}"
    assert "\x1b" not in str(error.value) and "\t" not in str(error.value)


@pytest.mark.parametrize("old, new, line, message", ids=["tab in id", "bar in f", "newline in name", "CR in descr"],
                         argvalues=[
    ('id="bark.01"', 'id="bark&#9;01"', 5, r"<roleset> id: expected a string without white space, '|' or control "
                                           r"characters, found 'bark\t01' (a tab at character 5)"),
    ('descr="barker" f="PAG"', 'descr="barker" f="P&#124;AG"', 11,
     "roleset bark.01: role n=0: function tag f: expected a string without white space, '|' or control characters, "
     "found 'P|AG' ('|' at character 2)"),
    ('name="vocalize like a dog"', 'name="vocalize&#10;like a dog"', 5,
     r"roleset bark.01: name: expected a string without control characters (tab, newline, escape …), found "
     r"'vocalize\nlike a dog' (a newline at character 9)"),
    ('descr="hearer"', 'descr="hea&#13;rer"', 26,
     r"roleset bark.01: role n=2: descr: expected a string without control characters (tab, newline, escape …), "
     r"found 'hea\rrer' (a carriage return at character 4)"),
])
def test_the_build_refuses_what_character_references_put_in_a_string(tmp_path, capsys, old, new, line, message):
    """XML attribute values have their literal tabs and line breaks made spaces, but character references
    (&#9; &#10; &#13; &#124;) keep theirs: the build names file, line and field (exit status 2)."""
    frames = tmp_path / "frames"
    frames.mkdir()
    text = (FRAMES / "bark.xml").read_text(encoding="utf-8")
    assert text.count(old) == 1
    (frames / "bark.xml").write_text(text.replace(old, new), encoding="utf-8")
    out = tmp_path / "frames.json.gz"
    assert frame_index.main(["build", str(frames), "--out", str(out), "--repository", SOURCE["repository"],
                             "--commit", PINNED]) == 2
    assert capsys.readouterr().err == f"error: {frames / 'bark.xml'}:{line}: {message}\n"
    assert not out.exists()


def _not_blocked(function, fifo):
    """``function()``'s result (or exception); should it block on ``fifo`` (a FIFO's reader waits for a
    writer), the test fails, after a writer has let it go."""
    import os
    import threading

    result = {}

    def call():
        try:
            result["value"] = function()
        except Exception as error:  # noqa: BLE001 - raised again in the test's thread
            result["error"] = error

    thread = threading.Thread(target=call, daemon=True)
    thread.start()
    thread.join(30)
    if thread.is_alive():
        os.close(os.open(fifo, os.O_WRONLY | os.O_NONBLOCK))
        thread.join(30)
        pytest.fail(f"blocked on the FIFO {fifo}")
    if "error" in result:
        raise result["error"]
    return result["value"]


def test_a_fifo_among_the_frame_files_is_skipped_and_reported(tmp_path, capsys):
    import os

    frames = tmp_path / "frames"
    shutil.copytree(FRAMES, frames)
    os.mkfifo(frames / "zz.xml")
    out = tmp_path / "frames.json.gz"
    args = ["build", str(frames), "--out", str(out), "--repository", SOURCE["repository"], "--commit", PINNED]
    assert _not_blocked(lambda: frame_index.main(args), frames / "zz.xml") == 0
    printed = capsys.readouterr().out
    assert printed.startswith("skipped: zz.xml: not a regular file (a FIFO); not read\n")
    assert "files 4, rolesets 21, roles 56, skipped 0 (0 without id, 0 duplicate id)" in printed
    assert "*.xml not regular files, not read: 1;" in printed
    built = FrameIndex.load(out)
    assert built.skipped == ("zz.xml: not a regular file (a FIFO); not read",)
    assert built.counts["files_not_regular"] == 1 and len(built) == 21
    # a FIFO named among the files to read is refused, not waited on
    with pytest.raises(DataFormatError, match=rf"^{frames / 'zz.xml'}: expected a regular file, found a FIFO$"):
        _not_blocked(lambda: FrameIndex.from_frame_files([frames / "bark.xml", frames / "zz.xml"], SOURCE),
                     frames / "zz.xml")
