"""The recording LLM: :class:`RecordingLLM` wraps a live backend and records its exchanges (and
those of the harness's roles) to a cassette, per a VCR-style record mode."""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from agentkit.core.secrets import Redactor
from agentkit.core.sim import Stopwatch, asleep
from agentkit.llms.base import LLM, FunctionCallingLLM, LLMRequest, estimate_usage
from agentkit.llms.types import ChatResponse, LLMMetadata
from agentkit.recording._cassette import (
    RECORD_MODES,
    Cassette,
    Exchange,
    RecordMode,
    current_wire,
)
from agentkit.recording._errors import CassetteMissError
from agentkit.recording._player import CassettePlayer, Slot, slot_of
from agentkit.recording._requests import canonical_request, public_url, request_hash
from agentkit.recording._responses import (
    error_dict,
    message_dict,
    replay_stream,
    response_from,
    worth_recording,
)
from agentkit.recording._roles import RoleKey, RoleLLM

__all__ = ["RecordingLLM"]


def _with_stable_ids(response: ChatResponse, key: str) -> ChatResponse:
    """``response`` with its tool calls' ids derived from the request (its hash ``key``) and
    their place, instead of the provider's: a live model gives new ids on every call, which
    the next request carries back -- so without this, re-recording an unchanged conversation
    would change every request after the first tool call."""
    calls = response.message.tool_calls
    if calls:
        response.message.additional_kwargs["tool_calls"] = [
            call.model_copy(update={"tool_id": f"call_{key[:12]}_{index}"})
            for index, call in enumerate(calls, start=1)]
    return response


class RecordingLLM(FunctionCallingLLM):
    """Wraps a live backend and records its exchanges to a cassette, per ``mode``.

    With ``autosave`` (the default) the cassette file is rewritten (atomically, secrets
    redacted) after every recorded exchange, so an interrupted recording keeps what it got.
    Without it nothing is written: the caller saves :attr:`cassette` when the recording is
    known to be good (what :func:`agentkit.scenario.record.record_scenario` does). Latency is
    measured on the virtual clock, which a live call on agentkit's virtual-time loop advances
    by the real time it took; replays sleep the recorded latency on the virtual clock, so a
    replayed trace shows the same latencies as the recorded one.

    ``recorded`` counts the exchanges recorded; ``unrecorded`` keeps the errors that were not
    (the model could not be reached, the key was refused, the request was never sent);
    ``request_secrets`` names the environment variables and backend secrets whose values were
    redacted from a request.

    Samples: given a :class:`Cassette` object (shared by the recorders of its samples) and
    ``sample``, it replays and records that sample's exchanges only; ``on_record`` is called
    after each recorded exchange (e.g. to save the shared cassette under a lock).

    Continuations: with ``continues``, the run goes on from a recorded prefix -- the
    cassette's run up to some point (a fault), then live. ``continues()`` says whether that
    point is passed: None until it is (a request the cassette lacks is then a
    :class:`CassetteMissError`: the recorded prefix no longer matches), then what was passed
    (a label), and only then are missing requests recorded. Several continuations of one
    prefix share one cassette: each replays the prefix and adds only its own continuation,
    tagged with its ``variant`` (the exchanges' ``variant``): a replay of the scenario's run
    does not see them, and a replay of one variant sees the prefix and its own only.
    """

    def __init__(self, llm: LLM, cassette: str | Path | Cassette, mode: RecordMode = "none", *,
                 agent_type: str | None = None, scenario: str | None = None,
                 test: str | None = None, autosave: bool = True, sample: int | None = None,
                 on_record: Callable[[], None] | None = None,
                 continues: Callable[[], str | None] | None = None,
                 variant: str | None = None) -> None:
        if mode not in RECORD_MODES:
            raise ValueError(f"unknown record mode {mode!r}; use one of {', '.join(RECORD_MODES)}")
        self.llm = llm
        self.mode = mode
        self.sample = sample or 0
        self.on_record = on_record
        self.continues = continues
        self.variant = variant
        if isinstance(cassette, Cassette):
            exists = cassette.path is not None and cassette.path.exists()
            self.cassette = cassette
        else:
            path = Path(cassette)
            exists = path.exists()
            if mode == "rewrite" or not exists:
                if mode == "none":
                    raise CassetteMissError(f"{path}: cassette not found and record mode is "
                                            "`none`; record it with --record-mode once")
                self.cassette = Cassette(path=path)
            else:
                self.cassette = Cassette.load(path)
        self._record = mode in ("all", "rewrite", "new_episodes") or (mode == "once" and not exists)
        self._replay = mode in ("none", "new_episodes") or (mode == "once" and exists)
        meta = llm.metadata
        self.cassette.model = meta.model_name
        self.cassette.function_calling = meta.is_function_calling_model
        self.cassette.context_window = meta.context_window
        self.cassette.agent_type = agent_type or self.cassette.agent_type
        self.cassette.scenario = scenario or self.cassette.scenario
        self.cassette.test = test or self.cassette.test
        self.cassette.base_url = public_url(getattr(llm, "base_url", None))
        self._player = CassettePlayer(self.cassette, sample=self.sample, variant=variant)
        self.autosave = autosave
        self.recorded = 0
        self.unrecorded: list[BaseException] = []
        self.request_secrets: set[str] = set()
        self._request_redactions: set[str] = set()
        self._recorded_hashes: set[Slot] = set()
        self._role_secrets: dict[str, str] = {}

    @property
    def metadata(self) -> LLMMetadata:
        return self.llm.metadata

    @property
    def provider(self) -> str:
        return self.llm.provider

    @property
    def secrets(self) -> dict[str, str]:
        """The live backend's secrets and those of the role models it recorded through."""
        return {**self.llm.secrets, **self._role_secrets}

    def _stamp(self) -> None:
        from agentkit import __version__

        self.cassette.agentkit_version = __version__
        self.cassette.recorded_at = datetime.now(UTC).replace(microsecond=0).isoformat()

    def role(self, key: RoleKey, live: LLM | None = None) -> RoleLLM:
        """One harness role's model on this cassette (as :meth:`CassetteLLM.role`): what is
        recorded replays, the rest is recorded through ``live``, the role's live model."""
        return RoleLLM(self, key, live)

    def drop_unused_roles(self) -> int:
        """Forget the recorded role exchanges this recording did not replay -- verdicts on a
        rubric that changed, messages of a persona that changed: a re-record (``new_episodes``,
        ``all``) asks the role again and keeps only what it asked; how many were dropped."""
        unused = {id(e) for e in self._player.left_over() if e.role is not None}
        before = len(self.cassette.exchanges)
        self.cassette.exchanges = [e for e in self.cassette.exchanges if id(e) not in unused]
        return before - len(self.cassette.exchanges)

    def _lookup(self, request: LLMRequest, role: RoleKey | None = None,
                live: LLM | None = None) -> tuple[dict[str, Any], str, Exchange | None]:
        if live is not None:
            self._role_secrets.update(live.secrets)
        redactor = Redactor(secrets=self.secrets)
        canonical = canonical_request(request, redactor)
        self._request_redactions |= redactor.redacted
        self.request_secrets |= redactor.values
        key = request_hash(canonical)
        exchange = self._player.take(canonical, key, role) if self._replay else None
        if exchange is None and not self._record:
            raise (self._player.miss(canonical) if role is None
                   else self._player.role_miss(canonical, role))
        if exchange is None and role is None and self.continues is not None \
                and self.continues() is None:
            raise CassetteMissError(
                f"the recorded prefix no longer matches: a request before the point this run "
                f"continues from is not in the cassette, so it cannot go on from there; "
                f"re-record the run it continues (agentkit record ... --mode rewrite).\n"
                f"{self._player.miss(canonical)}")
        return canonical, key, exchange

    async def _role_chat(self, request: LLMRequest, role: RoleKey,
                         live: LLM | None) -> tuple[ChatResponse, str]:
        canonical, key, exchange = self._lookup(request, role, live)
        if exchange is not None:
            if exchange.latency:
                await asleep(exchange.latency)
            return response_from(exchange)[0], (exchange.key or {}).get("model", "unknown")
        if live is None:
            raise CassetteMissError(
                f"{self.cassette.path}: no live model to record the {role.role} of {role.at}"
                f"{f' ({role.where})' if role.where else ''} with; give the recording one "
                f"(agentkit record --judge-model, the pytest plugin's judge_llm fixture)")
        model = live.metadata.model_name
        if role.model is not None and model != role.model:
            raise CassetteMissError(
                f"{self.cassette.path}: the {role.role} of {role.at}"
                f"{f' ({role.where})' if role.where else ''} names model `{role.model}`, but "
                f"the live {role.role} model recording it is `{model}`; record with that model "
                "or change the scenario")
        watch = Stopwatch.start()
        try:
            response = await live._achat(request)
        except Exception as exc:
            self._store(request, canonical, key, watch, None, None, exc,
                        role=(role.role, role.fields(model)))
            raise
        self._store(request, canonical, key, watch, response, None, None,
                    role=(role.role, role.fields(model)))
        return response, model

    def _store(self, request: LLMRequest, canonical: dict[str, Any], key: str, watch: Stopwatch,
               response: ChatResponse | None, chunks: list[str] | None,
               error: BaseException | None, *,
               role: tuple[str, dict[str, str]] | None = None) -> None:
        # A live call's time passed as real I/O, not simulated latency: count all of it as
        # latency, as the replay (which sleeps the recorded latency) will.
        watch.clock.count_latency(watch.wall - watch.serial)
        if error is not None and not worth_recording(error):
            self.unrecorded.append(error)
            return
        slot = (None, None, key) if role is None else (role[0], role[1].get("at"), key)
        if self.mode == "all" and slot not in self._recorded_hashes:
            # re-recorded: the new answer replaces the old one instead of queueing behind it
            self.cassette.exchanges = [e for e in self.cassette.exchanges
                                       if slot_of(e) != slot or e.sample != self.sample
                                       or e.variant != self.variant]
        self._recorded_hashes.add(slot)
        exchange = Exchange(request=self.cassette.shared(canonical), request_hash=key,
                            latency=round(watch.wall, 6), sample=self.sample,
                            wire=current_wire() if role is None else None,
                            variant=self.variant)
        if role is not None:
            exchange.role, exchange.key = role
        if error is not None:
            exchange.error = error_dict(error)
        else:
            assert response is not None
            if response.usage is None:
                response.usage = estimate_usage(request, response.message)
            exchange.response = {"message": message_dict(response.message),
                                  "usage": response.usage.model_dump() if response.usage else None}
            if chunks is not None:
                exchange.response["chunks"] = chunks
        self.cassette.exchanges.append(exchange)
        self.cassette.redactions = sorted(set(self.cassette.redactions)
                                          | self._request_redactions)
        self.recorded += 1
        self._stamp()
        if self.autosave:
            self.cassette.save(secrets=self.secrets)
        if self.on_record is not None:
            self.on_record()

    async def _achat(self, request: LLMRequest) -> ChatResponse:
        canonical, key, exchange = self._lookup(request)
        if exchange is not None:
            if exchange.latency:
                await asleep(exchange.latency)
            return response_from(exchange)[0]
        watch = Stopwatch.start()
        try:
            response = _with_stable_ids(await self.llm._achat(request), key)
        except Exception as exc:
            self._store(request, canonical, key, watch, None, None, exc)
            raise
        self._store(request, canonical, key, watch, response, None, None)
        return response

    async def _astream_chat(self, request: LLMRequest) -> AsyncIterator[ChatResponse]:
        canonical, key, exchange = self._lookup(request)
        if exchange is not None:
            if exchange.latency:
                await asleep(exchange.latency)
            response, recorded = response_from(exchange)
            async for chunk in replay_stream(response, recorded):
                yield chunk
            return
        watch = Stopwatch.start()
        chunks: list[str] = []
        last: ChatResponse | None = None
        try:
            async for chunk in self.llm._astream_chat(request):
                last = _with_stable_ids(chunk, key)
                if chunk.delta:
                    chunks.append(chunk.delta)
                yield last
        except Exception as exc:
            self._store(request, canonical, key, watch, None, None, exc)
            raise
        if last is not None:
            self._store(request, canonical, key, watch, last, chunks, None)
