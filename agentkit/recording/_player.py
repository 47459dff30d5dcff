"""Replaying a cassette: the player hands out each recorded exchange once, in recorded order,
and a request it does not hold is a miss that names the nearest recorded one and where it
first differs."""

from __future__ import annotations

import difflib
import json
from collections import defaultdict, deque
from typing import Any, Literal

from agentkit.core.textdiff import changes, short
from agentkit.recording._cassette import Cassette, Exchange
from agentkit.recording._errors import CassetteMissError
from agentkit.recording._requests import request_hash
from agentkit.recording._roles import KEY_NOUNS, RoleKey
from agentkit.recording._schema import MCP_HANDSHAKES

__all__ = ["CassettePlayer", "Slot", "slot_of"]


def _first_difference(recorded: dict[str, Any], request: dict[str, Any]) -> list[str]:
    """Where ``request`` first differs from the ``recorded`` one: the path, and the change as
    a unified diff around it (recorded -> now), whole, however long the text."""
    found = changes(recorded, request)
    if not found:
        return ["(no difference)"]
    first = found[0].lines()
    lines = [f"first difference (recorded -> now), at {first[0]}", *first[1:]]
    if len(found) > 1:
        lines.append(f"(and {len(found) - 1} more difference{'s' if len(found) > 2 else ''})")
    return lines


def _describe(request: dict[str, Any]) -> str:
    """A request in a few words: kind, messages, the last message, the tools offered (an MCP
    request: its server, method, tool and arguments)."""
    if "method" in request:
        params = request.get("params") or {}
        tool = f" {params.get('name')}" if isinstance(params, dict) and "name" in params else ""
        arguments = params.get("arguments") if isinstance(params, dict) else None
        text = json.dumps(arguments, sort_keys=True, ensure_ascii=False)
        shown = f" {text if len(text) <= 70 else text[:67] + '...'}" if arguments else ""
        return f"MCP server {request.get('server')}: {request.get('method')}{tool}{shown}"
    messages = request.get("messages") or []
    text = f"{'stream ' if request.get('stream') else ''}{request.get('kind', 'request')}, " \
           f"{len(messages)} message{'' if len(messages) == 1 else 's'}"
    if messages and isinstance(messages[-1], dict):
        last = messages[-1]
        text += f", last {last.get('role')}: {short(last.get('content'), 70)}"
    tools = request.get("tools")
    if tools:
        text += f", tools {', '.join(str(t.get('name')) for t in tools if isinstance(t, dict))}"
    return text


def _distance(a: dict[str, Any], b: dict[str, Any]) -> tuple[float, float]:
    """How far apart two requests are: structurally (deepdiff), then textually (a changed
    string counts the same to deepdiff whether one character or all of it changed)."""
    from deepdiff import DeepDiff

    structural = float(DeepDiff(a, b, get_deep_distance=True).get("deep_distance", 0.0))
    text = difflib.SequenceMatcher(None, json.dumps(a, sort_keys=True, default=str),
                                   json.dumps(b, sort_keys=True, default=str)).ratio()
    return structural, 1.0 - text


Slot = tuple[str | None, str | None, str]
"""Where the player queues an exchange: its role, the scenario field it serves, its hash."""


#: What a role's answer is called in a miss.
_ROLE_NOUNS = {"judge": "verdict of the judge", "user": "message of the simulated user"}


def slot_of(exchange: Exchange) -> Slot:
    return exchange.role, (exchange.key or {}).get("at"), exchange.request_hash


class CassettePlayer:
    """Replay state: exchanges by role, field and request hash, each consumed in recorded
    order (an agent's request never takes a judge's answer, nor one judge another's);
    ``part`` is the list of the cassette it plays (``exchanges``, or ``mcp_exchanges``); of
    the exchanges those of one sample only (``sample``; a cassette of one run has only
    sample 0), and of one fault variant (``variant``, :meth:`Cassette.variant_exchanges`: the
    scenario's run and the variant's continuation; None, the scenario's run alone). What is
    left over is what was the run's own: the recorded prefix's exchanges a variant went past
    its fault without are the scenario's run's, not the variant's."""

    def __init__(self, cassette: Cassette, part: Literal["exchanges", "mcp_exchanges"]
                 = "exchanges", sample: int = 0, variant: str | None = None) -> None:
        self.cassette = cassette
        self.part = part
        self.sample = sample
        self.variant = variant
        self._queues: dict[Slot, deque[Exchange]] = defaultdict(deque)
        for exchange in self.exchanges:
            self._queues[slot_of(exchange)].append(exchange)

    @property
    def exchanges(self) -> list[Exchange]:
        """The recorded exchanges it plays (MCP exchanges are not kept by sample; a server's
        recorded handshake is not a request to replay but how ``agentkit mcp-proxy`` greets
        its client)."""
        if self.part == "mcp_exchanges":
            return [e for e in self.cassette.mcp_exchanges
                    if e.request.get("method") not in MCP_HANDSHAKES]
        return self.cassette.variant_exchanges(self.sample, self.variant)

    @property
    def _where(self) -> str:
        where = str(self.cassette.path or "<cassette>")
        return f"{where} (sample {self.sample})" if self.cassette.sampled else where

    def take(self, canonical: dict[str, Any], key: str, role: RoleKey | None = None,
             ) -> Exchange | None:
        queue = self._queues.get((None, None, key) if role is None else (role.role, role.at, key))
        if not queue:
            return None
        if role is None or role.model is None:
            return queue.popleft()
        # the first answer of the model the scenario names (a panel's judges share requests)
        found = next((e for e in queue if (e.key or {}).get("model") == role.model), None)
        if found is not None:
            queue.remove(found)
        return found

    def remaining(self) -> int:
        return len(self.left_over())

    def left_over(self) -> list[Exchange]:
        """The run's own exchanges not replayed (yet)."""
        return [exchange for queue in self._queues.values() for exchange in queue
                if exchange.variant == self.variant]

    def unused_roles(self) -> dict[str, int]:
        """Unreplayed role exchanges of the run's own, by role."""
        found: dict[str, int] = {}
        for exchange in self.left_over():
            if exchange.role is not None:
                found[exchange.role] = found.get(exchange.role, 0) + 1
        return found

    def miss(self, canonical: dict[str, Any]) -> CassetteMissError:
        where = self._where
        part = self.part
        agents = [e for e in self.exchanges if e.role is None]
        if not agents:
            what = "exchanges" if part == "exchanges" else "MCP exchanges"
            return CassetteMissError(f"{where}: the cassette has no recorded {what}; record "
                                     "it first (record mode `once` or `new_episodes`)")
        nearest = min(agents, key=lambda e: _distance(e.request, canonical))
        index = getattr(self.cassette, part).index(nearest)
        if nearest.request == canonical:
            times = sum(e.request == canonical for e in agents)
            return CassetteMissError(
                f"{where}: this request (hash {request_hash(canonical)}, first recorded as "
                f"{part}[{index}]) was recorded {times} time(s) and every recording of it "
                "was already replayed: the agent now makes it more often. If that is intended, "
                "re-record with record mode `new_episodes` or `rewrite`.")
        used = "" if self._queues.get(slot_of(nearest)) else ", already replayed"
        return CassetteMissError("\n".join([
            f"{where}: no recorded exchange matches this request (hash "
            f"{request_hash(canonical)}: {_describe(canonical)})",
            f"nearest recorded: {part}[{index}] (hash {nearest.request_hash}{used}: "
            f"{_describe(nearest.request)})",
            *_first_difference(nearest.request, canonical),
            "If the change is intended, re-record with record mode `new_episodes` or "
            "`rewrite`."]))

    def role_miss(self, canonical: dict[str, Any], role: RoleKey) -> CassetteMissError:
        """A role's request that is not on the cassette, saying which part of its key changed:
        the model, the subject (rubric, persona, goal) or the transcript it saw."""
        where = self._where
        noun = _ROLE_NOUNS.get(role.role, f"{role.role} answer")
        field_name = f"{role.at} ({role.where})" if role.where else role.at
        fix = (f"A changed rubric, persona, goal, {role.role} model or conversation is never "
               "answered again silently: re-record with record mode `new_episodes` (asks the "
               "role again, replays the agent's recorded answers) or `rewrite`.")
        same_role = [e for e in self.exchanges if e.role == role.role]
        candidates = [e for e in same_role if (e.key or {}).get("at") == role.at] or same_role
        if not candidates:
            others = sorted({e.sample for e in self.cassette.exchanges
                             if e.role == role.role and e.sample != self.sample})
            held = (f"sample {self.sample} has none (sample{'s' if len(others) > 1 else ''} "
                    f"{', '.join(map(str, others))} of the cassette "
                    f"{'have' if len(others) > 1 else 'has'} one: was this sample's cut short "
                    "or removed?)" if self.cassette.sampled and others
                    else "the cassette has none (it was recorded before the scenario had one)")
            return CassetteMissError(f"{where}: no recorded {noun} for {field_name}: {held}. "
                                     f"{fix}")
        nearest = min(candidates, key=lambda e: (len(role.changes(e.key or {})),
                                                 _distance(e.request, canonical)))
        index = self.cassette.exchanges.index(nearest)
        changed = role.changes(nearest.key or {})
        if not changed and nearest.request == canonical:
            return CassetteMissError(
                f"{where}: the {noun} for {field_name} was recorded "
                f"{sum(e.request == canonical for e in candidates)} time(s) and every recording "
                f"was already replayed: it is now asked more often (more samples?). {fix}")
        recorded = nearest.key or {}
        now = role.fields(role.model)
        shown = []
        for name in changed:
            if name == "model":
                shown.append(f"the {role.role}'s model changed (recorded with "
                             f"`{recorded.get('model')}`, the scenario now names `{role.model}`)")
            else:
                shown.append(f"the {KEY_NOUNS.get(name, name)} changed (recorded "
                             f"{recorded.get(name)} in exchanges[{index}], now {now.get(name)})")
        lines = [f"{where}: no recorded {noun} for {field_name}: " + "; ".join(shown)
                 if shown else f"{where}: no recorded {noun} for {field_name} matches this "
                               f"request (nearest: exchanges[{index}])"]
        if nearest.request != canonical:
            lines += _first_difference(nearest.request, canonical)
        lines.append(fix)
        return CassetteMissError("\n".join(lines))
