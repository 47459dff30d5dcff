"""``conforms``: what ``isinstance`` says of a runtime-checkable protocol, its members listed
once."""

from __future__ import annotations

from typing import Protocol, runtime_checkable

import pytest

from agentkit.core.protocols import conforms


@runtime_checkable
class _Counted(Protocol):
    calls: int

    def reset(self) -> None: ...


class _Both:
    def __init__(self) -> None:
        self.calls = 0

    def reset(self) -> None:
        self.calls = 0


class _NoCalls:
    def reset(self) -> None: ...


class _ResetIsNone:
    calls = 1
    reset = None


class _Derived(_Counted):  # a nominal subclass lacking the data member
    def reset(self) -> None: ...


@pytest.mark.parametrize("obj", [_Both(), _NoCalls(), _ResetIsNone(), _Derived(), object(), 3])
def test_conforms_says_what_isinstance_says(obj):
    assert conforms(obj, _Counted) is isinstance(obj, _Counted)


def test_conforms_tells_an_object_with_every_member_from_one_without():
    assert conforms(_Both(), _Counted) and not conforms(_NoCalls(), _Counted)
