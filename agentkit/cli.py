"""The ``agentkit`` command: list, run, record, replay, diff, report and eval scenarios,
serve one's model to an agent in another process, and import a trace as a scenario.

Exit codes: 0 success; 1 a scenario failed, a replay or diff differs, or a report has
failures/regressions (pass-rate regressions included); 2 bad usage or a malformed file (the
message says where); 3 an evaluation is incomplete (a spent budget, an unreachable model,
infrastructure errors: the partial report is written and the same command resumes).

* ``record`` (:func:`agentkit.scenario.record.record_scenario`, as the pytest plugin) writes
  the cassette and the agent type's snapshot (the live run's trace, secrets redacted: what
  every later offline run must reproduce; :mod:`agentkit.scenario.layout`) -- together, and
  only when the recording is good: the run met its expectations and the fresh cassette
  replays to the same trace. Otherwise it exits 1 and leaves both files as they were. The default mode is
  ``once`` (record what is missing); ``rewrite`` re-records from scratch. A team
  (``--agent agent_workflow``) records a cassette per team agent with a ``recording:``, all
  through ``--model``, and one trace for the team.
* ``replay`` exits 1 on a cassette miss (a request the recording does not have, e.g. after a
  user turn or a prompt changed): like a changed trace, it is a regression of the agent or
  scenario against its recording, not bad input. The miss is printed first, naming the nearest
  recorded request and where it differs; re-record if the change is intended.
* ``run --agents`` with an agent type that does not exist, or that no scenario declares, is a
  usage error (2): a typo must not pass as "nothing failed".
"""

from __future__ import annotations

import argparse
import contextlib
import os
import shutil
import signal
import sys
import tempfile
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from typing import Any, TextIO

from agentkit import __version__
from agentkit._console import EXIT_INTERRUPTED, Terminated, stopped
from agentkit.core import fmt

__all__ = ["main", "build_parser", "otel_options", "otel_export"]

EXIT_OK, EXIT_FAILED, EXIT_USAGE, EXIT_INCOMPLETE = 0, 1, 2, 3


class CLIError(Exception):
    """A usage or input problem: printed as ``agentkit: error: ...``, exit code 2."""


def _agent_list(text: str) -> list[str]:
    names = [n.strip() for n in text.split(",") if n.strip()]
    if not names:
        raise argparse.ArgumentTypeError("give agent types as a comma-separated list, e.g. "
                                         "react,function_calling")
    return names


def _positive(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a whole number") from None
    if value < 1:
        raise argparse.ArgumentTypeError(f"must be at least 1, got {value}")
    return value


def _temperature(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a number") from None
    if not 0 <= value <= 2:
        raise argparse.ArgumentTypeError(f"{text} is not between 0 and 2")
    return value


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

    paths_help = ("scenario files or folders (default: the project's, `scenarios` under "
                  "[tool.agentkit] in pyproject.toml, else scenarios/)")
    agents_help = "only these agent types, comma-separated (default: all a scenario declares)"

    sub = commands.add_parser("list", help="list scenarios and their agent types",
                              description="List scenario files with their agent types.")
    sub.add_argument("paths", nargs="*", help=paths_help)

    sub = commands.add_parser("run", help="run scenarios offline and check expectations",
                              description="Run each scenario under each agent type (scripts "
                                          "and recordings, no network) and check expectations.")
    sub.add_argument("paths", nargs="*", help=paths_help)
    sub.add_argument("--agents", type=_agent_list, help=agents_help)
    sub.add_argument("--trace-dir", type=Path,
                     help="also write each run's trace as <dir>/<scenario>.<agent>.json")
    sub.add_argument("-v", "--verbose", action="store_true", help="print every trace")
    _snapshot_options(sub, "run")
    sub.add_argument("--snapshot-update", action="store_true",
                     help="write the snapshot of each run that differs from it or has none "
                          "(never of a run that stopped on an error), as pytest "
                          "--snapshot-update does")
    _ci_options(sub)
    otel_options(sub)

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
    sub.add_argument("--model", default=os.environ.get("AGENTKIT_MODEL", "gpt-4o-mini"),
                     help="model name (default: $AGENTKIT_MODEL or gpt-4o-mini)")
    sub.add_argument("--base-url", default=os.environ.get("OPENAI_BASE_URL"),
                     help="OpenAI-compatible server, e.g. http://127.0.0.1:8080/v1 "
                          "(default: $OPENAI_BASE_URL or OpenAI)")
    sub.add_argument("--mode", default="once",
                     choices=["once", "new_episodes", "all", "rewrite"],
                     help="record mode: once (default: record if there is no cassette yet), "
                          "new_episodes (record requests the cassette lacks), all (re-record "
                          "every request), rewrite (start an empty cassette)")
    sub.add_argument("--timeout", type=float, default=120.0,
                     help="seconds the server may take to connect and for each read of an "
                          "answer (default 120)")
    sub.add_argument("--temperature", type=_temperature, default=None,
                     help="sampling temperature, 0-2 (default: the backend's, 0.1); 0 with "
                          "--seed makes a local model record the same conversation every time")
    sub.add_argument("--seed", type=int, default=None,
                     help="sampling seed sent with every request (servers that honour it, "
                          "llama.cpp and OpenAI among them, then sample reproducibly); with "
                          "--samples, sample i uses seed + i (default seed 0)")
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

    sub = commands.add_parser(
        "replay", help="replay recordings offline and compare with the recorded traces",
        description="Replay each recorded agent type of a scenario from its cassette "
                    "(offline) and check that the trace equals the one `record` saved beside "
                    "it. Exit 1 if it differs or if a request is not on the cassette (a "
                    "cassette miss: the nearest recorded request is shown).")
    sub.add_argument("scenario", type=Path, help="the scenario file")
    sub.add_argument("--agent", help="only this agent type")

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

    sub = commands.add_parser(
        "report", help="compare agent types on scenarios (Markdown, JSON, HTML)",
        description="Run every scenario under the chosen agent types and write report.md, "
                    "report.json, a self-contained report.html (a section per run: its "
                    "timeline on simulated time, steps, and trace diffs against its snapshot "
                    "and the baseline) and traces/ (each run's trace).")
    sub.add_argument("paths", nargs="*", help=paths_help)
    sub.add_argument("--agents", type=_agent_list, help=agents_help)
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
               "incomplete: the budget ran out, the model could not be reached, or samples hit "
               "infrastructure errors (a partial report is written; run again to resume).")
    sub.add_argument("paths", nargs="*", help=paths_help)
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
    sub.add_argument("--concurrency", type=_positive, default=20, metavar="N",
                     help="requests in flight to start with (default 20); it backs off ×0.8 "
                          "per rate-limit episode and grows back while calls succeed")
    sub.add_argument("--max-concurrency", type=_positive, default=100, metavar="N",
                     help="the most requests in flight ever (default 100): a shard's share of "
                          "a rate limit shared with other shards")
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
    _ci_options(sub)

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

    sub = commands.add_parser(
        "serve", help="serve a scenario's model on a loopback URL for an agent in another "
                      "process, then judge the agent's run",
        description="Answer OpenAI-compatible requests (POST /v1/chat/completions, GET "
                    "/v1/models) on 127.0.0.1 with the scenario's model for the agent type "
                    "(its script, trajectory or recording), so an agent in another process or "
                    "language is tested by pointing it at the URL, printed as the first line. "
                    "Serves until stopped (Ctrl-C, SIGTERM), then writes the agent's trace, "
                    "built from its requests, and checks the scenario's expectations on it "
                    "(exit 1 when they fail).")
    sub.add_argument("scenario", type=Path, help="the scenario file")
    sub.add_argument("--agent", required=True, help="the agent type whose model to serve")
    sub.add_argument("--port", type=_port, default=0,
                     help="port on 127.0.0.1 (default 0: any free port; a port in use is an "
                          "error)")
    sub.add_argument("--trace-out", type=Path,
                     help="where to write the trace (default: <scenario>.<agent>.json in the "
                          "current folder)")

    sub = commands.add_parser(
        "mcp-proxy", help="stand in for an MCP server started over stdio: record its tool "
                          "exchanges into a cassette, or answer them from it",
        description="Started by an agent in the place of an MCP server's command (over "
                    "stdio), keep the server's tools/list and tools/call exchanges in the "
                    "cassette's mcp_exchanges, as scenarios do (docs/mcp.md). With --mode none "
                    "(the default) no server runs: the handshake and every tool request are "
                    "answered from the cassette, and a request it lacks is answered with an "
                    "error naming the nearest recorded one (exit 1 at the end). With another "
                    "mode the server after `--` is started and every line relayed; the "
                    "cassette is written when the agent closes the connection.")
    sub.add_argument("--cassette", type=Path, required=True, help="the cassette file")
    sub.add_argument("--name", required=True, help="the server's name in the cassette")
    sub.add_argument("--mode", choices=["none", "once", "new_episodes", "all", "rewrite"],
                     default="none", help="record mode (default none: replay only, no server)")
    sub.add_argument("--env", action="append", default=[], metavar="KEY=VALUE",
                     help="an environment variable of the server (never recorded)")
    sub.add_argument("server", nargs=argparse.REMAINDER,
                     help="-- then the server's command and arguments (to record)")
    return parser


def _ci_options(sub: argparse.ArgumentParser) -> None:
    sub.add_argument("--junit-xml", type=Path, metavar="PATH",
                     help="also write the results as JUnit XML (a testcase per scenario × agent "
                          "type, failures with their problems, a sampled case's statistics as "
                          "properties)")
    sub.add_argument("--shard", type=_shard, metavar="I/N",
                     help="run only shard I of N (each scenario × agent type lands in the same "
                          "shard whatever else changes; `agentkit report --merge` joins the "
                          "shards' report folders)")


def _name_list(text: str) -> list[str]:
    names = [n.strip() for n in text.split(",") if n.strip()]
    if not names:
        raise argparse.ArgumentTypeError("give names as a comma-separated list")
    return names


def _shard(text: str) -> tuple[int, int]:
    from agentkit.eval.matrix import parse_shard

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


def _snapshot_options(sub: argparse.ArgumentParser, command: str) -> None:
    sub.add_argument("--snapshots", choices=["check", "report", "off"], default="check",
                     help="compare each run's trace with its committed snapshot "
                          "(__snapshots__/<scenario file>/<agent type>.json, as pytest does): "
                          "check (default: a difference or a missing snapshot fails the run), "
                          "report (shown, not failing), off (not compared)")


def otel_options(sub: argparse.ArgumentParser) -> None:
    """Add ``--otel-out``, ``--otlp-endpoint`` and ``--otel-content`` to a command that judges
    runs (through :func:`agentkit.harness.run_case`); its body then runs inside
    ``with otel_export(args, out):``, which exports every run judged there."""
    group = sub.add_argument_group(
        "OpenTelemetry", "export each run as spans following the GenAI semantic conventions "
                         "(needs the extra: pip install 'agentkit[otel]')")
    group.add_argument("--otel-out", type=Path, metavar="PATH",
                       help="write the runs' spans to PATH as OTLP-JSON (deterministic: "
                            "virtual time from a fixed epoch)")
    group.add_argument("--otlp-endpoint", metavar="URL",
                       help="send the runs' spans to this OTLP/HTTP traces endpoint, e.g. "
                            "http://127.0.0.1:6006/v1/traces (default: "
                            "$OTEL_EXPORTER_OTLP_TRACES_ENDPOINT, or "
                            "$OTEL_EXPORTER_OTLP_ENDPOINT plus /v1/traces; headers from "
                            "$OTEL_EXPORTER_OTLP_HEADERS). One warning if it cannot be reached; "
                            "the exit code does not change")
    group.add_argument("--otel-content", action="store_true",
                       help="also export message content (prompts, replies, the user's turns), "
                            "secrets redacted (default: "
                            "$OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT, else off)")


@contextlib.contextmanager
def otel_export(args: argparse.Namespace, out: TextIO) -> Iterator[None]:
    """Export the runs judged in the block as :func:`otel_options` asked (nothing when no
    target is set); after it, one line per target on ``out``, a warning on stderr if the
    endpoint could not take them. A bad ``--otel-out`` is a :class:`CLIError` before
    anything runs."""
    from agentkit.otel.settings import content_from_env, resolve_endpoint

    endpoint = resolve_endpoint(args.otlp_endpoint)
    if args.otel_out is None and endpoint is None:
        yield
        return
    from agentkit.otel import OtelMissingError, require_sdk

    try:
        require_sdk("--otel-out" if args.otel_out is not None else "--otlp-endpoint")
    except OtelMissingError as exc:
        raise CLIError(str(exc)) from None
    if args.otel_out is not None:
        if args.otel_out.is_dir():
            raise CLIError(f"--otel-out {args.otel_out}: is a folder; give a file name, e.g. "
                           f"{args.otel_out / 'spans.json'}")
        _writable_folder(args.otel_out.parent, "--otel-out")
    from agentkit.otel.export import OtelExport

    def warn(message: str) -> None:
        print(f"agentkit: warning: {message}", file=sys.stderr)

    export = OtelExport(out=args.otel_out, endpoint=endpoint,
                        content=args.otel_content or content_from_env(), warn=warn)
    with export.observing():
        yield
    for line in export.close().lines:
        print(line, file=out)


def _shown(path: Path) -> Path:
    """``path`` relative to the current directory when it is below it (as a user types it)."""
    cwd = Path.cwd()
    return path.relative_to(cwd) if path.is_relative_to(cwd) else path


def _paths(args: argparse.Namespace) -> list[Path]:
    """The scenario files of the command's PATHS, else of the project's scenario folders."""
    from agentkit.scenario.loader import ScenarioError, discover_scenarios

    project = args.project
    given = [Path(p) for p in args.paths] or [_shown(f) for f in project.scenarios]
    paths: list[Path] = []
    for item in given:
        if not args.paths and not item.exists():
            where = (f"`scenarios` under [tool.agentkit] in {project.pyproject}"
                     if project.configured else "the default")
            raise CLIError(f"{item}: no such scenario folder ({where}); give scenario files or "
                           "folders, or set `scenarios` under [tool.agentkit] in pyproject.toml")
        try:
            paths.extend(discover_scenarios(item))
        except ScenarioError as exc:
            raise CLIError(str(exc)) from None
    if not paths:
        raise CLIError(f"no scenario files under {', '.join(map(str, given))}")
    return paths


def _load(path: Path) -> Any:
    from agentkit.scenario.loader import ScenarioError
    from agentkit.scenario.runner import load

    try:
        return load(path)
    except ScenarioError as exc:
        raise CLIError(str(exc)) from None


def _cmd_list(args: argparse.Namespace, out: TextIO) -> int:
    for path in _paths(args):
        scenario = _load(path)
        tags = f"  [{', '.join(scenario.tags)}]" if scenario.tags else ""
        print(f"{scenario.name}  ({path}){tags}", file=out)
        for name, spec in scenario.agents.items():
            source = (_source(spec) if spec.team is None else "team: " + ", ".join(
                f"{agent.name} ({_source(agent)})" for agent in spec.team))
            print(f"  - {name}: {source}", file=out)
        if scenario.description:
            print(f"    {scenario.description}", file=out)
    return EXIT_OK


def _source(spec: Any) -> str:
    """Where an agent's model answers come from (an agent type's or a team agent's)."""
    source = (f"recording {spec.recording}" if spec.recording else
              "script rendered from the trajectory" if spec.script is None
              else f"script, {len(spec.script)} replies")
    return source + (f", backend {spec.backend}" if spec.backend != "scripted" else "")


def _result_line(name: str, result: Any, verdict: Any) -> str:
    """``PASS  scenario[agent]  steps=...`` (``FAIL``/``ERROR``; no numbers without a trace),
    with the calls and tokens of the harness's own roles (judges, a simulated user) apart,
    then one line per judged expectation: its verdict and the judge's reason."""
    status = {"pass": "PASS", "fail": "FAIL", "error": "ERROR"}[verdict.outcome]
    if result is None:
        return f"{status}  {name}"
    totals = result.trace.totals()
    roles = "".join(f" {role}={sums['llm_calls']}:{sums['prompt_tokens']}+"
                    f"{sums['completion_tokens']}" for role, sums in totals.roles.items())
    judged = "".join(f"\n      judged {j.at}: {j.verdict}"
                     f"{f' ({j.tally()})' if j.tally() else ''} -- {j.reason}"
                     for j in result.judgements)
    return (f"{status}  {name:<45} steps={totals.steps} llm={totals.llm_calls} "
            f"tools={totals.tool_calls} tokens={totals.prompt_tokens}+{totals.completion_tokens} "
            f"wall={fmt.seconds(totals.wall_time)} serial={fmt.seconds(totals.serial_time)}"
            f"{roles}{judged}")


def _print_verdict(verdict: Any, out: TextIO, hint: str | None = None) -> None:
    for line in verdict.lines():
        print("      " + line.replace("\n", "\n      "), file=out)
    if hint is not None:
        print(f"      {hint}", file=out)


def _check_agent_types(names: list[str] | None) -> None:
    from agentkit.scenario.agent_types import UnknownAgentTypeError, check_agent_type

    for name in names or []:
        try:
            check_agent_type(name)
        except UnknownAgentTypeError as exc:
            raise CLIError(f"--agents: {exc}") from None


def _record_hint(scenario: Any, agent_type: str, verdict: Any) -> str | None:
    """How to record a missing cassette, for a run that could not start without one."""
    from agentkit.scenario.layout import recording_files, records

    if (verdict.outcome == "error" and records(scenario, agent_type)
            and not all(p.exists() for p in recording_files(scenario, agent_type)[1:])):
        return f"fix: record it with `agentkit record {scenario.path} --agent {agent_type}`"
    return None


def _writable_folder(path: Path, option: str) -> None:
    """Fail before any work if ``path`` cannot be the output folder it is meant to be."""
    try:
        if path.exists() and not path.is_dir():
            raise CLIError(f"{option} {path}: is a file, not a folder; give a folder (it is "
                           "created if missing)")
        chain = (path, *path.parents)
        existing = next((p for p in chain if p.exists()), Path("."))
        longest = (os.pathconf(existing, "PC_NAME_MAX")
                   if existing.is_dir() and hasattr(os, "pathconf") else None)
    except OSError as exc:  # e.g. a name longer than the file system allows
        raise CLIError(f"{option} {path}: cannot be a folder: {exc.strerror or exc}") from None
    if not existing.is_dir():
        raise CLIError(f"{option} {path}: cannot write there ({existing} is not a writable "
                       "folder)")
    # Try rather than ask: access() says yes to root everywhere, also where the file system
    # then refuses (/proc, a read-only mount), and the run would crash only at its end.
    try:
        os.rmdir(tempfile.mkdtemp(prefix=".agentkit-check-", dir=existing))
    except OSError as exc:
        raise CLIError(f"{option} {path}: cannot write there ({existing} refuses new folders: "
                       f"{exc.strerror or exc})") from None
    missing = chain[:chain.index(existing)] if existing in chain else chain
    if longest is not None and any(len(os.fsencode(p.name)) > longest for p in missing):
        raise CLIError(f"{option} {path}: cannot be a folder: File name too long (at most "
                       f"{longest} bytes per name)")


def _junit_case(case: Any) -> Any:
    """A JUnit test case for one ``run`` case (a sampled case's with its statistics as
    properties, as ``report`` writes them)."""
    from agentkit.report.junit import JUnitCase, sample_properties

    verdict, result = case.verdict, case.result
    lines = verdict.lines()
    outcome = {"pass": "pass", "fail": "fail", "error": "error"}[verdict.outcome]
    properties = {}
    if case.sampled:
        from agentkit.report.compare import row_from_samples

        properties = sample_properties(row_from_samples(case))
    return JUnitCase(case.scenario.name, case.agent_type, outcome,
                     lines[0].removeprefix("- ") if lines else "", "\n".join(lines),
                     result.trace.totals().wall_time if result is not None else 0.0, properties)


def _print_case(case: Any, out: TextIO) -> None:
    """What ``run`` prints of a case: its line (a sampled case's statistics), what its verdict
    says (bad input on stderr, as such), and the snapshot file judging it wrote."""
    verdict, result = case.verdict, case.result
    if case.sampled:
        _print_sampled(case.case.name, case, out)
    else:
        print(_result_line(case.case.name, result, verdict), file=out)
        hint = _record_hint(case.scenario, case.agent_type, verdict)
        if verdict.kind == "input" and result is None:
            print(f"agentkit: error: {verdict.stopped_by}" + (f"\n  {hint}" if hint else ""),
                  file=sys.stderr)
        else:
            _print_verdict(verdict, out, hint)
    if case.snapshot_written is not None:
        print(f"      wrote {_shown(case.snapshot_written)}", file=out)


def _cmd_run(args: argparse.Namespace, out: TextIO) -> int:
    with otel_export(args, out):
        return _run_scenarios(args, out)


def _run_scenarios(args: argparse.Namespace, out: TextIO) -> int:
    from agentkit.core.files import atomic_write_text
    from agentkit.eval.matrix import shard_of
    from agentkit.harness import Case, run_case
    from agentkit.scenario.layout import trace_file
    from agentkit.verdict import SnapshotFiles

    _check_agent_types(args.agents)
    if args.trace_dir:
        _writable_folder(args.trace_dir, "--trace-dir")
    snapshots = SnapshotFiles(args.snapshots, update=args.snapshot_update)
    counts = dict.fromkeys(("pass", "fail", "error", "input", "snapshot"), 0)
    total = 0
    junit: list[Any] = []
    for path in _paths(args):
        scenario = _load_or_report(path, counts)
        if scenario is None:
            continue
        names = [n for n in (args.agents or scenario.agents) if n in scenario.agents]
        if args.shard is not None:
            names = [n for n in names
                     if shard_of(f"{scenario.name}[{n}]", args.shard[1]) == args.shard[0]]
        for name in names:
            case = run_case(Case(scenario, name), snapshots)
            total += 1
            verdict = case.verdict
            _print_case(case, out)
            if args.junit_xml:
                junit.append(_junit_case(case))
            counts[verdict.outcome] += 1
            counts["input"] += verdict.kind == "input"
            counts["snapshot"] += verdict.snapshot_differs
            trace = case.trace
            if trace is None:
                continue
            if args.trace_dir:
                atomic_write_text(trace_file(args.trace_dir, scenario, name), trace.to_json())
            if args.verbose and not case.sampled:
                print(trace.to_json(), file=out)
    if not total and not counts["input"] and args.shard is None:
        raise CLIError(f"no scenario declares the agent type(s) {', '.join(args.agents or [])}")
    if args.junit_xml:
        from agentkit.report.junit import write_junit

        print(f"wrote {write_junit(args.junit_xml, junit)}", file=out)
    summary = f"{counts['pass']} passed, {counts['fail']} failed"
    if counts["error"]:
        summary += f", {counts['error']} could not run"
    if counts["snapshot"] and args.snapshots != "off":
        summary += f", {counts['snapshot']} differ from their snapshots"
    if snapshots.written:
        summary += (f", {len(snapshots.written)} snapshot"
                    f"{'s' if len(snapshots.written) != 1 else ''} written")
    print(summary, file=out)
    if counts["input"]:
        return EXIT_USAGE
    return EXIT_FAILED if counts["fail"] or counts["error"] else EXIT_OK


def _load_or_report(path: Path, counts: dict[str, int]) -> Any:
    """The scenario at ``path``, or None after printing why it cannot be loaded (bad input:
    the command goes on with the other files and exits 2)."""
    try:
        return _load(path)
    except CLIError as exc:
        print(f"agentkit: error: {exc}", file=sys.stderr)
        counts["input"] += 1
        return None


class _Progress:
    """Prints one line per LLM/tool call while recording (the record progress display)."""

    def __init__(self, out: TextIO) -> None:
        self.out = out
        self.llm_calls = 0
        self.tool_calls = 0
        self.turn = ""

    def __call__(self, event: Any) -> None:
        from agentkit.core.events import AgentChatStartEvent, LLMCallEndEvent, ToolCallEndEvent
        from agentkit.core.secrets import Redactor
        from agentkit.scenario.llm_judge import JudgeVerdictEvent
        from agentkit.scenario.simulated_user import ConversationEndEvent, SimulatedTurnEvent

        if isinstance(event, JudgeVerdictEvent):
            judged = event.judgement
            print(f"  judge {judged.at}: {judged.verdict} -- "
                  f"{Redactor().text(judged.reason or judged.error or '')[:120]}",
                  file=self.out, flush=True)
        elif isinstance(event, SimulatedTurnEvent):
            print(f"  simulated user ({event.by}) writes turn {event.turn}", file=self.out,
                  flush=True)
        elif isinstance(event, ConversationEndEvent):
            how = "goal reached" if event.reached else "goal not reached"
            print(f"  {how} after {event.turns} turn{'s' if event.turns != 1 else ''} "
                  f"({event.check})", file=self.out, flush=True)
        elif isinstance(event, AgentChatStartEvent):
            self.turn = event.user_msg
            shown = Redactor().text(self.turn)  # a secret typed into a turn stays out of logs
            print(f"  turn: {shown[:70]!r}", file=self.out, flush=True)
        elif isinstance(event, LLMCallEndEvent):
            self.llm_calls += 1
            usage = event.usage
            tokens = f", {usage.completion_tokens} tokens out" if usage else ""
            status = (f"error: {event.error}" if event.error
                      else f"{fmt.seconds(event.latency)}{tokens}")
            print(f"    [{self.llm_calls:>3}] LLM call  {status}", file=self.out, flush=True)
        elif isinstance(event, ToolCallEndEvent):
            self.tool_calls += 1
            flag = " (error)" if event.is_error else ""
            print(f"          tool {event.tool_name}{flag}", file=self.out, flush=True)


def _cmd_record(args: argparse.Namespace, out: TextIO) -> int:
    from agentkit.core.errors import BadInputError, HarnessError
    from agentkit.llms.errors import LLMError
    from agentkit.llms.openai import OpenAI
    from agentkit.scenario.layout import recording_files, records
    from agentkit.scenario.record import Recording, record_scenario, rerecord_command
    from agentkit.scenario.roles import RoleModels
    from agentkit.verdict import judge_error

    scenario = _load(args.scenario)
    if args.agent not in scenario.agents:
        raise CLIError(f"{args.scenario}: no agent type `{args.agent}` (it has "
                       f"{', '.join(scenario.agents)})")
    spec = scenario.agents[args.agent]
    mcp_only = not spec.recorded() and records(scenario, args.agent)
    if spec.team is not None and not spec.recorded() and not mcp_only:
        raise CLIError(f"{args.scenario}: agents.{args.agent}: every team agent has a `script`; "
                       f"set `recording: cassettes/{scenario.name}.{args.agent}.<agent>.yaml` "
                       "(instead of `script`) on each team agent to record")
    if not spec.recorded() and not mcp_only:
        raise CLIError(f"{args.scenario}: agents.{args.agent} has a `script`, not a "
                       f"`recording`; set `recording: cassettes/{scenario.name}.{args.agent}"
                       ".yaml` (instead of `script`) to record it")
    _check_judge_model(scenario, args.agent, args.judge_model)
    sampling: dict[str, Any] = ({"temperature": args.temperature}
                                if args.temperature is not None else {})

    def model(name: str, base_url: str | None, seed: int | None = args.seed) -> OpenAI:
        try:
            return OpenAI(model=name, base_url=base_url, timeout=args.timeout,
                          additional_kwargs={"seed": seed} if seed is not None else None,
                          **sampling)
        except (LLMError, ValueError) as exc:
            raise CLIError(str(exc)) from None

    def cast(agent_model: OpenAI, seed: int | None) -> RoleModels:
        """The roles' live models of a run (a sample's: with its seed): by default the
        agent's model plays them."""
        def judge(named: str | None) -> OpenAI:
            name = named or args.judge_model
            if name is None and args.judge_base_url is None:
                return agent_model
            return model(name or args.model, args.judge_base_url or args.base_url, seed)

        def user(named: str | None) -> OpenAI:
            return (agent_model if named is None or named == args.model
                    else model(named, args.base_url, seed))

        return RoleModels(judge=judge, user=user)

    live: Any = {}  # a scripted model with MCP tools: only the MCP servers are recorded
    roles: RoleModels | None = None
    if not mcp_only:
        live = model(args.model, args.base_url)
        roles = cast(live, args.seed)
    if args.samples is not None and args.samples > 1:
        if mcp_only:
            raise CLIError(f"{args.scenario}: agents.{args.agent} has a scripted model: "
                           "--samples draws several runs from a live model; record it once")
        return _record_samples(args, scenario, live, out, cast)
    where = "its MCP servers (the model is scripted)" if mcp_only else (
        f"{args.model} at {args.base_url or 'OpenAI'}")
    name = f"{scenario.name}[{args.agent}]"
    files = recording_files(scenario, args.agent)
    cassettes = ", ".join(map(str, files[1:] if scenario.path else files))
    if args.mode != "once" or not all(p.exists() for p in files[1 if scenario.path else 0:]):
        print(f"recording {scenario.name} [{args.agent}] with {where} (mode {args.mode}) -> "
              f"{cassettes}", file=out, flush=True)
    try:
        recording = record_scenario(scenario, args.agent, live, args.mode,
                                    listener=_Progress(out), roles=roles)
    except BadInputError as exc:
        raise CLIError(str(exc)) from None
    except HarnessError as exc:  # it could not start (an MCP server that did not come up)
        verdict = judge_error(exc)
        print(_result_line(name, None, verdict), file=out)
        written = Recording(cassettes=files[1:] if scenario.path else files,
                            snapshot=files[0] if scenario.path else None)
        _print_verdict(verdict, out, f"nothing written: {written.files} are as they were")
        return EXIT_FAILED
    if recording.existing:
        replay = recording.replay
        assert replay is not None
        print(f"{cassettes}: cassette exists, nothing recorded (mode once records only what is "
              "missing); use --mode rewrite to record it again, or --mode new_episodes to add "
              "requests it lacks", file=out)
        if recording.written:
            print(f"wrote the missing snapshot {recording.snapshot}", file=out)
        if not replay.passed:
            print(_result_line(name, replay, replay.verdict), file=out)
            _print_verdict(replay.verdict, out,
                           f"to re-record: {rerecord_command(scenario, args.agent)}")
            return EXIT_FAILED
        return EXIT_OK
    if recording.live is not None:
        print(_result_line(name, recording.live, recording.live.verdict), file=out)
    if not recording.ok:
        for problem in recording.problems:
            print(f"FAIL  {problem}", file=out)
        print(f"      nothing written: {recording.files} are as they were", file=out)
        return EXIT_FAILED
    print(f"wrote {recording.files}", file=out)
    print("      the offline replay reproduces the recorded trace", file=out)
    return EXIT_OK


def _record_samples(args: argparse.Namespace, scenario: Any, live: Any, out: TextIO,
                    cast: Callable[[Any, int], Any]) -> int:
    """``record --samples N``: N runs, sample i with seed ``--seed`` + i (its judges and
    simulated user too, through ``cast(sample's model, seed)``), written together with the
    snapshot of their traces when every one replays to its live run."""
    from agentkit.core.errors import BadInputError
    from agentkit.eval.samples import record_samples
    from agentkit.llms.openai import OpenAI
    from agentkit.scenario.layout import cassette_path

    base = args.seed if args.seed is not None else 0
    records = args.mode != "once" or not cassette_path(scenario, args.agent).exists()
    models: dict[int, Any] = {}

    def model(index: int) -> Any:
        if records:
            print(f"  sample {index} (seed {base + index})", file=out, flush=True)
        models[index] = OpenAI(model=args.model, base_url=args.base_url, timeout=args.timeout,
                               temperature=live.temperature,
                               additional_kwargs={"seed": base + index})
        return models[index]

    name = f"{scenario.name}[{args.agent}]"
    where = args.base_url or "OpenAI"
    if records:
        print(f"recording {args.samples} samples of {name} with {args.model} at {where} "
              f"(temperature {live.temperature:g}, seeds {base}-{base + args.samples - 1}, "
              f"mode {args.mode})", file=out, flush=True)
    progress = _Progress(out)
    try:
        recording = record_samples(scenario, args.agent, model, args.samples, args.mode,
                                   sampling={"temperature": live.temperature, "seed": base},
                                   listener=progress,
                                   roles=lambda index: cast(models[index], base + index))
    except BadInputError as exc:
        raise CLIError(str(exc)) from None
    replay = recording.replay
    if recording.existing:
        print(f"{recording.cassette}: {args.samples} samples of {args.model} are recorded "
              "already, nothing recorded (mode once records only what is missing); use --mode "
              "rewrite to record them again", file=out)
    if not recording.ok:
        for problem in recording.problems:
            print(f"FAIL  {problem}", file=out)
        print(f"      nothing written: {recording.files} are as they were", file=out)
        return EXIT_FAILED
    assert replay is not None
    _print_sampled(name, replay, out)
    if recording.written:
        print(f"wrote {recording.files}", file=out)
        print(f"      the offline replay reproduces the recorded trace of all {args.samples} "
              "samples", file=out)
    return EXIT_OK if replay.passed else EXIT_FAILED


def _sampled_line(name: str, sampled: Any) -> str:
    """``PASS  scenario[agent]  5 samples: pass rate 80% (4/5, ...) · flaky`` (and a warning
    line when its ``min_pass_rate`` cannot fail at that many samples)."""
    from agentkit.eval.cases import gate_warning

    status = {"pass": "PASS", "fail": "FAIL", "error": "ERROR"}[sampled.verdict.outcome]
    stats = sampled.stats
    counts = f"{stats.samples} samples"
    if stats.infra_errors:
        counts += f" ({stats.infra_errors} infrastructure errors, not counted)"
    missing = f", {len(sampled.missing)} not recorded" if sampled.missing else ""
    if not stats.samples and sampled.runs:
        return (f"{status}  {name:<45} {len(sampled.runs)} samples recorded{missing}: none "
                "replays to its end, so no pass rate")
    warning = gate_warning(sampled.scenario.min_pass_rate, stats.judged, stats.confidence)
    return (f"{status}  {name:<45} {counts}{missing}: pass rate {stats.describe()} · "
            f"{stats.case_class}" + (f"\n      warning: {warning}" if warning else ""))


def _print_sampled(name: str, sampled: Any, out: TextIO) -> None:
    print(_sampled_line(name, sampled), file=out)
    if not sampled.passed:
        _print_verdict(sampled.verdict, out)
    _print_disagreements(_disagreements_of(sampled), out)


def _disagreements_of(sampled: Any) -> list[Any]:
    """The judged expectations whose verdict differs between the samples of a case."""
    from agentkit.report.compare import sampled_verdicts

    return sampled_verdicts(sampled)[1]


def _print_disagreements(found: Sequence[Any], out: TextIO) -> None:
    """Each judged expectation whose verdict differs between the samples of a case, with
    every sample's verdict and reason."""
    from agentkit.core.secrets import Redactor

    for disagreement in found:
        for line in disagreement.lines(Redactor().text):
            print(f"      {line}", file=out)


def _check_judge_model(scenario: Any, agent_type: str, judge_model: str | None) -> None:
    """``--judge-model`` records judges that name no model; one that names another model is
    a usage error (its verdicts are keyed by the model it names)."""
    from agentkit.scenario.model import judge_panel

    if judge_model is None:
        return
    own = scenario.agents[agent_type].judge
    field = f"agents.{agent_type}.judge" if own is not None else "judge"
    for spec in judge_panel(own if own is not None else scenario.judge):
        if spec.script is None and spec.model is not None and spec.model != judge_model:
            where = scenario.where(*field.split("."))
            raise CLIError(f"{where}: {field}: the judge names model `{spec.model}`, and "
                           f"--judge-model says `{judge_model}`; drop --judge-model or change "
                           "the scenario (verdicts are keyed by the judge's model)")


def _read_trace(path: Path) -> dict[str, Any]:
    """A trace file, checked: every problem is a :class:`CLIError` with file, line and field."""
    from agentkit.core.textfiles import TextFileError, json_locations, parse_json, read_text
    from agentkit.scenario.diff import TraceError, check_trace

    try:
        text = read_text(path)
        data = parse_json(path, text)
        try:
            return check_trace(data, str(path))
        except TraceError:
            return check_trace(data, str(path), json_locations(text))  # again, with lines
    except OSError as exc:
        raise CLIError(f"{path}: cannot read trace: {exc.strerror or exc}") from None
    except (TextFileError, TraceError) as exc:
        raise CLIError(str(exc)) from None


def _cmd_replay(args: argparse.Namespace, out: TextIO) -> int:
    from agentkit.harness import Case, run_case
    from agentkit.scenario.layout import legacy_recorded_trace, records, snapshot_path
    from agentkit.scenario.record import rerecord_command
    from agentkit.verdict import SnapshotFiles, cassette_miss

    scenario = _load(args.scenario)
    names = ([args.agent] if args.agent
             else [n for n in scenario.agents if records(scenario, n)])
    if not names:
        raise CLIError(f"{args.scenario}: no agent type has a `recording` to replay")
    status = EXIT_OK
    for name in names:
        if name not in scenario.agents or not records(scenario, name):
            raise CLIError(f"{args.scenario}: agent type `{name}` has no recording")
        again = f"to re-record: {rerecord_command(scenario, name)}"
        recorded = snapshot_path(scenario, name)
        case = run_case(Case(scenario, name), SnapshotFiles("report", hint=again))
        if case.sampled:
            status = max(status, _replay_sampled(scenario, name, case, again, out))
            continue
        result, verdict = case.result, case.verdict
        print(_result_line(f"{scenario.name}[{name}]", result, verdict), file=out)
        if result is None:
            if verdict.kind == "input":
                raise CLIError(f"{verdict.stopped_by}" + (
                    f"\n  {hint}" if (hint := _record_hint(scenario, name, verdict)) else ""))
            _print_verdict(verdict, out)
            status = EXIT_FAILED
            continue
        miss = cassette_miss(result)
        if miss is not None:
            status = EXIT_FAILED
            print("      cassette miss: " + miss.replace("\n", "\n        "), file=out)
            print(f"      {again}", file=out)
            continue
        if verdict.snapshot == "missing":
            legacy = legacy_recorded_trace(scenario, name)
            print(f"      (no recorded trace at {recorded}; nothing to compare)", file=out)
            if legacy is not None:
                print(f"      {legacy} is where agentkit < 0.2 kept it: move it to {recorded}",
                      file=out)
        elif verdict.snapshot == "changed":
            status = EXIT_FAILED
            print(f"      replay differs from the recorded trace {recorded}:", file=out)
            for line in verdict.snapshot_diff:
                print(f"      {line}", file=out)
            print(f"      {again}", file=out)
        elif verdict.snapshot == "not_checked":
            print(f"      not compared with the recorded trace {recorded}: the replay stopped "
                  "on an error", file=out)
        else:
            print(f"      replay reproduces the recorded trace ({recorded})", file=out)
        for line in (verdict.lines() if verdict.stopped_by else
                     [f"- {problem}" for problem in verdict.problems]):
            print(f"      {line}", file=out)
        if verdict.outcome != "pass":
            status = EXIT_FAILED
    return status


def _replay_sampled(scenario: Any, name: str, sampled: Any, again: str, out: TextIO) -> int:
    """``replay`` of a sampled recording: every sample against its recorded trace."""
    verdict = sampled.verdict
    print(_sampled_line(f"{scenario.name}[{name}]", sampled), file=out)
    if verdict.outcome == "error" and verdict.kind == "input":
        raise CLIError(str(verdict.stopped_by))
    _print_disagreements(_disagreements_of(sampled), out)
    count = len(sampled.runs)
    misses = verdict.has("recording_mismatch")
    if verdict.snapshot == "same" and not misses:
        print(f"      replay reproduces the recorded traces of all {count} samples "
              f"({verdict.snapshot_at})", file=out)
    elif verdict.snapshot == "changed":
        print(f"      replay differs from the recorded traces {verdict.snapshot_at}:", file=out)
        for line in verdict.snapshot_diff:
            print(f"      {line}", file=out)
    for line in verdict.lines() if verdict.stopped_by else [f"- {p}" for p in verdict.problems]:
        print("      " + line.replace("\n", "\n      "), file=out)
    if misses or verdict.snapshot == "changed":
        print(f"      {again}", file=out)
    return EXIT_OK if verdict.passed and verdict.snapshot != "changed" else EXIT_FAILED


def _cmd_diff(args: argparse.Namespace, out: TextIO) -> int:
    from agentkit.core.textdiff import ANSI, PLAIN
    from agentkit.scenario.diff import diff_traces

    coloured = args.color == "always" or (args.color == "auto" and out.isatty()
                                          and not os.environ.get("NO_COLOR"))
    lines = diff_traces(_read_trace(args.old), _read_trace(args.new),
                        ANSI if coloured else PLAIN)
    if not lines:
        print("traces are identical", file=out)
        return EXIT_OK
    for line in lines:
        print(line, file=out)
    return EXIT_FAILED


class _Counter:
    """``agentkit report``'s progress on a terminal: one line on stderr, rewritten after each
    run (``[ 3/12] slow_tools[react] pass``) and cleared at the end. Off when stderr is not
    a terminal (CI logs, pipes): nothing is written there."""

    def __init__(self, stream: TextIO) -> None:
        self.stream = stream
        self.on = stream.isatty()
        self.shown = False

    def __call__(self, done: int, total: int, row: Any) -> None:
        width = len(str(total))
        line = f"[{done:>{width}}/{total}] {row.scenario}[{row.agent_type}] {row.status}"
        columns = shutil.get_terminal_size().columns - 1
        self.stream.write(f"\r\x1b[K{line[:columns]}")
        self.stream.flush()
        self.shown = True

    def close(self) -> None:
        if self.shown:
            self.stream.write("\r\x1b[K")
            self.stream.flush()


def _report_json(folder: Path) -> Path:
    """The report.json of a report folder given to ``--merge`` (or the file itself)."""
    path = folder / "report.json" if folder.is_dir() else folder
    if not path.is_file():
        raise CLIError(f"--merge {folder}: no report.json there (give the --out folder of "
                       "each shard)")
    return path


def _print_summaries(comparison: Any, out: TextIO) -> None:
    """One line per compared agent type (× model): passed runs over the shared scenarios."""
    from agentkit.report.model import contender_label

    compared = comparison.compared()
    for summary in comparison.summaries():
        rate = (f", pass rate {summary.passes}/{summary.judged}" if summary.judged
                and summary.judged != summary.runs else "")
        print(f"{contender_label(summary.contender):<20} {summary.passed}/{summary.runs} passed"
              f"{rate}", file=out)
    if compared.scenarios and len(compared.scenarios) < len(comparison.scenarios):
        print(f"(those totals are over the {len(compared.scenarios)} scenarios every compared "
              "agent type ran)", file=out)
    for (agent_type, model), reason in compared.left_out:
        name = agent_type if model is None else f"{agent_type} @ {model}"
        print(f"{name} is left out of the comparison: it {reason}", file=out)


def _junit_report(args: argparse.Namespace, comparison: Any, regressions: list[Any],
                  out: TextIO) -> None:
    if not args.junit_xml:
        return
    from agentkit.report.junit import junit_cases, write_junit

    reasons = {delta.key: delta.reasons for delta in regressions}
    print(f"wrote {write_junit(args.junit_xml, junit_cases(comparison, reasons))}", file=out)


def _cmd_report(args: argparse.Namespace, out: TextIO) -> int:
    from agentkit.core.files import FolderRefused, replaceable_folder
    from agentkit.report import (
        ReportError,
        compare_to_baseline,
        load_comparison,
        merge_shards,
        run_comparison,
        write_report,
    )
    from agentkit.report.render import REPORT_MARKER
    from agentkit.scenario.loader import ScenarioError
    from agentkit.verdict import SnapshotFiles

    _writable_folder(args.out, "--out")
    try:  # a folder that is not a report, or holds the current one, is refused before running
        replaceable_folder(args.out, REPORT_MARKER)
    except FolderRefused as exc:
        raise CLIError(f"--out {args.out}: {exc}") from None
    if args.merge and (args.paths or args.agents or args.shard):
        raise CLIError("--merge joins report folders: give no scenario paths, --agents or "
                       "--shard with it")
    counter = _Counter(sys.stderr)
    try:
        with otel_export(args, out):
            baseline = load_comparison(args.baseline) if args.baseline else None
            if args.merge:
                comparison = merge_shards(
                    [load_comparison(_report_json(d)) for d in args.merge],
                    [str(d) for d in args.merge])
            else:
                comparison = run_comparison(_paths(args), args.agents,
                                            progress=counter if counter.on else None,
                                            snapshots=SnapshotFiles(args.snapshots),
                                            shard=args.shard)
            written = write_report(comparison, args.out, baseline=baseline)
    except (ReportError, ScenarioError) as exc:
        raise CLIError(str(exc)) from None
    finally:
        counter.close()
    _print_summaries(comparison, out)
    for row in comparison.failures:
        print(f"{row.status.upper()}  {row.key}", file=out)
        for problem in row.problems:
            print("      - " + problem.replace("\n", "\n        "), file=out)
    for row in comparison.rows:
        if row.disagreements:
            print(f"DISAGREE  {row.key}", file=out)
            _print_disagreements(row.disagreements, out)
        if row.gate_warning is not None:
            print(f"WARNING  {row.key}: {row.gate_warning}", file=out)
    regressions = compare_to_baseline(comparison, baseline).regressions if baseline else []
    _junit_report(args, comparison, regressions, out)
    for delta in regressions:
        for reason in delta.reasons:
            print(f"REGRESSION  {delta.key}: {reason}", file=out)
    rows = comparison.rows
    failed = sum(row.status == "fail" for row in rows)
    errors = sum(row.status == "error" for row in rows)
    differ = sum(row.snapshot in ("changed", "missing") for row in rows)
    totals = (f"{len(rows)} runs: {len(rows) - failed - errors} passed, {failed} failed, "
              f"{errors} could not run, {len(regressions)} regressed")
    if args.snapshots != "off":
        totals += f", {differ} differ from their snapshots"
        if differ and args.snapshots == "report":
            totals += " (--snapshots report: not failing)"
    print(totals, file=out)
    for path in written.values():
        print(f"wrote {path}", file=out)
    return EXIT_FAILED if (not comparison.passed or regressions) else EXIT_OK


def _tell(line: str) -> None:
    """``line`` on stderr, if anything still reads it (Ctrl-C also ends a ``| tee``)."""
    with contextlib.suppress(OSError, ValueError):
        print(line, file=sys.stderr, flush=True)


def _served_models(base_url: str, timeout: float) -> list[str] | None:
    """The models an OpenAI-compatible server lists at ``/models`` (None: it lists none)."""
    import httpx

    try:
        answer = httpx.get(base_url.rstrip("/") + "/models", timeout=min(timeout, 30.0))
        data = answer.json() if answer.status_code == 200 else None
    except Exception:  # noqa: BLE001 (a probe: a server that cannot list its models is not checked)
        return None
    if not isinstance(data, dict) or not isinstance(data.get("data"), list):
        return None
    return [str(m.get("id")) for m in data["data"] if isinstance(m, dict) and m.get("id")]


def _cmd_eval(args: argparse.Namespace, out: TextIO) -> int:
    from agentkit.core.errors import BadInputError
    from agentkit.core.files import FolderRefused, replaceable_folder
    from agentkit.eval.live import AdaptiveConcurrency, Budget
    from agentkit.eval.matrix import Evaluation, plan, shard_of
    from agentkit.eval.progress import EvalProgress
    from agentkit.llms.openai import OpenAI
    from agentkit.report import (
        ReportError,
        compare_to_baseline,
        eval_comparison,
        load_comparison,
        write_report,
    )
    from agentkit.report.render import REPORT_MARKER

    _writable_folder(args.out, "--out")
    try:
        replaceable_folder(args.out, REPORT_MARKER)
    except FolderRefused as exc:
        raise CLIError(f"--out {args.out}: {exc}") from None
    if args.concurrency > args.max_concurrency:
        raise CLIError(f"--concurrency {args.concurrency} is above --max-concurrency "
                       f"{args.max_concurrency}")
    try:
        baseline = load_comparison(args.baseline) if args.baseline else None
        cases = plan(_paths(args), args.agents, args.models, cassettes=args.cassettes)
    except BadInputError as exc:
        raise CLIError(str(exc)) from None
    keys = [case.key for case in cases]
    cassettes = {case.key: case.cassette for case in cases}
    if args.shard is not None:
        cases = [c for c in cases if shard_of(c.key, args.shard[1]) == args.shard[0]]

    def live(model: str, seed: int) -> Any:
        return OpenAI(model=model, base_url=args.base_url, timeout=args.timeout,
                      temperature=args.temperature, max_retries=0,
                      additional_kwargs={"seed": seed})

    progress = EvalProgress(sys.stderr)
    evaluation = Evaluation(
        cases, args.samples, live if args.base_url else None,
        sampling={"temperature": args.temperature, "seed": args.seed},
        limiter=AdaptiveConcurrency(args.concurrency, maximum=args.max_concurrency,
                                    cooldown=args.cooldown),
        budget=Budget(args.max_calls, args.max_tokens), workers=args.max_concurrency,
        progress=progress)
    try:
        evaluation.open()
    except BadInputError as exc:
        raise CLIError(str(exc)) from None
    todo = evaluation.todo
    shard = f" (shard {args.shard[0]}/{args.shard[1]})" if args.shard else ""
    print(f"evaluating {len(cases)} cases{shard} × {args.samples} samples: "
          f"{evaluation.recorded} recorded, {len(todo)} to record", file=out, flush=True)
    if todo and args.base_url:
        served = _served_models(args.base_url, args.timeout)
        unknown = [m for m in args.models if served is not None and m not in served
                   and any(case.model == m for case, _ in todo)]
        if unknown:
            raise CLIError(f"--models: unknown model {unknown[0]!r}: the server at "
                           f"{args.base_url} serves {', '.join(served or []) or 'none'}")
        print(f"recording with {args.base_url} (temperature {args.temperature:g}, sample i "
              f"with seed {args.seed} + i, {args.concurrency} requests in flight to start)",
              file=out, flush=True)
    def interrupted(evaluation: Evaluation) -> None:
        progress.close()
        _tell(f"agentkit: interrupted: waiting for the {evaluation.in_flight()} requests in "
              "flight to be saved (Ctrl-C again to quit now; the cassettes are whole either "
              "way)")

    evaluation.on_interrupt = interrupted
    try:
        evaluation.record()
    except BadInputError as exc:
        raise CLIError(str(exc)) from None
    except KeyboardInterrupt:
        # the pipe a `| tee` read may be gone (Ctrl-C ended it too): the lines are best effort
        _tell(f"agentkit: interrupted: {evaluation.recorded} of {evaluation.total} samples "
              f"recorded and kept ({evaluation.calls_kept} calls in the cassettes); run the "
              "same command again to record the rest (no recorded call is asked again)")
        return EXIT_INTERRUPTED
    finally:
        progress.close()
    spent = evaluation.budget
    if todo:
        limiter = evaluation.limiter
        retried = f" ({spent.retried} of them retries)" if spent.retried else ""
        print(f"live: {spent.calls:,} calls{retried}, {spent.tokens:,} tokens, "
              f"{limiter.rate_limits} "
              f"rate limits in {limiter.episodes} episodes (requests in flight: "
              f"{limiter.limit} at the end)", file=out)
    left = evaluation.missing()
    if spent.exhausted and left and evaluation.done == 0 and evaluation.recorded == 0:
        raise CLIError(f"the budget ({spent.describe()}) ran out before one run of a sample "
                       "finished: it is below what one run takes; give a larger --max-calls / "
                       "--max-tokens")
    try:
        results = evaluation.results()
        comparison = eval_comparison(results, args.agents, args.models,
                                     shard=args.shard, plan=keys)
        written = write_report(comparison, args.out, baseline=baseline)
    except ReportError as exc:
        raise CLIError(str(exc)) from None
    mismatched = {result.case.key for result in results
                  if result.sampled.verdict.has("recording_mismatch")}
    for row in comparison.rows:
        status = {"pass": "PASS", "fail": "FAIL", "error": "ERROR"}[row.status]
        rate = (f"pass rate {row.pass_rate:.0%} ({row.passes}/{row.judged_runs}, "
                f"{(row.confidence or 0.95):.0%} interval {row.interval[0]:.0%}-"
                f"{row.interval[1]:.0%})" if row.pass_rate is not None and row.interval
                else "no sample replays to its end, so no pass rate" if row.status == "fail"
                else "no pass rate")
        extra = "".join([f", {row.infra_errors} infrastructure errors" if row.infra_errors
                         else "", f", {row.not_recorded} not recorded" if row.not_recorded
                         else ""])
        shown = f" · {row.class_}" if row.class_ else ""
        counted = f"{row.samples} samples{extra}: " if row.samples or extra else ""
        print(f"{status}  {row.key:<45} {counted}{rate}{shown}", file=out)
        if row.gate_warning is not None:
            print(f"      warning: {row.gate_warning}", file=out)
        if row.status != "pass":
            for problem in row.problems[:3]:
                print("      - " + problem.replace("\n", "\n        "), file=out)
        _print_disagreements(row.disagreements, out)
        if row.key in mismatched:
            print(f"      the agent's requests changed since its samples were recorded; if "
                  f"that is intended, record them anew: remove {cassettes[row.key]} and run "
                  "this command again with --base-url", file=out)
    _print_summaries(comparison, out)
    regressions = compare_to_baseline(comparison, baseline).regressions if baseline else []
    for delta in regressions:
        for reason in delta.reasons:
            print(f"REGRESSION  {delta.key}: {reason}", file=out)
    _junit_report(args, comparison, regressions, out)
    for path in written.values():
        print(f"wrote {path}", file=out)
    incomplete = bool(left) or evaluation.unreachable is not None
    if evaluation.unreachable is not None:
        print(f"INCOMPLETE  the model could not be reached: {evaluation.unreachable}", file=out)
    if left:
        missing = sum(left.values())
        why = ("the budget ran out (" + spent.describe() + ")" if spent.exhausted
               else "samples hit infrastructure errors" if evaluation.infra else "stopped")
        detail = ", ".join(f"{key}: {count}" for key, count in list(left.items())[:5])
        print(f"INCOMPLETE  {why}: {missing} of {evaluation.total} samples not recorded "
              f"({detail}{', ...' if len(left) > 5 else ''}); the report is partial. Run the "
              "same command again to record them (nothing recorded is asked again).", file=out)
    # infrastructure errors and samples not recorded yet make the run incomplete, never a
    # failure of the agent
    failed = [row for row in comparison.rows if row.status == "fail"
              or (row.status == "error" and row.samples and row.class_ != "infra_error")]
    if failed or regressions:
        return EXIT_FAILED
    incomplete = incomplete or any(row.status == "error" for row in comparison.rows)
    return EXIT_INCOMPLETE if incomplete else EXIT_OK


def _cmd_import_trace(args: argparse.Namespace, out: TextIO) -> int:
    from agentkit.core.errors import BadInputError
    from agentkit.otel.importer import import_trace

    _check_agent_types([args.agent] if args.agent else None)
    _writable_folder(args.out.parent, "--out")
    try:
        result = import_trace(args.file, args.out, agent_type=args.agent, trace_id=args.trace,
                              force=args.force)
    except BadInputError as exc:
        raise CLIError(str(exc)) from None
    run = result.run
    llm_calls = sum(len(t.exchanges) for t in run.turns)
    tool_calls = sum(len(t.tools) for t in run.turns)
    print(f"imported {args.file} (trace {run.trace_id}: {run.name}; {len(run.turns)} "
          f"turn{'s' if len(run.turns) != 1 else ''}, {llm_calls} LLM calls, {tool_calls} tool "
          f"calls) under agent type {result.agent_type}", file=out)
    shown = [str(_shown(path.absolute())) for path in result.written]
    print(f"wrote {', '.join(shown)}", file=out)
    if not result.ok:
        print(f"FAIL  the run does not replay under agent type {result.agent_type}, so no "
              "cassette was written:", file=out)
        for problem in result.problems:
            print("      - " + problem.replace("\n", "\n        "), file=out)
        print("      the trace's agent may speak another format: try --agent react or "
              "--agent function_calling (--force to replace the files), or edit the scenario "
              "and its tools module", file=out)
        return EXIT_FAILED
    print(f"the replay reproduces the traced tool calls and answer: agentkit run {shown[0]}",
          file=out)
    return EXIT_OK


def _cmd_serve(args: argparse.Namespace, out: TextIO) -> int:
    import threading

    from agentkit.bridge.serve import ServeSession
    from agentkit.core.errors import BadInputError
    from agentkit.core.files import atomic_write_text
    from agentkit.scenario.layout import trace_file

    scenario = _load(args.scenario)
    trace_out = args.trace_out or trace_file(Path.cwd(), scenario, args.agent)
    if trace_out.is_dir():
        raise CLIError(f"--trace-out {trace_out}: is a folder; give the trace file's path")
    _writable_folder(trace_out.parent, "--trace-out")
    try:
        session = ServeSession(scenario, args.agent, port=args.port)
    except BadInputError as exc:
        raise CLIError(str(exc)) from None
    stop = threading.Event()
    previous: dict[signal.Signals, Any] = {}
    with contextlib.suppress(ValueError):  # not the main thread: the caller stops it otherwise
        for signum in (signal.SIGINT, signal.SIGTERM):
            previous[signum] = signal.signal(signum, lambda *_: stop.set())
    try:
        case = session.run(stop, lambda url: print(url, file=out, flush=True))
    finally:
        for stopped, handler in previous.items():
            signal.signal(stopped, handler)
        session.close()
    name, result, verdict = case.case.name, case.result, case.verdict
    if result is None:
        if verdict.kind == "input":
            raise CLIError(str(verdict.stopped_by))
        print(_result_line(name, None, verdict), file=out)
        _print_verdict(verdict, out)
        return EXIT_FAILED
    atomic_write_text(trace_out, session.trace_text(result))
    print(_result_line(name, result, verdict), file=out)
    _print_verdict(verdict, out)
    print(f"wrote {_shown(trace_out.resolve())}", file=out)
    return EXIT_OK if verdict.passed else EXIT_FAILED


def _cmd_mcp_proxy(args: argparse.Namespace, out: TextIO) -> int:
    from agentkit.core.errors import BadInputError
    from agentkit.tools.mcp import MCPServer, MCPServerError
    from agentkit.tools.mcp.proxy import ProxyError, run_proxy

    command = args.server[1:] if args.server[:1] == ["--"] else args.server
    if args.mode != "none" and not command:
        raise CLIError(f"mcp-proxy --mode {args.mode}: give the server's command after `--` "
                       "(it is started to record)")
    env = {}
    for pair in args.env:
        key, sep, value = pair.partition("=")
        if not sep or not key:
            raise CLIError(f"mcp-proxy --env {pair!r}: write KEY=VALUE")
        env[key] = value
    try:
        server = MCPServer(name=args.name, command=command[0] if command else "-",
                           args=tuple(command[1:]), env=env, cwd=os.getcwd())
    except ValueError as exc:
        raise CLIError(f"mcp-proxy: {exc}") from None
    try:
        return run_proxy(server, args.cassette, args.mode)
    except (ProxyError, BadInputError, MCPServerError) as exc:  # before it read or started
        raise CLIError(f"mcp-proxy: {exc}") from None


_COMMANDS = {"list": _cmd_list, "run": _cmd_run, "record": _cmd_record, "replay": _cmd_replay,
             "diff": _cmd_diff, "report": _cmd_report, "eval": _cmd_eval, "serve": _cmd_serve,
             "import-trace": _cmd_import_trace, "mcp-proxy": _cmd_mcp_proxy}


def main(argv: Sequence[str] | None = None, out: TextIO | None = None) -> int:
    """Run the command line ``argv``, printing to ``out``; returns the exit code (also for
    ``--help`` and usage errors, whose message goes to stderr).

    The project is the nearest pyproject.toml from the current directory up: its root goes
    on the import path and its ``[tool.agentkit]`` table is read (scenario folders, agent
    types), as the pytest plugin does; both only for this call."""
    from agentkit.core.files import FileWriteError
    from agentkit.scenario.project import ProjectError, activated, find_project

    out = out or sys.stdout
    try:
        with contextlib.redirect_stdout(out):
            args = build_parser().parse_args(argv)
    except SystemExit as exc:
        return exc.code if isinstance(exc.code, int) else EXIT_USAGE
    try:
        args.project = find_project(Path.cwd())
        with activated(args.project):
            return _COMMANDS[args.command](args, out)
    except ProjectError as exc:
        print(f"agentkit: error: {exc}", file=sys.stderr)
        return EXIT_USAGE
    except (CLIError, FileWriteError) as exc:  # a full disk: the one message of every writer
        print(f"agentkit: error: {exc}", file=sys.stderr)
        return EXIT_USAGE
    except BrokenPipeError:  # e.g. `agentkit list | head`: stop quietly
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        return EXIT_OK
    except (KeyboardInterrupt, Terminated) as exc:
        return stopped(exc)


if __name__ == "__main__":
    from agentkit._console import run

    run()
