"""agentkit.core.reflists: lists written with each object once, read back in full."""

from __future__ import annotations

import pytest

from agentkit.core.reflists import ListReader, ListRefError, ListWriter, Shared


def test_a_list_extending_the_longest_view_of_its_buffer_shares_the_buffer():
    first = Shared(["a", "b"])

    second = first.extended(["c"])

    assert second.extends(first) and list(first) == ["a", "b"] and list(second) == ["a", "b", "c"]


def test_extending_a_view_that_a_longer_one_exists_of_copies_and_leaves_the_longer_one():
    first = Shared(["a"])
    longer = first.extended(["b"])

    other = first.extended(["x"])

    assert (list(longer), list(other)) == (["a", "b"], ["a", "x"])
    assert not other.extends(longer)


def test_a_shared_view_compares_equal_to_the_list_of_its_items():
    assert Shared([1, 2]).extended([3]) == [1, 2, 3]
    assert Shared([1, 2])[1:] == [2]


def test_a_run_an_earlier_list_holds_is_written_as_one_reference():
    a, b, c = {"m": 1}, {"m": 2}, {"m": 3}
    writer = ListWriter()
    writer.write("/first", [a, b])

    assert writer.write("/second", [a, b, c]) == [
        {"ref": "/first", "start": 0, "count": 2}, c]


def test_what_the_writer_writes_the_reader_reads_back():
    a, b, c, d = ({"m": n} for n in range(4))
    lists = {"/one": [a, b, c], "/two": [c, a, b, d], "/three": [d, c, a]}
    writer, reader = ListWriter(), ListReader()

    written = {pointer: writer.write(pointer, items) for pointer, items in lists.items()}

    assert {pointer: list(reader.read(pointer, segments))
            for pointer, segments in written.items()} == lists


def test_a_reference_forward_is_an_error_naming_the_list_and_segment():
    with pytest.raises(ListRefError) as caught:
        ListReader().read("/one", [{"ref": "/two", "start": 0, "count": 1}])

    assert str(caught.value) == "/one/0: `ref` '/two' is not a list written before this one"
