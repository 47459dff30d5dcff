"""Judges calibrated against people: `agentkit judge calibrate` on a labels file, offline from
its recording, and every way the setup can be wrong said at its place."""

from __future__ import annotations

import io
import json
import shutil
from pathlib import Path

import pytest

from agentkit.cli import main
from agentkit.llms.mock import FunctionLLM
from agentkit.quality import (
    LabelsError,
    calibrate,
    cassette_of,
    judge_calibration,
    load_labels,
)
from agentkit.recording import Cassette
from tests.quality.keyword_judge import NAME, keyword_judge

BUNDLED = Path("judges/refund_amount.labels.yaml")


def _run(*argv: str, cwd: Path | None = None, monkeypatch: pytest.MonkeyPatch | None = None
         ) -> tuple[int, str]:
    if cwd is not None and monkeypatch is not None:
        monkeypatch.chdir(cwd)
    out = io.StringIO()
    code = main(list(argv), out=out)
    return code, out.getvalue()


def _usage(capsys: pytest.CaptureFixture[str], *argv: str) -> str:
    assert main(list(argv), out=io.StringIO()) == 2
    return capsys.readouterr().err


# -- the bundled 20-label file ------------------------------------------------------------

def test_calibration_on_the_bundled_twenty_labels_prints_kappa_with_its_interval():
    code, out = _run("judge", "calibrate", str(BUNDLED))

    assert code == 0
    # people pass 8 of 20, the judge 12; they agree on 16: po 0.8, pe 0.4*0.6 + 0.6*0.4 = 0.48
    assert f"Cohen's kappa {0.32 / 0.52:.2f}, 95% interval " in out
    assert "(percentile bootstrap over the 20 items, 2000 resamples, seed 0)" in out
    assert "base rate: people pass 8 of 20 (40%), the judge 12 (60%)" in out
    assert "self-consistency: 19 of 20 items judged alike in every sample" in out
    assert f"judge model {NAME} · rubric 4a73a9a6c09dfd3e · 20 labelled items" in out
    assert "CALIBRATED" in out


def test_each_criterion_has_its_kappa_and_confusion_counts():
    calibration = calibrate(BUNDLED)
    criteria = {agreement.name: agreement for agreement in calibration.criteria}

    assert calibration.overall.confusion() == {"both_pass": 8, "people_only": 0,
                                               "judge_only": 4, "both_fail": 8}
    assert criteria["amount"].kappa == pytest.approx(1.0)
    # no_date: people pass 13, the judge 17 (it misses "by Friday", "on 3 March", ...)
    assert criteria["no_date"].confusion() == {"both_pass": 13, "people_only": 0,
                                               "judge_only": 4, "both_fail": 3}
    assert criteria["no_date"].kappa == pytest.approx((0.8 - 0.605) / (1 - 0.605))


def test_the_json_is_stamped_with_the_judge_model_and_the_rubric_hash(tmp_path):
    path = tmp_path / "calibration.json"
    assert _run("judge", "calibrate", str(BUNDLED), "--json", str(path))[0] == 0
    data = json.loads(path.read_text("utf-8"))[0]

    assert data["judge_model"] == [NAME]
    assert data["rubric_hash"] == "4a73a9a6c09dfd3e"
    assert data["interval_method"].startswith("percentile bootstrap over the labelled items")
    assert data["overall"]["kappa"] == pytest.approx(0.32 / 0.52, abs=1e-6)
    assert data["overall"]["self_consistency"] == {"consistent": 19, "items": 20}


def test_a_floor_above_kappa_fails_the_command():
    code, out = _run("judge", "calibrate", str(BUNDLED), "--min-kappa", "0.7")

    assert code == 1
    assert "BELOW THE FLOOR  kappa is under min_kappa 0.7" in out


@pytest.mark.slow  # re-records 180 judge calls, the cassette saved after each
def test_the_bundled_recording_is_what_the_stand_in_judge_answers(tmp_path):
    labels = tmp_path / BUNDLED.name
    shutil.copy(BUNDLED, labels)

    recorded = calibrate(labels, live=keyword_judge(), mode="rewrite")

    assert recorded.to_dict()["overall"] == calibrate(BUNDLED).to_dict()["overall"]
    fresh, bundled = Cassette.load(cassette_of(labels)), Cassette.load(cassette_of(BUNDLED))
    assert ([e.response for e in fresh.exchanges] == [e.response for e in bundled.exchanges])


def test_the_command_finds_the_projects_labels_files_by_default(tmp_path, monkeypatch):
    (tmp_path / "judges").mkdir()
    for path in (BUNDLED, cassette_of(BUNDLED)):
        shutil.copy(path, tmp_path / "judges" / path.name)
    code, out = _run("judge", "calibrate", cwd=tmp_path, monkeypatch=monkeypatch)

    assert code == 0
    assert out.startswith("judges/refund_amount.labels.yaml: ")


# -- degenerate labels, through a judge function ------------------------------------------

def _labels(people: list[str], rubric: str = "says yes") -> str:
    items = "\n".join(f"""\
  - id: item-{i}
    transcript: [{{user: "question {i}", assistant: "answer {i}"}}]
    verdict: {verdict}""" for i, verdict in enumerate(people))
    return f"rubric: {rubric}\nitems:\n{items}\n"


def _judge_saying(verdicts: list[str]) -> FunctionLLM:
    def answer(messages, info):
        number = int(str(messages[1].content).split("answer ")[1].split("\n")[0])
        return json.dumps({"verdict": verdicts[number], "reason": "so it is"})

    return FunctionLLM(function=answer, name="judge-fn", function_calling=False)


def _calibrated(tmp_path: Path, people: list[str], judge: list[str]):
    path = tmp_path / "yes.labels.yaml"
    path.write_text(_labels(people), "utf-8")
    return calibrate(path, live=_judge_saying(judge), mode="rewrite")


def test_perfect_agreement_is_kappa_one(tmp_path):
    found = _calibrated(tmp_path, ["pass", "fail"] * 5, ["pass", "fail"] * 5)
    assert found.overall.kappa == pytest.approx(1.0)
    assert found.status == "calibrated"


def test_perfect_disagreement_is_kappa_minus_one(tmp_path):
    found = _calibrated(tmp_path, ["pass", "fail"] * 5, ["fail", "pass"] * 5)
    assert found.overall.kappa == pytest.approx(-1.0)
    assert found.status == "below_floor"


def test_labels_all_one_class_give_kappa_zero_and_the_base_rate_shows_why(tmp_path):
    found = _calibrated(tmp_path, ["pass"] * 10, ["pass"] * 8 + ["fail"] * 2)
    assert found.overall.kappa == pytest.approx(0.0)
    assert found.overall.base_rates() == (10, 8, 10)


def test_one_verdict_from_both_is_undefined_and_fails_the_command(tmp_path, monkeypatch):
    _calibrated(tmp_path, ["pass"] * 4, ["pass"] * 4)
    code, out = _run("judge", "calibrate", "yes.labels.yaml", cwd=tmp_path,
                     monkeypatch=monkeypatch)
    assert code == 1
    assert "Cohen's kappa undefined" in out and "UNDEFINED" in out


def test_an_answer_that_is_not_a_verdict_leaves_the_item_out_and_says_so(tmp_path):
    path = tmp_path / "yes.labels.yaml"
    path.write_text(_labels(["pass", "fail", "pass"]), "utf-8")
    texts = iter([json.dumps({"verdict": "pass", "reason": "yes"}), "Looks good!",
                  json.dumps({"verdict": "pass", "reason": "yes"})])
    found = calibrate(path, live=FunctionLLM(function=lambda m, i: next(texts), name="j",
                                             function_calling=False), mode="rewrite")

    assert [v.item for v in found.overall.unjudged] == ["item-1"]
    assert "not a verdict" in (found.overall.unjudged[0].error or "")
    assert found.overall.base_rates() == (2, 2, 2)


# -- the setup made wrong on purpose ------------------------------------------------------

def _broken(tmp_path: Path, old: str, new: str) -> Path:
    path = tmp_path / BUNDLED.name
    path.write_text(BUNDLED.read_text("utf-8").replace(old, new, 1), "utf-8")
    shutil.copy(cassette_of(BUNDLED), cassette_of(path))
    return path


def test_a_typo_in_a_verdict_is_an_error_at_its_line(tmp_path, capsys):
    path = _broken(tmp_path, "    verdict: pass\n", "    verdict: pas\n")
    err = _usage(capsys, "judge", "calibrate", str(path))

    assert f"{path}:23: items.0.verdict: Input should be 'pass' or 'fail', got 'pas'" in err


def test_an_id_given_twice_is_an_error_naming_the_first(tmp_path):
    path = _broken(tmp_path, "id: amount-tomorrow", "id: exact-amount")
    with pytest.raises(LabelsError, match=r":25: items.1.id: the id 'exact-amount' is given "
                                          r"twice \(first at line 18\)"):
        load_labels(path)


def test_a_criterion_the_file_does_not_define_says_which_it_has(tmp_path):
    path = _broken(tmp_path, "criteria: {amount: pass, no_date: pass}",
                   "criteria: {amount: pass, nodate: pass}")
    with pytest.raises(LabelsError, match=r"items.0.criteria.nodate: not a criterion of this "
                                          r"file; did you mean `no_date`\?"):
        load_labels(path)


def test_an_unknown_field_says_the_one_meant(tmp_path):
    path = _broken(tmp_path, "samples: 3", "sample: 3")
    with pytest.raises(LabelsError, match=r":16: sample: unknown field `sample`; did you mean "
                                          r"`samples`\?"):
        load_labels(path)


def test_a_changed_rubric_is_a_miss_that_says_the_rubric_changed(tmp_path, capsys):
    path = _broken(tmp_path, "promises no date for the refund", "promises no date at all")
    err = _usage(capsys, "judge", "calibrate", str(path))

    assert "no recorded verdict of the judge for items.exact-amount" in err
    assert "the rubric changed (recorded 4a73a9a6c09dfd3e" in err


def test_a_judge_model_other_than_the_recorded_one_is_a_miss(tmp_path, capsys):
    path = _broken(tmp_path, "samples: 3", "samples: 3\nmodel: gpt-4o-mini")
    err = _usage(capsys, "judge", "calibrate", str(path))

    assert ("the judge's model changed (recorded with `keyword-judge`, the scenario now names "
            "`gpt-4o-mini`)") in err


def test_a_labels_file_without_its_recording_says_how_to_record_it(tmp_path, capsys):
    path = tmp_path / BUNDLED.name
    shutil.copy(BUNDLED, path)
    err = _usage(capsys, "judge", "calibrate", str(path))

    assert f"no recording of its judge ({cassette_of(path)}); record one with `agentkit " in err


def test_a_file_not_named_labels_yaml_is_refused(tmp_path, capsys):
    path = tmp_path / "refund.yaml"
    shutil.copy(BUNDLED, path)
    err = _usage(capsys, "judge", "calibrate", str(path))
    assert "a judge's labels file is named <rubric>.labels.yaml" in err


def test_a_model_without_a_server_is_a_usage_error(capsys):
    err = _usage(capsys, "judge", "calibrate", str(BUNDLED), "--model", "gpt-4o-mini")
    assert "give --base-url too" in err


def test_a_kappa_floor_out_of_range_is_a_usage_error(capsys):
    err = _usage(capsys, "judge", "calibrate", str(BUNDLED), "--min-kappa", "2")
    assert "kappa is a number from -1 to 1" in err


def test_no_labels_files_in_the_project_is_a_usage_error(tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    err = _usage(capsys, "judge", "calibrate")
    assert "no labels files in judges" in err


# -- what reports are told -----------------------------------------------------------------

def test_a_rubric_no_file_labels_is_uncalibrated():
    found = judge_calibration("names Paris", ["script"], Path("judges"))
    assert not found.calibrated
    assert found.why.startswith("uncalibrated: no labels file in judges/ labels this rubric")


def test_the_recorded_judge_on_its_labelled_rubric_is_calibrated():
    rubric = load_labels(BUNDLED).rubric
    found = judge_calibration(rubric, [NAME], Path("judges"))
    assert found.calibrated
    assert found.why.startswith(f"calibrated: kappa {0.32 / 0.52:.2f} (95% interval ")


def test_another_judge_on_a_labelled_rubric_is_uncalibrated():
    rubric = load_labels(BUNDLED).rubric
    found = judge_calibration(rubric, ["script"], Path("judges"))
    assert not found.calibrated
    assert "calibrates keyword-judge, but script judged" in found.why


def test_a_labelled_rubric_under_its_files_floor_is_below_it(tmp_path):
    path = _broken(tmp_path, "samples: 3", "samples: 3\nmin_kappa: 0.8")
    found = judge_calibration(load_labels(path).rubric, [NAME], tmp_path)
    assert not found.calibrated
    assert found.why.startswith("below its floor: kappa 0.62")
    assert "is under min_kappa 0.8" in found.why


SCRIPTED = """\
format: 1
name: capital
tools:
  - ref: mocks.tools:capital
turns:
  - user: What is the capital of France?
expect:
  answer: {judge: "RUBRIC"}
judge:
  script: ['{"verdict": "pass", "reason": "It names Paris."}']
agents:
  function_calling:
    script:
      - tool_calls: [{name: capital, args: {country: France}}]
      - "The capital of France is Paris."
"""


def _report_forms(tmp_path: Path, rubric: str) -> dict[str, str]:
    folder = tmp_path / "scenarios"
    folder.mkdir()
    scenario = folder / "capital.yaml"
    scenario.write_text(SCRIPTED.replace("RUBRIC", rubric), "utf-8")
    out = tmp_path / "report"
    code, console = _run("run", str(scenario), "--snapshots", "off", "--junit-xml",
                         str(tmp_path / "run.xml"))
    assert code == 0, console
    assert _run("report", str(scenario), "--out", str(out), "--snapshots", "off",
                "--junit-xml", str(tmp_path / "report.xml"))[0] == 0
    return {"console": console, "run junit": (tmp_path / "run.xml").read_text("utf-8"),
            **{name: (out / name).read_text("utf-8")
               for name in ("report.md", "summary.md", "report.json", "report.html")},
            "report junit": (tmp_path / "report.xml").read_text("utf-8")}


def test_an_uncalibrated_judge_says_so_in_every_report_form(tmp_path):
    forms = _report_forms(tmp_path, "names Paris as the capital of France")
    why = "uncalibrated: no labels file in "

    assert {name: why in text for name, text in forms.items()} == dict.fromkeys(forms, True)
    assert "judge uncalibrated: no labels file" in forms["console"]
    assert "**Judges not calibrated** `capital[function_calling]`: the judge of " \
           "expect.answer.judge: uncalibrated" in forms["report.md"]
    assert "| pass (judge uncalibrated) |" in forms["report.md"]
    assert 'name="judges_uncalibrated"' in forms["report junit"]
    assert 'name="judges_uncalibrated"' in forms["run junit"]
    judged = json.loads(forms["report.json"])["rows"][0]["judged"][0]
    assert judged["calibration"]["calibrated"] is False


def test_a_labelled_rubric_judged_by_another_judge_is_uncalibrated_in_reports(tmp_path):
    (tmp_path / "pyproject.toml").write_text("", "utf-8")  # the project: judges/ at its root
    (tmp_path / "judges").mkdir()
    for path in (BUNDLED, cassette_of(BUNDLED)):
        shutil.copy(path, tmp_path / "judges" / path.name)
    forms = _report_forms(tmp_path, load_labels(BUNDLED).rubric)

    assert "calibrates keyword-judge, but script judged" in forms["report.md"]
    assert "calibrates keyword-judge, but script judged" in forms["console"]


def test_a_labels_file_that_does_not_load_is_named_in_the_report(tmp_path):
    (tmp_path / "pyproject.toml").write_text("", "utf-8")
    (tmp_path / "judges").mkdir()
    broken = BUNDLED.read_text("utf-8").replace("    verdict: pass\n", "    verdict: pas\n", 1)
    (tmp_path / "judges" / BUNDLED.name).write_text(broken, "utf-8")
    forms = _report_forms(tmp_path, "names Paris as the capital of France")

    assert "labels.yaml does not load: " in forms["report.md"]
    why = json.loads(forms["report.json"])["rows"][0]["judged"][0]["calibration"]["why"]
    assert "refund_amount.labels.yaml does not load: " in why
    assert "items.0.verdict: Input should be 'pass' or 'fail', got 'pas'" in forms["console"]
