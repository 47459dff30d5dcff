"""The ``agentkit_virtual_time`` marker runs ``async def`` tests on a virtual-time loop, with
pytest-asyncio (strict or auto mode) and without it."""

from __future__ import annotations

import pytest

from plugin_project import write


def _overlap_test(*marks: str) -> str:
    """An inner test with ``marks``: four concurrent 0.1 s calls must take 0.1 s of wall time."""
    decorators = "\n".join(f"@pytest.mark.{mark}" for mark in marks)
    return f"""\
import asyncio

import pytest

from agentkit.core.sim import Stopwatch, VirtualTimeLoop, asleep

{decorators}
async def test_four_parallel_calls():
    assert isinstance(asyncio.get_running_loop(), VirtualTimeLoop)
    watch = Stopwatch.start()
    await asyncio.gather(*(asleep(0.1) for _ in range(4)))
    assert (watch.wall, watch.serial) == (pytest.approx(0.1), pytest.approx(0.4))
"""


def _with_pytest_asyncio(pytester: pytest.Pytester, *args: str) -> pytest.RunResult:
    """Run the inner session; its conftest fails it unless pytest-asyncio is active there."""
    write(pytester, "conftest.py", """\
        import pytest

        def pytest_configure(config):
            if not config.pluginmanager.hasplugin("asyncio"):
                raise pytest.UsageError("pytest-asyncio is not active in this run")
        """)
    return pytester.runpytest(*args)


def test_without_pytest_asyncio_a_marked_async_test_overlaps_calls(
        pytester: pytest.Pytester) -> None:
    write(pytester, "test_overlap.py", _overlap_test("agentkit_virtual_time"))

    pytester.runpytest("-p", "no:asyncio").assert_outcomes(passed=1)


@pytest.mark.slow  # an inner pytest session with pytest-asyncio
def test_beside_pytest_asyncio_in_strict_mode_a_marked_async_test_overlaps_calls(
        pytester: pytest.Pytester) -> None:
    write(pytester, "test_overlap.py", _overlap_test("agentkit_virtual_time"))

    _with_pytest_asyncio(pytester).assert_outcomes(passed=1)


@pytest.mark.slow  # an inner pytest session (pytester)
def test_a_test_marked_for_pytest_asyncio_too_runs_on_virtual_time(
        pytester: pytest.Pytester) -> None:
    write(pytester, "test_overlap.py", _overlap_test("asyncio", "agentkit_virtual_time"))

    _with_pytest_asyncio(pytester).assert_outcomes(passed=1)


def test_pytest_asyncio_auto_mode_leaves_marked_tests_to_agentkit(
        pytester: pytest.Pytester) -> None:
    write(pytester, "test_overlap.py", _overlap_test("agentkit_virtual_time"))

    _with_pytest_asyncio(pytester, "--asyncio-mode=auto").assert_outcomes(passed=1)


def test_an_unmarked_test_on_pytest_asyncios_loop_is_warned_about(
        pytester: pytest.Pytester) -> None:
    write(pytester, "test_plain.py", """\
        import asyncio

        from agentkit.core.sim import Stopwatch, asleep

        async def test_four_parallel_calls():
            watch = Stopwatch.start()
            await asyncio.gather(*(asleep(0.1) for _ in range(4)))
            assert watch.unmodelled > 0
        """)

    result = _with_pytest_asyncio(pytester, "--asyncio-mode=auto")

    result.assert_outcomes(passed=1, warnings=1)
    result.stdout.fnmatch_lines(["*UnmodelledLatencyWarning: 0.1 s of simulated latency ran on "
                                 "an event loop without virtual time*"])


def test_a_bad_marker_argument_fails_the_test_saying_what_to_write(
        pytester: pytest.Pytester) -> None:
    write(pytester, "test_bad.py", """\
        import pytest

        @pytest.mark.agentkit_virtual_time(seed=[1])
        async def test_it():
            pass
        """)

    result = pytester.runpytest("-p", "no:asyncio")

    result.assert_outcomes(failed=1)
    result.stdout.fnmatch_lines(["*agentkit_virtual_time seed must be an int or a str, got list*"])
