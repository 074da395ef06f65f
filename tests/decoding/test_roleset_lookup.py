"""The rolesets of a frame index by id from the cached table (:mod:`lisa_tf.decoding.roleset_lookup`): the same
rolesets as the index read whole, a table per index content, and the index in memory where no cache can be
written."""

from __future__ import annotations

import pytest

from data_pipeline.frame_index import DEFAULT_FRAME_INDEX, FrameIndex
from lisa_tf.decoding.roleset_lookup import RolesetLookup, table_path


@pytest.fixture
def cache(tmp_path, monkeypatch):
    monkeypatch.setenv("LISA_TF_CACHE", str(tmp_path / "cache"))
    return tmp_path / "cache"


@pytest.fixture(scope="module")
def shipped():
    return FrameIndex.load(DEFAULT_FRAME_INDEX)


def test_a_later_process_reads_every_roleset_from_the_table_as_the_index_has_it(cache, shipped):
    first = RolesetLookup(DEFAULT_FRAME_INDEX)  # reads the index whole and writes the table
    assert table_path(DEFAULT_FRAME_INDEX).is_file() and table_path(DEFAULT_FRAME_INDEX).parent.parent == cache
    later = RolesetLookup(DEFAULT_FRAME_INDEX)
    assert later._index is None, "a later lookup opens the table, it does not read the index again"
    for roleset_id, roleset in shipped.rolesets.items():
        assert later.roleset(roleset_id) == roleset == first.roleset(roleset_id)
    assert later.roleset("have.LV") is None and later.roleset("") is None


def test_a_changed_index_gets_a_table_of_its_own(cache, shipped, tmp_path):
    own = tmp_path / "frames.json.gz"
    kill = shipped.roleset("kill.01")
    counts = {**shipped.counts, "rolesets": 1, "roles": len(kill.roles), "skipped": 0, "skipped_without_id": 0,
              "skipped_duplicate_id": 0}
    FrameIndex(rolesets={"kill.01": kill}, source=shipped.source, counts=counts).save(own)
    RolesetLookup(own)
    assert RolesetLookup(own).roleset("bark.01") is None
    renamed = FrameIndex(rolesets={"kill.01": type(kill)(**{**kill.__dict__, "name": "end a life"})},
                         source=shipped.source, counts=counts)
    renamed.save(own)
    assert RolesetLookup(own).roleset("kill.01").name == "end a life"
    assert len(list((cache / "frame-index").glob("frames-*.sqlite"))) == 2


def test_without_a_writable_cache_the_index_is_kept_in_memory(tmp_path, monkeypatch, shipped):
    blocked = tmp_path / "not-a-directory"
    blocked.write_text("")
    monkeypatch.setenv("LISA_TF_CACHE", str(blocked))
    lookup = RolesetLookup(DEFAULT_FRAME_INDEX)
    assert lookup.roleset("bark.01") == shipped.roleset("bark.01")
    assert not list(tmp_path.glob("**/*.sqlite")) and not list(tmp_path.glob("**/*.partial"))
