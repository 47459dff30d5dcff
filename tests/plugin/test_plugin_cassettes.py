"""Per-test cassettes for plain tests: the ``agentkit_llm`` fixture is to an LLM what
``@pytest.mark.vcr`` is to HTTP. ``--record-mode`` records one cassette per test through the
project's ``live_llm`` fixture, written only when the test passes; later runs replay it
offline."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from plugin_project import FAKE_ENDPOINT_CONFTEST, FAKE_URL, write

#: A project whose `live_llm` is a scripted "live" model that counts its calls in a file (so
#: a test can tell whether a run went live); ``LIVE_ANSWERS`` are its replies.
LIVE_CONFTEST = """\
import pathlib

import pytest

from agentkit.llms.mock import ScriptedLLM

LIVE_ANSWERS = {answers!r}


@pytest.fixture
def live_llm():
    calls = pathlib.Path(__file__).with_name("live_calls.txt")
    calls.write_text(str(int(calls.read_text()) + 1) if calls.exists() else "1")
    return ScriptedLLM(LIVE_ANSWERS, strict=False)
"""

ASKING_TEST = """\
def test_asks(agentkit_llm):
    from agentkit.llms import ChatMessage

    answer = agentkit_llm.chat([ChatMessage(role="user", content="What is 2 + 3?")])
    assert answer.message.content == {expected!r}
"""

CASSETTE = Path("cassettes/test_ask/test_asks.yaml")


@pytest.fixture
def asking(pytester: pytest.Pytester) -> pytest.Pytester:
    write(pytester, "conftest.py", LIVE_CONFTEST.format(answers=["5"]))
    write(pytester, "test_ask.py", ASKING_TEST.format(expected="5"))
    return pytester


def _live_calls(pytester: pytest.Pytester) -> int:
    path = pytester.path / "live_calls.txt"
    return int(path.read_text()) if path.exists() else 0


def _answers(path: Path) -> list[str]:
    data = yaml.safe_load(path.read_text(encoding="utf-8"))
    return [e["response"]["message"]["content"] for e in data["exchanges"]]


def test_record_mode_once_records_the_tests_own_cassette_beside_it(
        asking: pytest.Pytester) -> None:
    result = asking.runpytest("--record-mode=once")

    result.assert_outcomes(passed=1)
    assert _answers(asking.path / CASSETTE) == ["5"]
    assert _live_calls(asking) == 1


def test_a_tests_cassette_names_the_test_in_its_header(asking: pytest.Pytester) -> None:
    asking.runpytest("--record-mode=once").assert_outcomes(passed=1)

    header = yaml.safe_load((asking.path / CASSETTE).read_text(encoding="utf-8"))

    assert header["test"] == "test_ask.py::test_asks"
    assert "scenario" not in header and "agent_type" not in header


def test_a_recorded_test_replays_offline_without_the_live_model(asking: pytest.Pytester) -> None:
    asking.runpytest("--record-mode=once").assert_outcomes(passed=1)

    result = asking.runpytest("--block-network")

    result.assert_outcomes(passed=1)
    assert _live_calls(asking) == 1  # the live_llm fixture was not even asked for


def test_a_failed_test_writes_no_cassette(pytester: pytest.Pytester) -> None:
    write(pytester, "conftest.py", LIVE_CONFTEST.format(answers=["6"]))
    write(pytester, "test_ask.py", ASKING_TEST.format(expected="5"))

    result = pytester.runpytest("--record-mode=once")

    result.assert_outcomes(failed=1)
    assert not (pytester.path / CASSETTE).exists()


def test_a_failed_re_recording_keeps_the_good_cassette(asking: pytest.Pytester) -> None:
    asking.runpytest("--record-mode=once").assert_outcomes(passed=1)
    before = (asking.path / CASSETTE).read_text(encoding="utf-8")
    write(asking, "conftest.py", LIVE_CONFTEST.format(answers=["6"]))

    result = asking.runpytest("--record-mode=rewrite")

    result.assert_outcomes(failed=1)
    assert (asking.path / CASSETTE).read_text(encoding="utf-8") == before


def test_record_mode_once_replays_an_existing_cassette_without_going_live(
        asking: pytest.Pytester) -> None:
    asking.runpytest("--record-mode=once").assert_outcomes(passed=1)
    before = (asking.path / CASSETTE).read_text(encoding="utf-8")

    result = asking.runpytest("--record-mode=once")

    result.assert_outcomes(passed=1)
    assert (asking.path / CASSETTE).read_text(encoding="utf-8") == before


def test_without_a_cassette_the_test_says_exactly_how_to_record_it(
        asking: pytest.Pytester) -> None:
    result = asking.runpytest()

    result.assert_outcomes(errors=1)
    result.stdout.fnmatch_lines([
        f"*test_ask.py::test_asks: no cassette at {CASSETTE} yet; record it once with "
        "`pytest --record-mode=once test_ask.py::test_asks` (agentkit_llm records through "
        "your `live_llm` fixture); then the test replays offline"])


def test_a_replay_that_leaves_recorded_exchanges_unused_fails(asking: pytest.Pytester) -> None:
    asking.runpytest("--record-mode=once").assert_outcomes(passed=1)
    write(asking, "test_ask.py", "def test_asks(agentkit_llm):\n    pass\n")

    result = asking.runpytest()

    result.assert_outcomes(passed=1, errors=1)
    result.stdout.fnmatch_lines([f"*{CASSETTE}: 1 recorded exchange(s) were not replayed*"])


def test_a_changed_request_is_a_cassette_miss_naming_the_nearest_recorded_one(
        asking: pytest.Pytester) -> None:
    asking.runpytest("--record-mode=once").assert_outcomes(passed=1)
    text = (asking.path / "test_ask.py").read_text(encoding="utf-8")
    (asking.path / "test_ask.py").write_text(text.replace("2 + 3", "2 + 4"), encoding="utf-8")

    result = asking.runpytest()

    result.assert_outcomes(failed=1)
    result.stdout.fnmatch_lines(["*CassetteMissError: *no recorded exchange matches this "
                                 "request*What is 2 + 4?*",
                                 "*nearest recorded: exchanges[[]0[]]*What is 2 + 3?*"])


def test_each_test_gets_its_own_cassette_named_after_class_and_parameters(
        pytester: pytest.Pytester) -> None:
    write(pytester, "conftest.py", LIVE_CONFTEST.format(answers=["a", "b", "c"]))
    write(pytester, "test_many.py", """\
        import pytest
        from agentkit.llms import ChatMessage

        class TestGroup:
            @pytest.mark.parametrize("n", [1, 2])
            def test_param(self, agentkit_llm, n):
                agentkit_llm.chat([ChatMessage(role="user", content=f"q{n}")])

        def test_plain(agentkit_llm):
            agentkit_llm.chat([ChatMessage(role="user", content="q")])
        """)

    pytester.runpytest("--record-mode=once").assert_outcomes(passed=3)

    folder = pytester.path / "cassettes" / "test_many"
    assert sorted(p.name for p in folder.iterdir()) == [
        "TestGroup.test_param[1].yaml", "TestGroup.test_param[2].yaml", "test_plain.yaml"]


def test_the_marker_names_a_cassette_of_the_tests_choice(pytester: pytest.Pytester) -> None:
    write(pytester, "conftest.py", LIVE_CONFTEST.format(answers=["5"]))
    write(pytester, "test_ask.py", "import pytest\n\n"
                                   "@pytest.mark.agentkit_cassette('recorded/adding.yaml')\n"
                                   + ASKING_TEST.format(expected="5"))

    pytester.runpytest("--record-mode=once").assert_outcomes(passed=1)

    assert _answers(pytester.path / "recorded" / "adding.yaml") == ["5"]


def test_the_default_live_llm_records_through_the_openai_backend(
        pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch) -> None:
    for name in ("OPENAI_API_KEY", "OPENAI_BASE_URL", "AGENTKIT_MODEL"):
        monkeypatch.delenv(name, raising=False)
    write(pytester, "conftest.py", FAKE_ENDPOINT_CONFTEST.replace(
        '[tool_call("add", a=2, b=3), "2 + 3 = 5"]', '["5"]'))
    write(pytester, "test_ask.py", ASKING_TEST.format(expected="5"))

    result = pytester.runpytest("--record-mode=once", f"--agentkit-base-url={FAKE_URL}")

    result.assert_outcomes(passed=1)
    cassette = yaml.safe_load((pytester.path / CASSETTE).read_text(encoding="utf-8"))
    assert (cassette["model"], _answers(pytester.path / CASSETTE)) == ("gpt-4o-mini", ["5"])
