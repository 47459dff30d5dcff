"""``agentkit record``: a scenario's run (or N samples) against a live model, one progress
line per call, and what was written."""

from __future__ import annotations

import argparse
from collections.abc import Callable
from typing import Any, TextIO

from agentkit.cli._common import EXIT_FAILED, EXIT_OK, CLIError, load_scenario
from agentkit.cli._printing import print_sampled, print_verdict, result_line
from agentkit.core import fmt

__all__ = ["command", "LiveModels"]


def command(args: argparse.Namespace, out: TextIO) -> int:
    scenario = load_scenario(args.scenario)
    mcp_only = _only_mcp_servers(args, scenario)
    _check_judge_model(scenario, args.agent, args.judge_model)
    models = LiveModels(args)
    live: Any = {}  # a scripted model with MCP tools: only the MCP servers are recorded
    roles: Any = None
    if not mcp_only:
        live = models.model(args.model, args.base_url, args.seed)
        roles = models.cast(live, args.seed)
    if args.samples is not None and args.samples > 1:
        if mcp_only:
            raise CLIError(f"{args.scenario}: agents.{args.agent} has a scripted model: "
                           "--samples draws several runs from a live model; record it once")
        return _record_samples(args, scenario, live, out, models.cast)
    return _record_once(args, scenario, live, roles, mcp_only, out)


def _only_mcp_servers(args: argparse.Namespace, scenario: Any) -> bool:
    """Whether the agent type's model is scripted and only its MCP servers are recorded; a
    :class:`CLIError` when it has nothing to record."""
    from agentkit.scenario._layout import records

    if args.agent not in scenario.agents:
        raise CLIError(f"{args.scenario}: no agent type `{args.agent}` (it has "
                       f"{', '.join(scenario.agents)})")
    spec = scenario.agents[args.agent]
    if spec.recorded():
        return False
    if records(scenario, args.agent):
        return True
    if spec.team is not None:
        raise CLIError(f"{args.scenario}: agents.{args.agent}: every team agent has a `script`; "
                       f"set `recording: cassettes/{scenario.name}.{args.agent}.<agent>.yaml` "
                       "(instead of `script`) on each team agent to record")
    raise CLIError(f"{args.scenario}: agents.{args.agent} has a `script`, not a "
                   f"`recording`; set `recording: cassettes/{scenario.name}.{args.agent}"
                   ".yaml` (instead of `script`) to record it")


class LiveModels:
    """The live models ``record``'s options ask for: the agent's, and its roles' (LLM judges,
    a simulated user), which the agent's model plays unless an option or the scenario names
    another."""

    def __init__(self, args: argparse.Namespace) -> None:
        self.args = args
        self.sampling: dict[str, Any] = ({"temperature": args.temperature}
                                         if args.temperature is not None else {})

    def model(self, name: str, base_url: str | None, seed: int | None) -> Any:
        """``name`` at ``base_url``, sampling with ``seed`` (None: the server's choice)."""
        from agentkit.llms.errors import LLMError
        from agentkit.llms.openai import OpenAI

        try:
            return OpenAI(model=name, base_url=base_url, timeout=self.args.timeout,
                          additional_kwargs={"seed": seed} if seed is not None else None,
                          **self.sampling)
        except (LLMError, ValueError) as exc:
            raise CLIError(str(exc)) from None

    def cast(self, agent_model: Any, seed: int | None) -> Any:
        """The roles' live models of a run (a sample's: with its seed): by default the
        agent's model plays them."""
        from agentkit.harness import RoleModels

        args = self.args

        def judge(named: str | None) -> Any:
            name = named or args.judge_model
            if name is None and args.judge_base_url is None:
                return agent_model
            return self.model(name or args.model, args.judge_base_url or args.base_url, seed)

        def user(named: str | None) -> Any:
            return (agent_model if named is None or named == args.model
                    else self.model(named, args.base_url, seed))

        return RoleModels(judge=judge, user=user)


def _record_once(args: argparse.Namespace, scenario: Any, live: Any, roles: Any,
                 mcp_only: bool, out: TextIO) -> int:
    """``record`` of one run: its progress, then what was written (nothing if the run or its
    replay was not good)."""
    from agentkit.core.errors import BadInputError, HarnessError
    from agentkit.harness import Recording, record_scenario
    from agentkit.scenario._layout import recording_files
    from agentkit.verdict import judge_error

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
        print(result_line(name, None, verdict), file=out)
        written = Recording(cassettes=files[1:] if scenario.path else files,
                            snapshot=files[0] if scenario.path else None)
        print_verdict(verdict, out, f"nothing written: {written.files} are as they were")
        return EXIT_FAILED
    if recording.existing:
        return _print_existing(args, scenario, recording, cassettes, out)
    return _print_recorded(name, recording, out)


def _print_existing(args: argparse.Namespace, scenario: Any, recording: Any, cassettes: str,
                    out: TextIO) -> int:
    """``record --mode once`` of a cassette that exists: nothing recorded, the missing
    snapshot written, its replay judged."""
    from agentkit.harness import rerecord_command

    replay = recording.replay
    assert replay is not None
    print(f"{cassettes}: cassette exists, nothing recorded (mode once records only what is "
          "missing); use --mode rewrite to record it again, or --mode new_episodes to add "
          "requests it lacks", file=out)
    if recording.written:
        print(f"wrote the missing snapshot {recording.snapshot}", file=out)
    if not replay.passed:
        print(result_line(f"{scenario.name}[{args.agent}]", replay, replay.verdict), file=out)
        print_verdict(replay.verdict, out,
                      f"to re-record: {rerecord_command(scenario, args.agent)}")
        return EXIT_FAILED
    return EXIT_OK


def _print_recorded(name: str, recording: Any, out: TextIO) -> int:
    """The live run's line, then what was written, or why nothing was."""
    if recording.live is not None:
        print(result_line(name, recording.live, recording.live.verdict), file=out)
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
    from agentkit.eval import record_samples
    from agentkit.llms.openai import OpenAI
    from agentkit.scenario._layout import cassette_path

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
    print_sampled(name, replay, out)
    if recording.written:
        print(f"wrote {recording.files}", file=out)
        print(f"      the offline replay reproduces the recorded trace of all {args.samples} "
              "samples", file=out)
    return EXIT_OK if replay.passed else EXIT_FAILED


def _check_judge_model(scenario: Any, agent_type: str, judge_model: str | None) -> None:
    """``--judge-model`` records judges that name no model; one that names another model is
    a usage error (its verdicts are keyed by the model it names)."""
    from agentkit.scenario._model import judge_panel

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
        from agentkit.harness import ConversationEndEvent, JudgeVerdictEvent, SimulatedTurnEvent

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
