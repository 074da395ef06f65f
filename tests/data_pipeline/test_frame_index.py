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
