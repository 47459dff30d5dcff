"""Seeded ids: unique, uuid-shaped and reproducible under the same seed."""

import contextvars
import random
import re
import uuid

from hypothesis import given
from hypothesis import strategies as st

from agentkit.core import ids
from agentkit.core.ids import IdSource, current_ids, new_id, new_uuid, seed_ids, use_ids


def test_uuid_is_a_version_4_uuid_string():
    value = IdSource(0).uuid()
    assert uuid.UUID(value).version == 4 and str(uuid.UUID(value)) == value


def test_same_seed_gives_the_same_sequence():
    first, second = IdSource(42), IdSource(42)
    assert [first.uuid() for _ in range(5)] == [second.uuid() for _ in range(5)]


def test_different_seeds_give_different_ids():
    assert IdSource(1).uuid() != IdSource(2).uuid()


def test_string_seeds_are_accepted_and_reproducible():
    assert IdSource("run-a").new("x") == IdSource("run-a").new("x")


def test_ids_from_one_source_are_unique():
    source = IdSource(0)
    values = [source.uuid() for _ in range(1000)] + [source.new("call") for _ in range(1000)]
    assert len(set(values)) == 2000


def test_prefixed_id_has_the_prefix_and_24_hex_digits():
    assert re.fullmatch(r"call_[0-9a-f]{24}", IdSource(0).new("call"))


def test_counters_start_at_one_and_are_independent_per_name():
    source = IdSource(0)
    counts = [source.counter("span"), source.counter("span"), source.counter("task"),
              source.counter("span")]
    assert counts == [1, 2, 1, 3]


def test_new_uuid_and_new_id_draw_from_the_current_source():
    expected = IdSource(9)
    with use_ids(IdSource(9)):
        assert (new_uuid(), new_id("t")) == (expected.uuid(), expected.new("t"))


def test_use_ids_with_a_seed_installs_a_fresh_source_seeded_with_it():
    with use_ids(5) as source:
        assert current_ids() is source and source.seed == 5


def test_use_ids_restores_the_previous_source(sim):
    with use_ids(5):
        pass
    assert current_ids() is sim.ids


def test_the_fixture_source_is_seeded_with_zero():
    assert new_uuid() == IdSource(0).uuid()


def test_seed_ids_reseeds_the_source_used_outside_use_ids(monkeypatch):
    monkeypatch.setattr(ids, "_default", ids._default)
    seed_ids(11)
    outside = contextvars.Context().run(new_uuid)
    assert outside == IdSource(11).uuid()


@given(st.integers(min_value=0, max_value=2**32 - 1))
def test_uuid_is_exactly_what_uuid_module_makes_of_the_same_random_bits(seed):
    drawn = random.Random(seed).getrandbits(128)

    assert IdSource(seed).uuid() == str(uuid.UUID(int=drawn, version=4))
