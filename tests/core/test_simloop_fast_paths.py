"""The virtual-time loop's own call_soon, create_task and run_forever (issue 36: fewer frames
per sync call) do what asyncio's do: the same running loop, task, context and hooks inside a
run, the same state after it, the same errors."""

from __future__ import annotations

import asyncio
import contextvars
import sys

import pytest

from agentkit.core import _simloop
from agentkit.core.sim import run_sync

_var: contextvars.ContextVar[str] = contextvars.ContextVar("fast_path_var", default="outer")


def test_a_sync_call_runs_in_a_task_on_the_running_virtual_loop_with_asyncgen_hooks() -> None:
    hooks_before = sys.get_asyncgen_hooks()

    async def inside() -> tuple[object, object, object, object]:
        _var.set("inner")  # the task's copy of the context, not the caller's
        loop = asyncio.get_running_loop()
        return (loop, asyncio.current_task(), sys.get_asyncgen_hooks().firstiter,
                loop.is_running())

    loop, task, firstiter, running = run_sync(inside())

    assert isinstance(loop, _simloop.VirtualTimeLoop) and task is not None and running
    assert firstiter == loop._asyncgen_firstiter_hook  # type: ignore[attr-defined]
    assert sys.get_asyncgen_hooks() == hooks_before
    assert asyncio._get_running_loop() is None and not loop.is_running()  # type: ignore[attr-defined]
    assert _var.get() == "outer"


def test_callbacks_scheduled_by_callbacks_run_in_the_next_iteration_as_asyncio_runs_them() -> None:
    loop = _simloop.VirtualTimeLoop()
    order: list[str] = []
    try:
        loop.call_soon(lambda: (order.append("a"), loop.call_soon(order.append, "c")))
        loop.call_soon(order.append, "b")
        loop.call_soon(loop.stop)
        loop.run_forever()
        assert order == ["a", "b"]  # "c" was scheduled during the iteration that stopped
        loop.call_soon(loop.stop)
        loop.run_forever()
        assert order == ["a", "b", "c"]
    finally:
        loop.close()


def test_a_closed_loop_refuses_as_asyncio_does() -> None:
    loop = _simloop.VirtualTimeLoop()
    loop.close()

    async def nothing() -> None:
        return None

    coro = nothing()
    for attempt in (loop.run_forever, lambda: loop.call_soon(print),
                    lambda: loop.create_task(coro)):
        with pytest.raises(RuntimeError, match="Event loop is closed"):
            attempt()
    coro.close()


def test_a_running_loop_cannot_run_again_and_debug_mode_is_asyncio_s_own() -> None:
    loop = _simloop.VirtualTimeLoop()
    loop.set_debug(True)
    errors: list[str] = []

    def again() -> None:
        try:
            loop.run_forever()
        except RuntimeError as exc:
            errors.append(str(exc))
        loop.stop()

    try:
        loop.call_soon(again)
        loop.run_forever()
        loop.set_debug(False)
        loop.call_soon(again)
        loop.run_forever()
    finally:
        loop.close()
    assert errors == ["This event loop is already running"] * 2
