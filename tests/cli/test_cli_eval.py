"""``agentkit eval``: the matrix against a (fake) OpenAI-compatible endpoint, resumed,
budgeted, offline, sharded and merged; and the CI options of ``run`` and ``report``."""

from __future__ import annotations

import io
import json
import re
import sys
import xml.etree.ElementTree as ET
from collections.abc import Callable
from pathlib import Path

import pytest
import respx
import yaml

from agentkit.llms.mock import tool_call
from cli_helpers import FAKE_URL, Outcome
from tests.scenario_text import adding_scenario

ROOT = Path(__file__).resolve().parents[2]


def _scenario(name: str) -> str:
    return adding_scenario(name, """\
expect:
  answer: {contains: "5"}
agents:
  function_calling:
    script: []
  react:
    script: []
""")


@pytest.fixture
def suite(write: Callable[[str, str], Path]) -> Path:
    write("scenarios/one.yaml", _scenario("one"))
    return write("scenarios/two.yaml", _scenario("two")).parent


def _script(*answers: str) -> list[object]:
    return [item for answer in answers for item in (tool_call("add", a=2, b=3), answer)]


def _eval(cli: Callable[..., Outcome], suite: Path, *options: str | Path) -> Outcome:
    return cli("eval", suite, "--agents", "function_calling", "--models", "m1", "--samples",
               "3", "--concurrency", "1", "--max-concurrency", "1", "--out",
               suite.parent / "report", *options)


def _report(suite: Path) -> dict:
    return json.loads((suite.parent / "report" / "report.json").read_text("utf-8"))


@pytest.mark.slow  # the agentkit command end to end, several runs
def test_eval_records_every_sample_and_reports_pass_rates_with_intervals(
        cli: Callable[..., Outcome], suite: Path, fake_openai_endpoint) -> None:
    server = fake_openai_endpoint(_script("2 + 3 = 5", "2 + 3 = 6", "2 + 3 = 5",
                                          "2 + 3 = 5", "2 + 3 = 5", "2 + 3 = 5"))

    result = _eval(cli, suite, "--base-url", FAKE_URL, "--seed", "10")

    assert [body["seed"] for body in server.requests][::2] == [10, 11, 12, 10, 11, 12]
    assert result.code == 1, result.out  # `one` fails its gate: 2/3 without min_pass_rate
    row = _report(suite)["rows"][0]
    assert (row["model"], row["samples"], row["passes"], row["class"]) == ("m1", 3, 2, "flaky")
    assert row["pass_rate"] == pytest.approx(2 / 3, abs=1e-6)
    assert row["interval"] == [pytest.approx(0.2077, abs=1e-4), pytest.approx(0.9385, abs=1e-4)]
    assert list(row["pass_at_k"]) == ["1", "2", "3"] and row["pass_all_k"]["3"] == 0.0
    assert "FAIL  one[function_calling@m1]" in result.out
    assert "PASS  two[function_calling@m1]" in result.out


@pytest.mark.slow  # the agentkit command end to end, several runs
def test_eval_with_everything_recorded_runs_offline_to_the_same_report(
        cli: Callable[..., Outcome], suite: Path, fake_openai_endpoint) -> None:
    fake_openai_endpoint(_script(*["2 + 3 = 5"] * 6))
    assert _eval(cli, suite, "--base-url", FAKE_URL).code == 0
    before = (suite.parent / "report" / "report.json").read_text("utf-8")

    again = _eval(cli, suite)  # no --base-url: offline

    assert again.code == 0, again.out + again.err
    assert "0 to record" in again.out
    assert (suite.parent / "report" / "report.json").read_text("utf-8") == before


def test_eval_offline_with_samples_missing_exits_2_saying_how(cli: Callable[..., Outcome],
                                                              suite: Path) -> None:
    result = _eval(cli, suite)

    assert result.code == 2
    assert "not recorded yet" in result.err and "--base-url" in result.err


def test_eval_samples_zero_is_a_usage_error(cli: Callable[..., Outcome], suite: Path) -> None:
    result = cli("eval", suite, "--agents", "react", "--models", "m1", "--samples", "0")

    assert result.code == 2 and "--samples: must be at least 1, got 0" in result.err


def test_eval_with_a_model_the_server_does_not_serve_exits_2_naming_them(
        cli: Callable[..., Outcome], suite: Path) -> None:
    with respx.mock(base_url=FAKE_URL) as router:
        router.get("/models").respond(json={"data": [{"id": "m1"}, {"id": "m2"}]})

        result = cli("eval", suite, "--agents", "react", "--models", "gpt-9", "--samples", "2",
                     "--base-url", FAKE_URL, "--out", suite.parent / "report")

    assert result.code == 2
    assert "unknown model 'gpt-9': the server at http://fake-openai.test/v1 serves m1, m2" \
        in result.err


def test_a_budget_below_one_run_exits_2(cli: Callable[..., Outcome], suite: Path,
                                        fake_openai_endpoint) -> None:
    fake_openai_endpoint(_script("2 + 3 = 5"), strict=False)

    result = _eval(cli, suite, "--base-url", FAKE_URL, "--max-calls", "1")

    assert result.code == 2
    assert "ran out before one run of a sample finished" in result.err


def test_max_answer_tokens_bounds_every_live_answer_and_is_kept_with_the_sampling(
        cli: Callable[..., Outcome], suite: Path, fake_openai_endpoint) -> None:
    server = fake_openai_endpoint(_script("2 + 3 = 5"), strict=False)

    result = cli("eval", suite / "one.yaml", "--agents", "function_calling", "--models", "m1",
                 "--samples", "1", "--concurrency", "1", "--base-url", FAKE_URL,
                 "--max-answer-tokens", "64", "--temperature", "0", "--out",
                 suite.parent / "report")

    assert result.code == 0, result.out + result.err
    assert len(server.requests) == 2
    assert [body["max_tokens"] for body in server.requests] == [64, 64]
    cassette = yaml.safe_load((suite / "cassettes" / "eval" / "one.function_calling.m1.yaml")
                              .read_text("utf-8"))
    assert cassette["sampling"] == {"temperature": 0.0, "seed": 0, "max_tokens": 64}


@pytest.mark.slow  # the agentkit command end to end, several runs
def test_a_spent_budget_stops_cleanly_says_what_is_left_and_a_rerun_repeats_no_call(
        cli: Callable[..., Outcome], suite: Path, fake_openai_endpoint) -> None:
    first = fake_openai_endpoint(_script(*["2 + 3 = 5"] * 6), strict=False)

    result = _eval(cli, suite, "--base-url", FAKE_URL, "--max-calls", "5")

    assert result.code == 3, result.out + result.err
    assert "INCOMPLETE  the budget ran out (5 calls of 5" in result.out
    assert "4 of 6 samples not recorded" in result.out
    assert _report(suite)["rows"][1]["not_recorded"] == 3
    calls = first.calls
    first.stop()
    # what is left: the answer of the sample the budget cut after its tool call, then 3 samples
    rest = fake_openai_endpoint(["2 + 3 = 5", *_script(*["2 + 3 = 5"] * 3)])
    assert _eval(cli, suite, "--base-url", FAKE_URL).code == 0
    assert calls + rest.calls == 12  # 6 samples of 2 calls: none asked twice


@pytest.mark.slow  # the agentkit command end to end, several runs
def test_eval_over_a_cassette_of_another_sample_count_exits_2(
        cli: Callable[..., Outcome], suite: Path, fake_openai_endpoint) -> None:
    fake_openai_endpoint(_script(*["2 + 3 = 5"] * 6))
    _eval(cli, suite, "--base-url", FAKE_URL)

    result = cli("eval", suite, "--agents", "function_calling", "--models", "m1",
                 "--samples", "5", "--out", suite.parent / "report")

    assert result.code == 2 and "holds 3 samples, but 5 were asked" in result.err


@pytest.mark.slow  # the agentkit command end to end, several runs
def test_evals_hints_over_a_mismatched_cassette_are_options_eval_has(
        cli: Callable[..., Outcome], suite: Path, fake_openai_endpoint) -> None:
    # issue 33: the hint said `--mode rewrite`, which eval lacks (argparse read `--models`)
    fake_openai_endpoint(_script(*["2 + 3 = 5"] * 6))
    _eval(cli, suite, "--base-url", FAKE_URL)
    options = ["--agents", "function_calling", "--out", suite.parent / "report"]

    result = cli("eval", suite, *options, "--models", "m1", "--samples", "5")
    hinted = cli("eval", suite, *options, "--models", "m1", "--samples", "3")

    assert result.code == 2 and "--mode" not in result.err, result.err
    assert ("give --samples 3 to use what is recorded, or record 5 anew (remove the file, "
            "then run the command again)") in result.err
    assert hinted.code == 0, hinted.out + hinted.err


@pytest.mark.slow  # the agentkit command end to end, several runs
def test_eval_writes_junit_xml_with_each_cases_statistics(
        cli: Callable[..., Outcome], suite: Path, fake_openai_endpoint) -> None:
    fake_openai_endpoint(_script("2 + 3 = 5", "2 + 3 = 6", *["2 + 3 = 5"] * 4))

    _eval(cli, suite, "--base-url", FAKE_URL, "--junit-xml", suite.parent / "junit.xml")

    root = ET.parse(suite.parent / "junit.xml").getroot()
    cases = root.findall(".//testcase")
    assert [(c.get("classname"), c.get("name")) for c in cases] == [
        ("one", "function_calling@m1"), ("two", "function_calling@m1")]
    assert cases[0].find("failure") is not None and cases[1].find("failure") is None
    properties = {p.get("name"): p.get("value") for p in cases[0].iter("property")}
    assert (properties["samples"], properties["class"]) == ("3", "flaky")


@pytest.mark.slow  # a whole evaluation in shards and whole
def test_eval_shards_merged_give_the_report_of_the_unsplit_evaluation(
        cli: Callable[..., Outcome], suite: Path, fake_openai_endpoint) -> None:
    fake_openai_endpoint(_script(*["2 + 3 = 5"] * 6))
    assert _eval(cli, suite, "--base-url", FAKE_URL).code == 0
    base = suite.parent
    for index in (1, 2):
        cli("eval", suite, "--agents", "function_calling", "--models", "m1", "--samples", "3",
            "--shard", f"{index}/2", "--out", base / f"shard{index}")

    merged = cli("report", "--merge", base / "shard1", base / "shard2", "--out", base / "m")

    assert merged.code == 0, merged.out + merged.err
    for name in ("report.json", "report.md", "report.html", "summary.md"):
        assert (base / "m" / name).read_bytes() == (base / "report" / name).read_bytes(), name


SOME = ["parallel_lookups.yaml", "single_tool_call.yaml", "slow_tools.yaml",
        "multi_turn_memory.yaml"]


def _folder_files(folder: Path) -> dict[str, bytes]:
    return {str(p.relative_to(folder)): p.read_bytes() for p in sorted(folder.rglob("*"))
            if p.is_file()}


@pytest.mark.slow  # the bundled comparison in shards and whole
def test_report_shards_merged_are_byte_identical_to_the_unsplit_report(
        cli: Callable[..., Outcome], tmp_path: Path) -> None:
    paths = [ROOT / "scenarios" / name for name in SOME]
    agents = ["--agents", "react,function_calling,coa"]
    assert cli("report", *paths, *agents, "--out", tmp_path / "whole").code == 0
    for index in (1, 2, 3):
        shard = cli("report", *paths, *agents, "--shard", f"{index}/3",
                    "--out", tmp_path / f"s{index}")
        assert shard.code == 0, shard.out + shard.err

    merged = cli("report", "--merge", *(tmp_path / f"s{i}" for i in (1, 2, 3)),
                 "--out", tmp_path / "merged")

    assert merged.code == 0, merged.out + merged.err
    assert _folder_files(tmp_path / "merged") == _folder_files(tmp_path / "whole")


def test_merging_without_every_shard_is_an_error_naming_the_missing_one(
        cli: Callable[..., Outcome], tmp_path: Path) -> None:
    paths = [ROOT / "scenarios" / name for name in SOME[:2]]
    cli("report", *paths, "--shard", "1/2", "--out", tmp_path / "s1")

    result = cli("report", "--merge", tmp_path / "s1", "--out", tmp_path / "m")

    assert result.code == 2 and "shard(s) 2 of 2 missing" in result.err


def _bump_tokens(path: Path) -> None:
    """An edit that keeps ``path`` a valid report or trace: a token count ten times larger."""
    text = path.read_text("utf-8")
    found = re.search(r'"prompt_tokens": (\d+)', text)
    assert found is not None, path
    path.write_text(text.replace(found[0], f'"prompt_tokens": {found[1]}0', 1), "utf-8")


@pytest.mark.parametrize("changed", ["report.json", "traces"])
def test_a_shard_changed_after_it_was_written_is_refused_by_its_checksum(
        cli: Callable[..., Outcome], tmp_path: Path, changed: str) -> None:
    """A shard's report folder lists the sha256 of every file a merge reads (SHA256SUMS);
    a file changed since, though still valid, is refused naming it (before: merged as if
    the run had said so)."""
    paths = [ROOT / "scenarios" / name for name in SOME[:2]]
    for index in (1, 2):
        cli("report", *paths, "--shard", f"{index}/2", "--out", tmp_path / f"s{index}")
    assert "report.json" in (tmp_path / "s1" / "SHA256SUMS").read_text("utf-8")
    file = (tmp_path / "s1" / "report.json" if changed == "report.json"
            else next((tmp_path / "s1" / "traces").glob("*.json")))
    _bump_tokens(file)

    result = cli("report", "--merge", tmp_path / "s1", tmp_path / "s2", "--out", tmp_path / "m")

    assert result.code == 2, result.out + result.err
    assert (f"{file}: changed since its shard's report was written (its sha256 is not the one "
            f"in {tmp_path / 's1' / 'SHA256SUMS'})") in result.err
    assert not (tmp_path / "m").exists()


def test_a_shard_without_its_checksums_is_refused(
        cli: Callable[..., Outcome], tmp_path: Path) -> None:
    paths = [ROOT / "scenarios" / name for name in SOME[:2]]
    for index in (1, 2):
        cli("report", *paths, "--shard", f"{index}/2", "--out", tmp_path / f"s{index}")
    (tmp_path / "s2" / "SHA256SUMS").unlink()

    result = cli("report", "--merge", tmp_path / "s1", tmp_path / "s2", "--out", tmp_path / "m")

    assert result.code == 2, result.out + result.err
    assert f"{tmp_path / 's2' / 'SHA256SUMS'}: no such file" in result.err


def test_run_writes_junit_xml(cli: Callable[..., Outcome], adding: Path) -> None:
    junit = adding.parent / "junit.xml"

    result = cli("run", adding, "--agents", "react", "--snapshots", "off", "--junit-xml", junit)

    assert result.code == 0, result.out
    cases = ET.parse(junit).getroot().findall(".//testcase")
    assert [(c.get("classname"), c.get("name")) for c in cases] == [("adding", "react")]


def test_report_writes_junit_xml_with_a_failure_per_failed_row(
        cli: Callable[..., Outcome], write: Callable[[str, str], Path]) -> None:
    suite = write("scenarios/one.yaml", adding_scenario("one", """\
expect:
  answer: {contains: "5"}
agents:
  function_calling:
    script: [{tool_calls: [{name: add, args: {a: 2, b: 3}}]}, "2 + 3 = 5"]
  react:
    script: ["Answer: 6"]
""")).parent
    junit = suite.parent / "junit.xml"

    result = cli("report", suite, "--out", suite.parent / "report", "--snapshots", "off",
                 "--junit-xml", junit)

    assert result.code == 1, result.out + result.err
    cases = ET.parse(junit).getroot().findall(".//testcase")
    assert [(c.get("classname"), c.get("name")) for c in cases] == [
        ("one", "function_calling"), ("one", "react")]
    assert cases[0].find("failure") is None
    failure = cases[1].find("failure")
    assert failure is not None and "6" in (failure.text or "") + (failure.get("message") or "")


def test_run_with_a_shard_runs_only_that_shards_cases(cli: Callable[..., Outcome]) -> None:
    paths = [ROOT / "scenarios" / name for name in SOME]
    seen = []
    for index in (1, 2):
        result = cli("run", *paths, "--agents", "react,coa", "--shard", f"{index}/2")
        seen += [line.split()[1] for line in result.out.splitlines()
                 if line.startswith(("PASS", "FAIL"))]

    whole = cli("run", *paths, "--agents", "react,coa")
    assert sorted(seen) == sorted(line.split()[1] for line in whole.out.splitlines()
                                  if line.startswith(("PASS", "FAIL")))


class _Terminal(io.StringIO):
    def isatty(self) -> bool:
        return True


@pytest.mark.slow  # the agentkit command end to end, several runs
def test_eval_shows_its_progress_on_a_terminal_and_clears_it_at_the_end(
        cli: Callable[..., Outcome], suite: Path, fake_openai_endpoint,
        monkeypatch: pytest.MonkeyPatch) -> None:
    fake_openai_endpoint(_script("2 + 3 = 5", "2 + 3 = 6", *["2 + 3 = 5"] * 4))
    terminal = _Terminal()
    monkeypatch.setattr(sys, "stderr", terminal)
    monkeypatch.setenv("COLUMNS", "200")

    _eval(cli, suite, "--base-url", FAKE_URL)

    shown = terminal.getvalue()
    assert shown.endswith("\r\x1b[K")
    lines = shown.removesuffix("\r\x1b[K").split("\r\x1b[K")[1:]
    # one line before the first sample, then one per sample: done/total, the pass rate so far,
    # calls and tokens spent, the concurrency limit and rate limits met, the time left
    assert lines[0] == "[0/6] pass — · 0 calls · 0 tokens · limit 1 (0 rate limits) · ETA —"
    assert [line[:5] for line in lines[1:]] == [f"[{n}/6]" for n in range(1, 7)]
    assert lines[1].startswith("[1/6] pass 100% · 2 calls · ")
    assert lines[2].startswith("[2/6] pass 50% · 4 calls · ")
    assert re.fullmatch(r"\[6/6\] pass 83% · 12 calls · [1-9][\d,]* tokens · limit 1 "
                        r"\(0 rate limits\) · ETA —", lines[-1])
    assert all(re.search(r" · ETA \d", line) for line in lines[1:-1])


@pytest.mark.slow  # the agentkit command end to end, several runs
def test_eval_writes_plain_progress_lines_when_stderr_is_not_a_terminal(
        cli: Callable[..., Outcome], suite: Path, fake_openai_endpoint) -> None:
    # issue 33: through `| tee` an evaluation was silent for 9.5 minutes
    fake_openai_endpoint(_script(*["2 + 3 = 5"] * 6))

    result = _eval(cli, suite, "--base-url", FAKE_URL)

    assert result.code == 0 and "\x1b[K" not in result.err and "\r" not in result.err
    lines = [line for line in result.err.splitlines() if line.startswith("agentkit eval: [")]
    # a tenth of 6 samples rounds up to one: a line per sample (or per 10 s, whichever first)
    assert [line[:20] for line in lines] == [f"agentkit eval: [{n}/6]" for n in range(1, 7)]


@pytest.mark.slow  # the agentkit command end to end, several runs
def test_a_sample_hitting_an_infrastructure_error_shows_in_every_report_form_and_exits_3(
        cli: Callable[..., Outcome], suite: Path, fake_openai_endpoint) -> None:
    import httpx

    unreadable = httpx.Response(200, text="not json")  # not retried: one infrastructure error
    fake_openai_endpoint([*_script("2 + 3 = 5"), unreadable, *_script(*["2 + 3 = 5"] * 4)])
    junit = suite.parent / "junit.xml"

    result = _eval(cli, suite, "--base-url", FAKE_URL, "--junit-xml", junit)

    assert result.code == 3, result.out
    assert "PASS  one[function_calling@m1]" in result.out
    assert "3 samples, 1 infrastructure errors: pass rate 100% (2/2" in result.out
    assert "INCOMPLETE  samples hit infrastructure errors: 1 of 6 samples not recorded" \
        in result.out
    report = suite.parent / "report"
    markdown = (report / "report.md").read_text("utf-8")
    summary = (report / "summary.md").read_text("utf-8")
    page = (report / "report.html").read_text("utf-8")
    for text in (markdown, summary, page):
        assert "incomplete: 1 sample hit infrastructure errors" in text
        assert "Infrastructure errors" in text  # under Needs attention
    assert summary.startswith("### agentkit: ⚠️ incomplete")
    assert _report(suite)["rows"][0]["infra_errors"] == 1
    case = ET.parse(junit).getroot().findall(".//testcase")[0]
    error = case.find("error")
    assert error is not None and "1 of 3 samples hit infrastructure errors" in (
        error.get("message") or "")


@pytest.mark.slow  # the agentkit command end to end, several runs
def test_a_case_no_sample_passes_fails_a_low_min_pass_rate_warned_in_every_output_form(
        cli: Callable[..., Outcome], write: Callable[[str, str], Path],
        fake_openai_endpoint) -> None:
    # issue 33: 0/5 under min_pass_rate 0.2 printed PASS -- 0/5's interval reaches 43%
    suite = write("scenarios/gated.yaml", adding_scenario("gated", """\
expect:
  answer: {contains: "5"}
min_pass_rate: 0.2
agents:
  function_calling:
    script: []
""")).parent
    fake_openai_endpoint(_script(*["2 + 3 = 6"] * 5))
    junit = suite.parent / "junit.xml"
    warning = ("min_pass_rate 20% cannot fail at 5 samples unless none passes (even 0/5 has a "
               "95% interval up to 43%); give at least 16 samples for a pass rate below it to "
               "fail")

    result = cli("eval", suite, "--agents", "function_calling", "--models", "m1", "--samples",
                 "5", "--concurrency", "1", "--max-concurrency", "1", "--out",
                 suite.parent / "report", "--base-url", FAKE_URL, "--junit-xml", junit)

    assert result.code == 1, result.out
    assert "FAIL  gated[function_calling@m1]" in result.out
    assert "no sample passed (0/5): a case meets min_pass_rate 20% only with passes" \
        in result.out
    assert f"      warning: {warning}" in result.out
    report = suite.parent / "report"
    for name in ("report.md", "summary.md", "report.html"):
        text = " ".join((report / name).read_text("utf-8").replace("\\_", "_").split())
        assert "A gate that cannot fail" in text and warning in text, name
    assert _report(suite)["rows"][0]["gate_warning"] == warning
    properties = {p.get("name"): p.get("value") for p in ET.parse(junit).iter("property")}
    assert properties["gate_warning"] == warning
    assert ET.parse(junit).getroot().get("failures") == "1"


@pytest.mark.slow  # the agentkit command end to end, several runs
def test_a_case_under_its_min_pass_rate_within_noise_prints_undecided_not_pass(
        cli: Callable[..., Outcome], write: Callable[[str, str], Path],
        fake_openai_endpoint) -> None:
    suite = write("scenarios/gated.yaml", adding_scenario("gated", """\
expect:
  answer: {contains: "5"}
min_pass_rate: 0.6
agents:
  function_calling:
    script: []
""")).parent
    fake_openai_endpoint(_script("2 + 3 = 5", "2 + 3 = 6", "2 + 3 = 6", "2 + 3 = 5",
                                 "2 + 3 = 6"))

    result = cli("eval", suite, "--agents", "function_calling", "--models", "m1", "--samples",
                 "5", "--concurrency", "1", "--max-concurrency", "1", "--out",
                 suite.parent / "report", "--base-url", FAKE_URL)

    assert result.code == 0, result.out  # the gate is met within noise: not a failure
    assert "UNDECIDED  gated[function_calling@m1]" in result.out
    assert ("      pass rate 40% (2/5; 12-77%) is under its min_pass_rate 60%, but within "
            "noise; about 25 samples at this rate would put it under beyond noise") \
        in result.out.splitlines()



def test_an_evaluation_stopped_at_a_call_says_it_stopped_and_why_not_that_nothing_answered(
) -> None:
    """A call the evaluation cannot make again ends it (the model unreachable, or an answer
    that timed out while the server still generates it: tests/eval/test_matrix.py); the
    report's line says the evaluation stopped and gives the call's own error, which names
    which of the two it was (before: "the model could not be reached" for both)."""
    from types import SimpleNamespace

    from agentkit.cli._eval import _print_incomplete

    why = "m1 did not answer within 900 s (1 attempt); not retried: the server may still be " \
          "generating that answer"
    out = io.StringIO()
    _print_incomplete(SimpleNamespace(unreachable=why, missing={}), out)

    assert out.getvalue() == f"INCOMPLETE  the evaluation stopped: {why}\n"
