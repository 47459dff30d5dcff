"""The command line's parser: one function per command adds its subparser; the options
several commands share and the argument types apart."""

from __future__ import annotations

import argparse
import os
from collections.abc import Sequence
from pathlib import Path
from typing import Any, TypeAlias

from agentkit import __version__
from agentkit.cli._otel import otel_options
from agentkit.llms.base import DEFAULT_MODEL

__all__ = ["build_parser"]

# what add_subparsers returns
_Commands: TypeAlias = "argparse._SubParsersAction[argparse.ArgumentParser]"

_PATHS_HELP = ("scenario files or folders (default: the project's, `scenarios` under "
               "[tool.agentkit] in pyproject.toml, else scenarios/)")
_AGENTS_HELP = "only these agent types, comma-separated (default: all a scenario declares)"


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="agentkit",
        description="Deterministic, offline tests for LLM agents: run scenario files, record "
                    "them against a live model, replay recordings, diff traces and compare "
                    "agent types.",
        epilog="Exit codes: 0 ok, 1 failure/difference/regression, 2 bad usage or input, 3 an "
               "evaluation is incomplete.")
    parser.add_argument("--version", action="version", version=f"agentkit {__version__}")
    commands = parser.add_subparsers(dest="command", metavar="COMMAND", required=True)
    _list_command(commands)
    _run_command(commands)
    _record_command(commands)
    _replay_command(commands)
    _diff_command(commands)
    _report_command(commands)
    _eval_command(commands)
    _coverage_command(commands)
    _mutate_command(commands)
    _judge_command(commands)
    _faults_command(commands)
    _import_trace_command(commands)
    _serve_command(commands)
    _mcp_proxy_command(commands)
    _suite_command(commands)
    return parser


def _list_command(commands: _Commands) -> None:
    sub = commands.add_parser("list", help="list scenarios and their agent types",
                              description="List scenario files with their agent types.")
    sub.add_argument("paths", nargs="*", help=_PATHS_HELP)


def _run_command(commands: _Commands) -> None:
    sub = commands.add_parser("run", help="run scenarios offline and check expectations",
                              description="Run each scenario under each agent type (scripts "
                                          "and recordings, no network) and check expectations.")
    sub.add_argument("paths", nargs="*", help=_PATHS_HELP)
    sub.add_argument("--agents", type=_agent_list, help=_AGENTS_HELP)
    sub.add_argument("--trace-dir", type=Path,
                     help="also write each run's trace as <dir>/<scenario>.<agent>.json")
    sub.add_argument("-v", "--verbose", action="store_true",
                     help="print every trace, and the whole traceback of user code that raised "
                          "(a factory, a tool)")
    _snapshot_options(sub, "run")
    sub.add_argument("--snapshot-update", action="store_true",
                     help="write the snapshot of each run that differs from it or has none "
                          "(never of a run that stopped on an error), as pytest "
                          "--snapshot-update does")
    _ci_options(sub)
    otel_options(sub)


def _record_command(commands: _Commands) -> None:
    sub = commands.add_parser(
        "record", help="record a scenario against a live model (OpenAI or compatible)",
        description="Run a scenario's turns against a live model, one progress line per LLM "
                    "and tool call, and write the agent type's cassette and its snapshot, "
                    "__snapshots__/<scenario>/<agent type>.json beside the scenario (the "
                    "recorded trace: what `replay` and every run compare against) -- together, "
                    "only if the run met its expectations and the fresh cassette replays to "
                    "the same trace; otherwise nothing is written. The API key comes from "
                    "$OPENAI_API_KEY and is never written to either; a local "
                    "OpenAI-compatible server needs none.")
    sub.add_argument("scenario", type=Path, help="the scenario file")
    sub.add_argument("--agent", required=True, help="the agent type to record (a team: each "
                     "of its agents with a `recording:`)")
    sub.add_argument("--mode", default="once",
                     choices=["once", "new_episodes", "all", "rewrite"],
                     help="record mode: " + _RECORD_MODES_HELP)
    _live_model_options(sub, "; with --samples, sample i uses seed + i (default seed 0)")
    sub.add_argument("--samples", type=_positive, default=None, metavar="N",
                     help="record N independent runs into the one cassette and "
                          "their N traces into the snapshot; every replay then judges all N "
                          "(pass rate, interval, min_pass_rate). Use --temperature > 0 so "
                          "they differ. 1 is a plain recording")
    sub.add_argument("--judge-model", default=None,
                     help="model the scenario's LLM judges record with when their `judge:` "
                          "names none (default: --model); one it names must be the same")
    sub.add_argument("--judge-base-url", default=None,
                     help="OpenAI-compatible server of the judge model (default: --base-url)")


_RECORD_MODES_HELP = ("once (default: record if there is no cassette yet), new_episodes "
                     "(record requests the cassette lacks), all (re-record every request), "
                     "rewrite (start an empty cassette)")


def _live_model_options(sub: argparse.ArgumentParser, seed_more: str = "") -> None:
    """The live model to record through: ``--model``, ``--base-url``, ``--timeout``,
    ``--temperature``, ``--seed`` (``record`` and ``serve --mode``)."""
    sub.add_argument("--model", default=os.environ.get("AGENTKIT_MODEL", DEFAULT_MODEL),
                     help="model name (default: $AGENTKIT_MODEL or gpt-4o-mini)")
    sub.add_argument("--base-url", default=os.environ.get("OPENAI_BASE_URL"),
                     help="OpenAI-compatible server, e.g. http://127.0.0.1:8080/v1 "
                          "(default: $OPENAI_BASE_URL or OpenAI)")
    sub.add_argument("--timeout", type=float, default=120.0,
                     help="seconds the server may take to connect and for each read of an "
                          "answer (default 120)")
    sub.add_argument("--temperature", type=_temperature, default=None,
                     help="sampling temperature, 0-2 (default: the backend's, 0.1); 0 with "
                          "--seed makes a local model record the same conversation every time")
    sub.add_argument("--seed", type=int, default=None,
                     help="sampling seed sent with every request (servers that honour it, "
                          f"llama.cpp and OpenAI among them, then sample reproducibly){seed_more}")


def _replay_command(commands: _Commands) -> None:
    sub = commands.add_parser(
        "replay", help="replay recordings offline and compare with the recorded traces",
        description="Replay each recorded agent type of a scenario from its cassette "
                    "(offline) and check that the trace equals the one `record` saved beside "
                    "it. Exit 1 if it differs or if a request is not on the cassette (a "
                    "cassette miss: the nearest recorded request is shown).")
    sub.add_argument("scenario", type=Path, help="the scenario file")
    sub.add_argument("--agent", help="only this agent type")


def _diff_command(commands: _Commands) -> None:
    sub = commands.add_parser(
        "diff", help="step-aligned diff of two trace files",
        description="Show how trace NEW differs from trace OLD (inserted/dropped/changed "
                    "steps, then details; a change is shown once, where it began, with where "
                    "else it shows). Changed words are marked [-old-]{+new+}, or coloured on "
                    "a terminal.")
    sub.add_argument("old", type=Path, help="trace JSON (a snapshot or --trace-dir output)")
    sub.add_argument("new", type=Path, help="trace JSON")
    sub.add_argument("--color", choices=("auto", "always", "never"), default="auto",
                     help="colour the changes: auto (default: when the output is a terminal "
                          "and NO_COLOR is not set), always, never (plain [-old-]{+new+} "
                          "markers)")


def _report_command(commands: _Commands) -> None:
    sub = commands.add_parser(
        "report", help="compare agent types on scenarios (Markdown, JSON, HTML)",
        description="Run every scenario under the chosen agent types and write report.md, "
                    "report.json, a self-contained report.html (a section per run: its "
                    "timeline on simulated time, steps, and trace diffs against its snapshot "
                    "and the baseline) and traces/ (each run's trace).")
    sub.add_argument("paths", nargs="*", help=_PATHS_HELP)
    sub.add_argument("--agents", type=_agent_list, help=_AGENTS_HELP)
    sub.add_argument("--out", type=Path, default=Path("reports/latest"),
                     help="output folder (default: reports/latest)")
    sub.add_argument("--baseline", type=Path,
                     help="an earlier report.json (its traces/ beside it) to diff against; a run "
                          "that fails where it passed, or costs more than its thresholds allow "
                          "(steps, LLM calls, tokens, wall time: +10%% by default, per scenario "
                          "in `thresholds:`), is a regression (exit 1)")
    _snapshot_options(sub, "report")
    _ci_options(sub)
    sub.add_argument("--merge", type=Path, nargs="+", metavar="DIR",
                     help="join the report folders of a run's shards (each written with "
                          "--shard i/n) into the report of the whole run, as it would have been "
                          "unsplit (no scenario runs)")
    otel_options(sub)


def _coverage_command(commands: _Commands) -> None:
    sub = commands.add_parser(
        "coverage", help="what the suite's runs exercise: each tool, hand-off, judge and rule",
        description="Run every scenario offline (scripts and recordings, as `run` does) and "
                    "list, per tool -- the scenario's, the agent's own, every tool an MCP "
                    "server lists -- and per agent type: calls, argument shapes, failures, "
                    "time-outs, calls after a failure and outputs used in an answer; then the "
                    "hand-offs taken and the judges and rules exercised. What no scenario "
                    "touches comes first.")
    sub.add_argument("paths", nargs="*", help=_PATHS_HELP)
    sub.add_argument("--agents", type=_agent_list, help=_AGENTS_HELP)
    sub.add_argument("--by-agent-type", action="store_true",
                     help="a row per tool and agent type that called it, instead of per tool")
    sub.add_argument("--fail-under", type=_percent, metavar="PCT",
                     help="exit 1 when the behaviour coverage (each tool's four behaviours, "
                          "each hand-off, judge and rule) is under PCT percent")
    sub.add_argument("--json", type=Path, metavar="FILE",
                     help="also write the coverage as JSON to FILE")


def _mutate_command(commands: _Commands) -> None:
    sub = commands.add_parser(
        "mutate", help="mutants of the agent's tools run against the suite: what survives",
        description="Run every scenario offline, then each mutant of its tool world -- a tool "
                    "dropped, two outputs swapped, one output corrupted, a description "
                    "changed, a tool that fails, parallel calls reordered -- against every "
                    "case it changes, judged as `run` judges (snapshots aside). A mutant no "
                    "case fails survives: the survivors come first, then what killed each of "
                    "the others, then the mutation score per scenario and agent type. Cases "
                    "that replay a recording are left out, and prompt mutants are not made: "
                    "judging either needs a live re-recording.")
    sub.add_argument("paths", nargs="*", help=_PATHS_HELP)
    sub.add_argument("--agents", type=_agent_list, help=_AGENTS_HELP)
    sub.add_argument("--operators", type=_operators, default=list(_OPERATORS),
                     metavar="OPS", help="only these kinds of mutant, comma-separated (default: "
                                         f"all: {','.join(_OPERATORS)})")
    sub.add_argument("--judges", action="store_true",
                     help="also give each judged expectation known-bad transcripts made from "
                          "its good run (numbers wrong, a refusal, no answer, an invented "
                          "promise, an answer off the subject), which its judge must fail; a "
                          "judge that passes one is reported")
    sub.add_argument("--fail-under", type=_percent, metavar="PCT",
                     help="exit 1 when the mutation score (mutants killed, of those run) is "
                          "under PCT percent")
    sub.add_argument("--json", type=Path, metavar="FILE",
                     help="also write every mutant and its fate as JSON to FILE")


_OPERATORS = ("drop", "swap", "corrupt", "describe", "error", "reorder")


def _judge_command(commands: _Commands) -> None:
    sub = commands.add_parser(
        "judge", help="LLM judges: calibrate one against people's labels",
        description="What concerns the LLM judges of a suite's judged expectations.")
    judge = sub.add_subparsers(dest="judge_command", metavar="SUBCOMMAND", required=True)
    calibrate = judge.add_parser(
        "calibrate", help="how far a judge agrees with people's verdicts",
        description="Ask the judge of each labels file (judges/<rubric>.labels.yaml: "
                    "transcripts with people's verdicts) about every transcript, as a judged "
                    "expectation asks it, and compare: Cohen's kappa with its bootstrap "
                    "interval, the base rates, the confusion per criterion and the judge's "
                    "self-consistency over its samples, stamped with the judge's model and the "
                    "rubric's hash. Offline, from the recording beside each file "
                    "(<rubric>.cassette.yaml); --base-url records it through a live model. "
                    "Exit 1 when kappa is under the floor.")
    calibrate.add_argument("labels", nargs="*", help="labels files (default: every "
                                                     "judges/*.labels.yaml of the project)")
    calibrate.add_argument("--min-kappa", type=_kappa, metavar="K",
                           help="the floor (default: the file's min_kappa, else 0.6)")
    calibrate.add_argument("--json", type=Path, metavar="FILE",
                           help="also write the calibration as JSON to FILE")
    calibrate.add_argument("--base-url", default=None,
                           help="record the judge's verdicts through the OpenAI-compatible "
                                "server at this URL (default: replay the recording, offline)")
    calibrate.add_argument("--model", default=None,
                           help="the judge's model to record with (default: the file's "
                                f"model, else {DEFAULT_MODEL})")
    calibrate.add_argument("--mode", choices=["once", "new_episodes", "all", "rewrite"],
                           default="new_episodes",
                           help="record mode with --base-url (default: new_episodes, ask "
                                "only what the recording lacks)")
    calibrate.add_argument("--timeout", type=float, default=60.0,
                           help="seconds per request to the live model (default 60)")


def _kappa(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        value = float("nan")
    if not -1 <= value <= 1:
        raise argparse.ArgumentTypeError(f"{text!r}: kappa is a number from -1 to 1, e.g. 0.6")
    return value


def _operators(text: str) -> list[str]:
    names = [name.strip() for name in text.split(",") if name.strip()]
    unknown = [name for name in names if name not in _OPERATORS]
    if unknown or not names:
        raise argparse.ArgumentTypeError(f"{', '.join(unknown) or text!r}: not a kind of mutant "
                                         f"(kinds: {', '.join(_OPERATORS)})")
    return names


def _eval_command(commands: _Commands) -> None:
    sub = commands.add_parser(
        "eval", help="evaluate agent types × models on N live samples each",
        description="Run every scenario under every agent type (--agents) with every model "
                    "(--models), N samples each (--samples), recording what is missing against "
                    "a live model (--base-url), then judge each case on all its samples "
                    "offline: pass rate with its interval, pass@k, pass^k, class (stable_pass, "
                    "flaky, stable_fail, infra_error), and a report saying which is best. The "
                    "samples are kept in cassettes (cassettes/eval/ beside each scenario), "
                    "saved after every call: an interrupted run resumes without repeating a "
                    "call; with everything recorded it runs offline.",
        epilog="Exit codes: 0 every case met its min_pass_rate; 1 a case failed, or a pass-rate "
               "regression against --baseline; 2 bad usage or input (also: a cassette of "
               "another model or sample count, an unknown model, a budget below one run); 3 "
               "incomplete: the budget ran out, the model could not be reached or a call timed "
               "out while served, or samples hit infrastructure errors (a partial report is "
               "written; run again to resume).")
    sub.add_argument("paths", nargs="*", help=_PATHS_HELP)
    sub.add_argument("--agents", type=_agent_list, required=True,
                     help="agent types to compare, comma-separated")
    sub.add_argument("--models", type=_name_list, required=True,
                     help="models to compare, comma-separated (as the server names them)")
    sub.add_argument("--samples", type=_positive, required=True, metavar="N",
                     help="independent runs per scenario × agent type × model")
    sub.add_argument("--base-url", default=os.environ.get("OPENAI_BASE_URL"),
                     help="OpenAI-compatible server to record missing samples from (default: "
                          "$OPENAI_BASE_URL; none: offline, every sample must be recorded)")
    sub.add_argument("--temperature", type=_temperature, default=0.8,
                     help="sampling temperature of new samples (default 0.8: samples differ)")
    sub.add_argument("--seed", type=int, default=0,
                     help="seed of sample 0; sample i uses seed + i (default 0), so a re-record "
                          "draws the same samples from a server that honours seeds")
    sub.add_argument("--timeout", type=float, default=120.0,
                     help="seconds a server may take to connect and per read (default 120)")
    sub.add_argument("--max-calls", type=_positive, help="live-call budget: stop cleanly "
                     "(keeping what was recorded) once this many calls were made")
    sub.add_argument("--max-tokens", type=_positive, help="token budget (prompt + completion "
                     "tokens of live calls), as --max-calls")
    sub.add_argument("--max-answer-tokens", type=_positive, metavar="N",
                     help="the longest answer of each live call of new samples, in tokens "
                          "(default: the server's; an agent type's max_tokens in the scenario "
                          "wins): a small model that rambles otherwise costs minutes a call")
    sub.add_argument("--concurrency", type=_positive, default=20, metavar="N",
                     help="requests in flight (default 20); fewer while the server answers "
                          "429 (×0.8 per rate-limit episode) or queues requests (answers "
                          "slower than 1.5× its fastest), growing back while calls succeed")
    sub.add_argument("--max-concurrency", type=_positive, metavar="N",
                     help="let the limit grow beyond --concurrency, up to N requests in flight, "
                          "while answers come as fast as with few in flight (default: "
                          "--concurrency, no growth); a shard's share of a rate limit shared "
                          "with other shards")
    sub.add_argument("--cooldown", type=float, default=15.0,
                     help="seconds after a rate-limit cut before the next cut or any growth "
                          "(default 15; longer when the server's Retry-After says so)")
    sub.add_argument("--cassettes", type=Path,
                     help="keep the samples in this folder (default: cassettes/eval/ beside "
                          "each scenario file)")
    sub.add_argument("--out", type=Path, default=Path("reports/eval"),
                     help="report folder (default: reports/eval)")
    sub.add_argument("--baseline", type=Path,
                     help="an earlier report.json: a pass-rate drop beyond noise is a "
                          "regression (exit 1)")
    sub.add_argument("--compare", nargs=2, metavar=("A", "B"),
                     help="a paired verdict of B against A: two agent types of --agents or two "
                          "models of --models, sample i of each case paired by its seed (exact "
                          "McNemar per case, Holm-adjusted; a paired bootstrap over scenarios "
                          "for the suite); written to paired.md in --out")
    sub.add_argument("--margin", type=_points, metavar="POINTS",
                     help="with --compare: also say whether B is no worse than A by more than "
                          "this many percentage points (non-inferiority, one-sided)")
    sub.add_argument("--until-decided", action="store_true",
                     help="with --compare: draw --samples more samples per round, only for the "
                          "cases whose sides are not decided yet (anytime-valid mixture "
                          "e-values), until each is decided, --max-samples is reached or the "
                          "budget (--max-calls/--max-tokens) runs out")
    sub.add_argument("--max-samples", type=_positive, metavar="N",
                     help="with --until-decided: the most samples per case (default: 10 × "
                          "--samples)")
    _ci_options(sub)
    otel_options(sub)


def _faults_command(commands: _Commands) -> None:
    from agentkit.scenario import FAULT_KINDS, MODEL_FAULT_KINDS

    sub = commands.add_parser(
        "faults", help="run scenarios under every fault of their tools, each run classified",
        description="Expand each scenario into one variant per tool (and the model), call and "
                    "fault kind, run "
                    "every variant under the scenario's agent types offline (one with a "
                    "recording replays it: the recorded run up to the fault, then the "
                    "variant's continuation, which --base-url records live), and classify "
                    "each run: recovered, failed_safely, fabricated, crashed or failed. Writes "
                    "faults.md (the matrix, totals per agent type) and traces/ (each run's "
                    "trace); exit 1 when a run ends in a class expect.on_fault does not allow.")
    sub.add_argument("scenarios", nargs="+", type=Path, metavar="SCENARIO",
                     help="scenario files")
    sub.add_argument("--kinds", type=_kind_list,
                     help=f"fault kinds, comma-separated (default: the scenario's `faults:`, "
                          f"else all: {', '.join(FAULT_KINDS)}; of the model: "
                          f"{', '.join(MODEL_FAULT_KINDS)})")
    sub.add_argument("--tools", type=_name_list,
                     help="only these tools, comma-separated, `model` for the agent's model "
                          "(default: every tool the run calls, and the model)")
    sub.add_argument("--max-variants", type=_positive, metavar="N",
                     help="at most N variants per scenario: a deterministic sample when there "
                          "are more")
    sub.add_argument("--agents", type=_agent_list, help=_AGENTS_HELP)
    sub.add_argument("--out", type=Path, default=Path("reports/faults"),
                     help="output folder (default: reports/faults)")
    sub.add_argument("--junit-xml", type=Path, metavar="PATH",
                     help="also write JUnit XML: a testcase per variant × agent type, its "
                          "class as the property fault_class")
    sub.add_argument("--base-url", help="record what the recordings lack against this "
                                        "OpenAI-compatible server first: each variant of an "
                                        "agent type with a `recording` goes on from the recorded "
                                        "run up to its fault, live after it")
    sub.add_argument("--model", default="gpt-4o-mini",
                     help="with --base-url: the model (default: gpt-4o-mini)")
    sub.add_argument("--temperature", type=_temperature, default=0.0,
                     help="with --base-url: sampling temperature (default: 0, greedy)")
    sub.add_argument("--seed", type=int, default=0, help="with --base-url: the seed sent with "
                                                         "every request (default: 0)")
    sub.add_argument("--timeout", type=float, default=120.0,
                     help="with --base-url: seconds to wait for each answer (default: 120)")


def _kind_list(text: str) -> list[str]:
    from agentkit.scenario import FAULT_KINDS, MODEL_FAULT_KINDS

    kinds = _name_list(text)
    unknown = [kind for kind in kinds if kind not in (*FAULT_KINDS, *MODEL_FAULT_KINDS)]
    if unknown:
        raise argparse.ArgumentTypeError(f"`{unknown[0]}` is not a fault kind (kinds: "
                                         f"{', '.join(FAULT_KINDS)}; of the model: "
                                         f"{', '.join(MODEL_FAULT_KINDS)})")
    return kinds


def _import_trace_command(commands: _Commands) -> None:
    sub = commands.add_parser(
        "import-trace", help="turn an OTLP-JSON trace export into a scenario that replays",
        description="Read one trace of an OTLP-JSON export (agentkit's --otel-out, Phoenix's "
                    "span export, a framework's OpenTelemetry instrumentation) and write a "
                    "scenario: its user turns, its tools as recorded outputs (NAME_tools.py "
                    "beside it), drafted expectations (the answer, the tool-call trajectory) "
                    "and a cassette of the model's answers -- kept only if the replay "
                    "reproduces the traced tool calls and answer. Needs message content in "
                    "the trace.")
    sub.add_argument("file", type=Path, help="the OTLP-JSON file")
    sub.add_argument("--out", type=Path, required=True,
                     help="the scenario file to write, e.g. scenarios/refund_case.yaml (its "
                          "name is the file's)")
    sub.add_argument("--agent", help="the agent type to replay with (default: the one that "
                                     "made the run, else function_calling when the model called "
                                     "tools, react when it wrote Action: lines)")
    sub.add_argument("--trace", metavar="ID", help="the trace to import when the file has "
                                                   "several (a prefix of its id is enough)")
    sub.add_argument("--force", action="store_true",
                     help="replace an existing scenario file (and its tools, cassette, snapshot)")


def _serve_command(commands: _Commands) -> None:
    sub = commands.add_parser(
        "serve", help="serve a scenario's model on a loopback URL for an agent in another "
                      "process, then judge the agent's run",
        description="Answer model calls (OpenAI's POST /v1/chat/completions and POST "
                    "/v1/responses, Anthropic's POST /v1/messages; GET /v1/models) on "
                    "127.0.0.1 with the scenario's model for the agent type (its script, "
                    "trajectory or recording), so an agent in another process or "
                    "language is tested by pointing it at the URL, printed as the first line. "
                    "Serves until stopped (Ctrl-C, SIGTERM), then writes the agent's trace, "
                    "built from its requests, and checks the scenario's expectations on it "
                    "(exit 1 when they fail). With --mode, the live model at --base-url "
                    "answers instead, whichever API the agent speaks (the bridge asks it over "
                    "chat completions), and each exchange is recorded into the agent type's "
                    "`recording:` cassette as it is made; serve without --mode then replays "
                    "it offline.")
    sub.add_argument("scenario", type=Path, help="the scenario file")
    sub.add_argument("--agent", required=True, help="the agent type whose model to serve")
    sub.add_argument("--mode", default="none",
                     choices=["none", "once", "new_episodes", "all", "rewrite"],
                     help="record mode: none (default: serve the script or replay the "
                          "recording, offline), or record through the live model: "
                          + _RECORD_MODES_HELP.replace("once (default: ", "once ("))
    _live_model_options(sub)
    sub.add_argument("--port", type=_port, default=0,
                     help="port on 127.0.0.1 (default 0: any free port; a port in use is an "
                          "error)")
    sub.add_argument("--trace-out", type=Path,
                     help="where to write the trace (default: <scenario>.<agent>.json in the "
                          "current folder)")


def _mcp_proxy_command(commands: _Commands) -> None:
    sub = commands.add_parser(
        "mcp-proxy", help="stand in for an MCP server started over stdio: record its tool "
                          "exchanges into a cassette, or answer them from it (also over "
                          "streamable HTTP: --http)",
        description="Started by an agent in the place of an MCP server's command (over "
                    "stdio), keep the server's tools/list and tools/call exchanges in the "
                    "cassette's mcp_exchanges, as scenarios do (docs/mcp.md). With --mode none "
                    "(the default) no server runs: the handshake and every tool request are "
                    "answered from the cassette, and a request it lacks is answered with an "
                    "error naming the nearest recorded one (exit 1 at the end). With another "
                    "mode the server after `--` is started and every line relayed; the "
                    "cassette is written when the agent closes the connection. With --http "
                    "PORT the cassette is served over streamable HTTP instead, replaying.")
    sub.add_argument("--cassette", type=Path, required=True, help="the cassette file")
    sub.add_argument("--name", required=True, help="the server's name in the cassette")
    sub.add_argument("--mode", choices=["none", "once", "new_episodes", "all", "rewrite"],
                     default="none", help="record mode (default none: replay only, no server)")
    sub.add_argument("--env", action="append", default=[], metavar="KEY=VALUE",
                     help="an environment variable of the server (never recorded)")
    sub.add_argument("--http", type=int, metavar="PORT",
                     help="serve the recording over streamable HTTP on "
                          "http://127.0.0.1:PORT/mcp (0: any free port; the URL is printed "
                          "first) instead of over stdio, until stopped (Ctrl-C, SIGTERM); "
                          "replays only (--mode none)")
    sub.add_argument("server", nargs=argparse.REMAINDER,
                     help="-- then the server's command and arguments (to record)")


def _ci_options(sub: argparse.ArgumentParser) -> None:
    sub.add_argument("--junit-xml", type=Path, metavar="PATH",
                     help="also write the results as JUnit XML (a testcase per scenario × agent "
                          "type, failures with their problems, a sampled case's statistics as "
                          "properties)")
    sub.add_argument("--shard", type=_shard, metavar="I/N",
                     help="run only shard I of N (each scenario × agent type lands in the same "
                          "shard whatever else changes; `agentkit report --merge` joins the "
                          "shards' report folders)")


def _snapshot_options(sub: argparse.ArgumentParser, command: str) -> None:
    sub.add_argument("--snapshots", choices=["check", "report", "off"], default="check",
                     help="compare each run's trace with its committed snapshot "
                          "(__snapshots__/<scenario file>/<agent type>.json, as pytest does): "
                          "check (default: a difference or a missing snapshot fails the run), "
                          "report (shown, not failing), off (not compared)")


def _agent_list(text: str) -> list[str]:
    names = [n.strip() for n in text.split(",") if n.strip()]
    if not names:
        raise argparse.ArgumentTypeError("give agent types as a comma-separated list, e.g. "
                                         "react,function_calling")
    return names


def _name_list(text: str) -> list[str]:
    names = [n.strip() for n in text.split(",") if n.strip()]
    if not names:
        raise argparse.ArgumentTypeError("give names as a comma-separated list")
    return names


def _positive(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a whole number") from None
    if value < 1:
        raise argparse.ArgumentTypeError(f"must be at least 1, got {value}")
    return value


def _percent(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text} is not a number") from None
    if not 0 <= value <= 100:
        raise argparse.ArgumentTypeError(f"{text} is not between 0 and 100")
    return value


def _temperature(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a number") from None
    if not 0 <= value <= 2:
        raise argparse.ArgumentTypeError(f"{text} is not between 0 and 2")
    return value


def _points(text: str) -> float:
    """A margin in percentage points (``5`` = five points), as a fraction."""
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a number") from None
    if not 0 < value < 100:
        raise argparse.ArgumentTypeError(f"{text} is not between 0 and 100 (points)")
    return value / 100


def _shard(text: str) -> tuple[int, int]:
    from agentkit.eval import parse_shard

    try:
        return parse_shard(text)
    except ValueError as exc:
        raise argparse.ArgumentTypeError(str(exc)) from None


def _port(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a port number") from None
    if not 0 <= value <= 65535:
        raise argparse.ArgumentTypeError(f"{text} is not between 0 and 65535")
    return value


class _SuiteParser(argparse.ArgumentParser):
    """A suite's subparser: its options come from the suite's adapter
    (:data:`agentkit.suites.SUITES`), imported only when that suite is parsed or its help
    shown."""

    suite: str | None = None
    """The suite whose adapter adds the options, until it has."""

    def _load(self) -> None:
        if self.suite is not None:
            from agentkit.suites import adapter

            name, self.suite = self.suite, None
            adapter(name).add_arguments(self)

    def parse_known_args(self, args: Sequence[str] | None = None,  # type: ignore[override]
                         namespace: Any = None) -> tuple[argparse.Namespace, list[str]]:
        self._load()
        return super().parse_known_args(args, namespace)

    def format_help(self) -> str:
        self._load()
        return super().format_help()


def _suite_command(commands: _Commands) -> None:
    from agentkit.suites import SUITES

    sub = commands.add_parser(
        "suite", help="write a public suite's cases as scenario files",
        description="Turn a public suite's cases into ordinary scenario files (tools, world, "
                    "expectations and a reference trajectory each), which every command and "
                    "agent type runs (docs/suites.md). The suite's own package must be "
                    "installed.")
    suites = sub.add_subparsers(dest="suite_name", metavar="SUITE", required=True,
                                parser_class=_SuiteParser)
    helps = {"agentdojo": "AgentDojo's user tasks (utility) and prompt injections (security)",
             "bfcl": "BFCL v4's single-turn function-calling cases (the Berkeley Function "
                     "Calling Leaderboard)"}
    for name in SUITES:
        parser = suites.add_parser(name, help=helps.get(name, name),
                                   description=helps.get(name, name) + ".")
        assert isinstance(parser, _SuiteParser)
        parser.suite = name
