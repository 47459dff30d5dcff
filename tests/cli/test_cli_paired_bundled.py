"""The paired comparisons recorded against the local model (docs/evaluation.md, issue 35):
two agent types, and one agent type at two temperatures, each an ``--until-decided`` run
bundled in scenarios/live/cassettes/paired/ -- replayed offline here to the same verdicts,
asking nothing (tests/live/test_paired_live.py records them again)."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from cli_helpers import Outcome

ROOT = Path(__file__).resolve().parents[2]
SCENARIO = ROOT / "scenarios" / "live" / "live_compare.yaml"
PAIRED = ROOT / "scenarios" / "live" / "cassettes" / "paired"
MODEL = "smollm2-135m-instruct"
COLD, HOT = f"{MODEL}@temperature=0", f"{MODEL}@temperature=2"


def types_command(out: Path) -> list[str | Path]:
    return ["eval", SCENARIO, "--agents", "react,function_calling", "--models", MODEL,
            "--samples", "4", "--compare", "react", "function_calling", "--until-decided",
            "--max-samples", "24", "--cassettes", PAIRED, "--out", out]


def temperatures_command(out: Path) -> list[str | Path]:
    return ["eval", SCENARIO, "--agents", "function_calling", "--models", f"{COLD},{HOT}",
            "--samples", "4", "--compare", COLD, HOT, "--until-decided", "--max-samples", "16",
            "--cassettes", PAIRED, "--out", out]


def test_two_agent_types_replay_to_their_verdict_decided_before_the_cap(
        cli: Callable[..., Outcome], tmp_path: Path) -> None:
    result = cli(*types_command(tmp_path / "report"))

    assert result.code == 0, result.out + result.err
    assert "0 to record" in result.out
    assert ("  live_compare[smollm2-135m-instruct]          8     0      0      8       0     "
            "0.008   0.008    28.44  differs (function_calling passes more)") in result.out
    assert ("  flips by scenario (A pass -> B fail / A fail -> B pass): live_compare 0/8"
            in result.out)
    assert ("verdict: function_calling is better than react: B - A = +100 points (95% interval "
            "+100 to +100, paired bootstrap over 1 scenario, 8 pairs)") in result.out.splitlines()


def test_one_type_at_two_temperatures_replays_to_its_cap_undecided(
        cli: Callable[..., Outcome], tmp_path: Path) -> None:
    result = cli(*temperatures_command(tmp_path / "report"))

    assert result.code == 0, result.out + result.err
    assert "0 to record" in result.out
    assert f"paired comparison by model: A = {COLD}, B = {HOT}" in result.out
    row = next(line for line in result.out.splitlines()
               if line.startswith("  live_compare[function_calling]"))
    assert row.split()[1:6] == ["16", "14", "2", "0", "0"]  # at the cap, undecided
    assert "  flips by scenario (A pass -> B fail / A fail -> B pass): live_compare 2/0" \
        in result.out
    assert row.split()[-3:] == ["no", "difference", "shown"]  # McNemar p 0.5, e-value 1.33
    # one scenario: the bootstrap interval (one cluster) describes it; its test decides
    assert (f"verdict: no difference shown between {COLD} and {HOT}: B - A = -12 points (95% "
            "interval -12 to -12, paired bootstrap over 1 scenario, 16 pairs)"
            in result.out.splitlines()), result.out
