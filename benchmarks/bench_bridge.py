"""A plain openai-SDK agent's conversation replayed through agentkit's bridge and through vcrpy.

    python benchmarks/bench_bridge.py [--quick]

vcrpy is a benchmark-only dependency (in the ``dev`` extra); agentkit never imports it.

Rows: ``ToolLoopAgent`` (examples/tool_loop_agent.py: no framework, the openai SDK's sync
client) answers one question with 1 and with 10 tool calls, one per model reply, its model
calls replayed from a cassette recorded once at the start; then the same tool loop at the
wire (``WireAgent``: a raw ``httpx.Client`` posting the same JSON, no SDK), where the SDK's
own cost is absent. Columns, the same conversation each:

* **bridge**: agentkit's cassette replayed by the in-process bridge (the client routed by
  ``BridgeTransport``), with the agent's trace built from the wire, as the harness does;
* **vcrpy**: a vcrpy cassette of the same HTTP exchanges -- what pytest-recording, vcrpy's
  pytest plugin, keeps and replays -- the same client on httpx's own transport, vcrpy at its
  **defaults** (``vcr.use_cassette(path)``: record mode ``once``, requests matched on method
  and URL): what a user who adds vcrpy gets, and the figure the target is set against;
* **vcrpy+body***: the same cassette matched on the body too (``match_on`` plus ``body``), a
  setting **chosen by us** (marked ``*``): what a user who wants a changed request to fail
  configures, as agentkit matches on the request's content; at its defaults vcrpy replays a
  changed prompt's answers all the same;
* **bare**: the same client on an ``httpx.MockTransport`` handing out the recorded answers in
  order: no cassette, no matching, no trace -- the floor under all.

A run is what one test does: load its cassette file, build the client and the agent, chat
once. The overhead per model call is a side's time per run over the bare one's, divided by
the model calls of a run. The sides take turns round by round (see ``_harness``); runs are
timed in process CPU time.
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any, TextIO

_HERE = Path(__file__).resolve().parent
_ROOT = _HERE.parent
for folder in (_HERE, _ROOT):
    if str(folder) not in sys.path:
        sys.path.insert(0, str(folder))

import httpx  # noqa: E402
import openai  # noqa: E402

from _conversation import TOOL_NAME, answer, lookup_population, tool_call_arguments  # noqa: E402
from _harness import Throughput  # noqa: E402
from _measure import Measured, apply_counts, table  # noqa: E402
from _rates import heading  # noqa: E402
from agentkit.bridge import API_KEY, DEFAULT_BASE_URL, Bridge, BridgeTransport  # noqa: E402
from agentkit.core.sim import simulation  # noqa: E402
from agentkit.instrumentation import collect_events  # noqa: E402
from agentkit.llms.mock import ScriptedLLM, ScriptedResponse, tool_call  # noqa: E402
from agentkit.llms.openai import ssl_context  # noqa: E402
from agentkit.recording import CassetteLLM, RecordingLLM  # noqa: E402
from agentkit.trace import IdNormalizer, build_turn  # noqa: E402
from examples.tool_loop_agent import ToolLoopAgent  # noqa: E402

TARGET_RATIO = 2.0
ROWS = (("sdk_1", "plain openai-SDK agent, 1 tool call", 1),
        ("sdk_10", "plain openai-SDK agent, 10 tool calls", 10),
        ("wire_1", "raw httpx client (no SDK), 1 tool call", 1),
        ("wire_10", "raw httpx client (no SDK), 10 tool calls", 10))
TARGET_ROWS = ("sdk_1", "sdk_10", "wire_1", "wire_10")
"""The rows the target holds for: the SDK agent's (issue 36's target, bounded by the SDK's own
cost: :func:`sdk_bound`) and the same loop at the wire, where that cost is absent."""
SIDES = ("bridge", "vcrpy", "vcrpy_body", "bare")
SIDE_NAMES = {"bridge": "bridge", "vcrpy": "vcrpy", "vcrpy_body": "vcrpy+body*",
              "bare": "bare"}
"""How the report names each side; ``*`` marks a peer setting chosen by us."""
VCRPY_BODY_MATCH = ["method", "scheme", "host", "port", "path", "query", "body"]
QUICK = {"runs": 20, "rounds": 3, "warmup": 2}
FULL = {"runs": 300, "rounds": 5, "warmup": 10}
QUESTION = "How many people live in these cities?"
MODEL = "gpt-4o-mini"
SCHEMA = {"type": "function", "function": {
    "name": TOOL_NAME, "description": "The population of a city.",
    "parameters": {"type": "object", "properties": {"city": {"type": "string"}},
                   "required": ["city"]}}}
Run = tuple[str, list[str]]


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=(__doc__ or "").split("\n\n")[0])
    parser.add_argument("--quick", action="store_true", help="small counts (CI smoke)")
    parser.add_argument("--runs", type=int, help="runs per timed round of the 1-call row (the "
                        "10-call row runs a tenth as many)")
    parser.add_argument("--rounds", type=int, help="timed rounds per row; the median counts")
    parser.add_argument("--warmup", type=int, help="untimed runs per side before the rounds")
    parser.add_argument("--no-vcrpy", action="store_true", help="leave the vcrpy column out")
    args = parser.parse_args(argv)
    return apply_counts(parser, args, QUICK if args.quick else FULL)


class WireAgent:
    """``ToolLoopAgent``'s loop at the wire: the same requests posted as JSON by a raw
    ``httpx.Client`` and the answers read as JSON, no SDK in between."""

    def __init__(self, client: httpx.Client, max_rounds: int) -> None:
        self.client = client
        self.max_rounds = max_rounds
        self.messages: list[dict[str, Any]] = []

    def chat(self, message: str) -> str:
        self.messages.append({"role": "user", "content": message})
        for round_ in range(self.max_rounds):
            response = self.client.post("/chat/completions", json={
                "model": MODEL, "messages": self.messages, "tools": [SCHEMA],
                "tool_choice": "none" if round_ == self.max_rounds - 1 else "auto"})
            response.raise_for_status()
            reply = response.json()["choices"][0]["message"]
            calls = reply.get("tool_calls") or []
            self.messages.append({"role": "assistant", "content": reply.get("content") or "",
                                  **({"tool_calls": calls} if calls else {})})
            if not calls:
                return str(reply.get("content") or "")
            for call in calls:
                arguments = json.loads(call["function"]["arguments"] or "{}")
                self.messages.append({"role": "tool", "tool_call_id": call["id"],
                                      "content": lookup_population(**arguments)})
        return ""


Agent = ToolLoopAgent | WireAgent


def _agent(transport: httpx.BaseTransport | None, calls: int, wire: bool) -> Agent:
    """The row's agent on a client over ``transport`` (None: httpx's own, as vcrpy patches)."""
    if wire:
        http = (httpx.Client(transport=transport, base_url=DEFAULT_BASE_URL)
                if transport is not None
                else httpx.Client(verify=ssl_context(), base_url=DEFAULT_BASE_URL))
        return WireAgent(http, max_rounds=calls + 2)
    return ToolLoopAgent(_client(transport), MODEL, tools={TOOL_NAME: lookup_population},
                         schemas=[SCHEMA], max_rounds=calls + 2)


def _chat(agent: Agent) -> Run:
    """One chat: the answer and every tool output the agent sent back."""
    reply = agent.chat(QUESTION)
    return reply, [m["content"] for m in agent.messages if m["role"] == "tool"]


def _script(calls: int) -> list[Any]:
    return [*(ScriptedResponse(tool_calls=[tool_call(TOOL_NAME, **arguments)])
              for arguments in tool_call_arguments(calls)), answer(calls)]


class _Recorder(BridgeTransport):
    """A bridge transport keeping every answer's body (the bare side hands them out)."""

    def __init__(self, bridge: Bridge) -> None:
        super().__init__(bridge)
        self.bodies: list[bytes] = []

    def handle_request(self, request: httpx.Request) -> httpx.Response:
        response = super().handle_request(request)
        self.bodies.append(response.read())
        return response


def _client(transport: httpx.BaseTransport | None = None) -> openai.OpenAI:
    # the CA bundle is loaded once (ssl_context), not per client: that is not what is measured
    http: Any = (httpx.Client(transport=transport) if transport is not None
                 else httpx.Client(verify=ssl_context()))
    return openai.OpenAI(base_url=DEFAULT_BASE_URL, api_key=API_KEY, max_retries=0,
                         http_client=http)


# ----------------------------------------------------------------- the sides
def record_agentkit(folder: Path, calls: int, wire: bool) -> tuple[Path, list[bytes]]:
    """agentkit's cassette of the conversation (recorded through the bridge), and the bodies
    of the answers the agent got."""
    path = folder / f"agentkit-{'wire' if wire else 'sdk'}-{calls}.yaml"
    with simulation(0):
        bridge = Bridge(RecordingLLM(ScriptedLLM(_script(calls)), path, "rewrite"))
        transport = _Recorder(bridge)
        with bridge.wire.turn(QUESTION):
            _chat(_agent(transport, calls, wire))
    return path, transport.bodies


def bridge_run(path: Path, calls: int, wire: bool) -> Callable[[int], Run]:
    def run(_: int) -> Run:
        with simulation(0), collect_events() as events:
            bridge = Bridge(CassetteLLM(path))
            agent = _agent(BridgeTransport(bridge), calls, wire)
            with bridge.wire.turn(QUESTION) as turn:
                reply, outputs = _chat(agent)
            build_turn(QUESTION, events, IdNormalizer(), response=turn.answer(), error=None,
                       memory=bridge.wire.memory, wall_time=0.0, serial_time=0.0)
        return reply, outputs
    return run


def bare_run(bodies: list[bytes], calls: int, wire: bool) -> Callable[[int], Run]:
    def run(_: int) -> Run:
        answers: Iterator[bytes] = iter(bodies)
        transport = httpx.MockTransport(lambda request: httpx.Response(
            200, content=next(answers), headers={"content-type": "application/json"}))
        return _chat(_agent(transport, calls, wire))
    return run


def _vcr(side: str) -> Any:
    """vcrpy as the side has it: its defaults (``vcrpy``), or matching the body too
    (``vcrpy_body``, chosen by us), replaying only."""
    import vcr

    if side == "vcrpy":
        return vcr.VCR()
    return vcr.VCR(record_mode="none", match_on=VCRPY_BODY_MATCH)


def record_vcrpy(folder: Path, calls: int, wire: bool) -> Path:
    """A vcrpy cassette of the same conversation, recorded from a bridge over the script."""
    import vcr

    path = folder / f"vcrpy-{'wire' if wire else 'sdk'}-{calls}.yaml"
    recorder = vcr.VCR(record_mode="all", match_on=VCRPY_BODY_MATCH)
    with simulation(0):
        bridge = Bridge(ScriptedLLM(_script(calls)))

        def serve(request: httpx.Request) -> httpx.Response:
            given = bridge.handle(request.method, request.url.path, request.content)
            return httpx.Response(given.status, headers=given.headers, content=given.body)

        with recorder.use_cassette(str(path)), bridge.wire.turn(QUESTION):
            _chat(_agent(httpx.MockTransport(serve), calls, wire))
    return path


def vcrpy_run(path: Path, calls: int, wire: bool, side: str) -> Callable[[int], Run]:
    replayer = _vcr(side)

    def run(_: int) -> Run:
        with replayer.use_cassette(str(path)):
            return _chat(_agent(None, calls, wire))
    return run


# ----------------------------------------------------------------- measuring
def measure(args: argparse.Namespace, folder: Path, with_vcrpy: bool) -> dict[str, Any]:
    """Per row and side: runs per second (median round) and the conversation's digest."""
    results: dict[str, Any] = {}
    for key, _label, calls in ROWS:
        wire = key.startswith("wire")
        path, bodies = record_agentkit(folder, calls, wire)
        runs: dict[str, Callable[[int], Run]] = {"bridge": bridge_run(path, calls, wire),
                                                 "bare": bare_run(bodies, calls, wire)}
        if with_vcrpy:
            cassette = record_vcrpy(folder, calls, wire)
            for side in ("vcrpy", "vcrpy_body"):
                runs[side] = vcrpy_run(cassette, calls, wire, side)
        expected = answer(calls)
        sides = {side: Throughput(run, lambda r: r, expected, calls, chats=args.runs,
                                  warmup=args.warmup) for side, run in runs.items()}
        for _ in range(args.rounds):
            for measured in sides.values():
                measured.round()
        results[key] = {side: measured.result() for side, measured in sides.items()}
        results[key]["calls"] = calls + 1  # model calls per run: one per tool call, the answer
    return results


def per_call_overhead(row: dict[str, Any], side: str) -> float:
    """Microseconds a model call costs ``side`` beyond the bare client's."""
    return (1e6 / row[side]["rate"] - 1e6 / row["bare"]["rate"]) / row["calls"]


def sdk_cost(results: dict[str, Any], calls: int) -> float:
    """Microseconds per model call the SDK adds over a raw httpx client (both bare)."""
    sdk, wire = results[f"sdk_{calls}"], results[f"wire_{calls}"]
    return (1e6 / sdk["bare"]["rate"] - 1e6 / wire["bare"]["rate"]) / sdk["calls"]


def ratio(row: dict[str, Any], side: str) -> float:
    """The bridge's runs/s over ``side``'s."""
    return float(row["bridge"]["rate"] / row[side]["rate"])


def sdk_bound(row: dict[str, Any]) -> float:
    """The most the bridge could be over vcrpy at its defaults in ``row``: the bare client's
    runs/s over vcrpy's (a bridge costing nothing at all)."""
    return float(row["bare"]["rate"] / row["vcrpy"]["rate"])


def report(results: dict[str, Any], args: argparse.Namespace, out: TextIO) -> None:
    sides = [side for side in SIDES if side in results[ROWS[0][0]]]
    peers = [side for side in sides if side.startswith("vcrpy")]
    print(heading("bridge", args.rounds).replace("scripted LLM with zero latency",
                                                 "cassettes replayed"), file=out)
    headers = ["scenario", "runs/round", *(f"{SIDE_NAMES[side]} runs/s" for side in sides),
               *(f"bridge/{SIDE_NAMES[side]}" for side in peers)]
    lines = []
    for key, label, _calls in ROWS:
        row = results[key]
        lines.append([label, str(row["bridge"]["chats"]),
                      *(f"{row[side]['rate']:,.1f}" for side in sides),
                      *(f"{ratio(row, side):.2f}x" for side in peers)])
    print(table(lines, headers), file=out)
    if peers:
        print("vcrpy: its defaults (vcr.use_cassette(path): record mode once, matched on "
              "method and URL), what a user adding it gets; vcrpy+body*: matched on the body "
              "too, chosen by us (*), what a user wanting a changed request to fail sets",
              file=out)
    print("\noverhead per model call over the bare client (us)", file=out)
    overhead = [[label, str(results[key]["calls"]),
                 *(f"{per_call_overhead(results[key], side):,.0f}" for side in sides
                   if side != "bare")]
                for key, label, _calls in ROWS]
    print(table(overhead, ["scenario", "model calls/run",
                           *(SIDE_NAMES[side] for side in sides if side != "bare")]), file=out)
    print("the SDK's own cost per model call (the bare SDK row over the bare wire row, us): "
          + ", ".join(f"{sdk_cost(results, calls):,.0f} with {calls} tool call"
                      f"{'s' if calls > 1 else ''}" for calls in (1, 10)), file=out)
    same = all(len({results[key][side]["digest"] for side in sides}) == 1 for key, *_ in ROWS)
    print("\ntargets", file=out)
    print(f"  same conversation on every side (transcript digests): {'yes' if same else 'NO'}",
          file=out)
    if "vcrpy" in sides:
        for key, label, _calls in ROWS:
            if key in TARGET_ROWS:
                row = results[key]
                found = ratio(row, "vcrpy")
                bound = (f"; bound by the SDK: a bridge costing nothing would be "
                         f"{sdk_bound(row):.2f}x" if key.startswith("sdk") else "")
                print(f"  {label}: bridge runs/s >= {TARGET_RATIO:.0f}x vcrpy at its defaults: "
                      f"{'met' if found >= TARGET_RATIO else 'MISSED'} ({found:.2f}x; "
                      f"{ratio(row, 'vcrpy_body'):.2f}x vcrpy+body*{bound})", file=out)
    else:
        print("  vcrpy left out (--no-vcrpy): no comparison", file=out)


def measured(results: dict[str, Any]) -> list[Measured]:
    """The run's figures for the targets table (:mod:`targets`): the bridge over vcrpy at its
    defaults, per row (an SDK row with the bound the SDK sets)."""
    if "vcrpy" not in results[TARGET_ROWS[0]]:
        return []
    return [Measured(f"bridge_{key}", f"{found:.2f}x" + (
        f" (SDK bound {sdk_bound(results[key]):.2f}x)" if key.startswith("sdk") else ""),
        found >= TARGET_RATIO)
            for key in TARGET_ROWS for found in [ratio(results[key], "vcrpy")]]


def main(argv: list[str] | None = None, out: TextIO = sys.stdout) -> dict[str, Any]:
    """Run, print the tables to ``out`` and return the numbers."""
    args = parse_args(argv)
    with tempfile.TemporaryDirectory(prefix="agentkit-bench-bridge-") as folder:
        results = measure(args, Path(folder), not args.no_vcrpy)
    report(results, args, out)
    return results


if __name__ == "__main__":
    figures = main()
    if "--quick" not in sys.argv[1:]:  # a smoke run's figures are not measurements
        from targets import publish

        publish(measured(figures))
