"""The replaying LLM: :class:`CassetteLLM` answers from a cassette (or, in a record mode,
records through a live backend as :class:`RecordingLLM` does)."""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path

from agentkit.core.sim import asleep, run_sync
from agentkit.llms.base import LLM, FunctionCallingLLM, LLMRequest
from agentkit.llms.doubles import Excusable
from agentkit.llms.types import ChatResponse, LLMMetadata, model_metadata
from agentkit.recording._cassette import Cassette, Exchange, RecordMode, replayed_cassette
from agentkit.recording._errors import CassetteError
from agentkit.recording._player import CassettePlayer
from agentkit.recording._record import RecordingLLM
from agentkit.recording._requests import keyed_request, request_key
from agentkit.recording._responses import replay_stream, response_from
from agentkit.recording._roles import RoleKey, RoleLLM

__all__ = ["CassetteLLM"]


class CassetteLLM(FunctionCallingLLM, Excusable):
    """Replays a cassette: same requests, same answers, same latency. A
    :class:`~agentkit.llms.doubles.ModelDouble`: its leftovers are the exchanges not replayed.

    With ``mode`` other than ``none`` (and the live backend as ``llm``) it records through
    that backend as :class:`RecordingLLM` does; with ``autosave=False`` nothing is written
    until :meth:`save` (a caller that keeps a recording only when it turned out good);
    ``test`` names the test whose recording it is in the cassette's header. A cassette of
    several samples replays one of them, ``sample`` (replaying one without saying which is a
    :class:`CassetteError`). A fault matrix's cassette replays the scenario's run, or with
    ``variant`` (``lookup_order#1:timeout``) that fault variant's: the recorded prefix and its
    own continuation (:meth:`Cassette.variant_exchanges`); what is left over is its own.

    Replaying a file (``mode="none"`` and a path), :attr:`cassette` is the one object every
    replay of the file's current text shares (:func:`replayed_cassette`): read it, never
    change it (:meth:`Cassette.load` gives a cassette to change).
    """

    def __init__(self, cassette: Cassette | str | Path, mode: RecordMode = "none",
                 llm: LLM | None = None, *, autosave: bool = True,
                 test: str | None = None, sample: int | None = None,
                 variant: str | None = None) -> None:
        self._recorder: RecordingLLM | None = None
        if mode != "none":
            if llm is None:
                raise ValueError(f"record mode {mode!r} needs the live backend to record "
                                 "through: CassetteLLM(cassette, mode, llm=...)")
            path = cassette.path if isinstance(cassette, Cassette) else cassette
            if path is None:
                raise ValueError("recording needs a cassette with a file path")
            self._recorder = RecordingLLM(llm, path, mode, autosave=autosave, test=test,
                                          variant=variant)
            self.cassette = self._recorder.cassette
        else:
            self.cassette = (cassette if isinstance(cassette, Cassette)
                             else replayed_cassette(cassette))
        self.mode = mode
        self._player = CassettePlayer(self.cassette, sample=_sample_of(self.cassette, sample),
                                      variant=variant)

    @property
    def metadata(self) -> LLMMetadata:
        if self._recorder is not None:
            return self._recorder.metadata
        return model_metadata(self.cassette.model,
                              function_calling=self.cassette.function_calling,
                              context_window=self.cassette.context_window)

    @property
    def provider(self) -> str:
        """The recording's provider: ``openai`` for a cassette recorded from a server (the
        server it names spoke the OpenAI wire), ``agentkit`` for one recorded from a model that
        answered itself."""
        if self._recorder is not None:
            return self._recorder.provider
        return "openai" if self.cassette.base_url is not None else "agentkit"

    @property
    def unused(self) -> int:
        """Recorded exchanges not replayed yet (the agent's and the roles')."""
        return self._player.remaining()

    @property
    def unused_roles(self) -> dict[str, int]:
        """Recorded role exchanges not replayed yet, by role (``{"judge": 1}``)."""
        return self._player.unused_roles()

    def leftovers(self) -> list[str]:
        if not self.unused:
            return []
        roles = ", ".join(f"{count} of the {role}'s" for role, count in self.unused_roles.items())
        return [f"the recording has {self.unused} exchange(s) that were not replayed"
                + (f" ({roles})" if roles else "")]

    def role(self, key: RoleKey, live: LLM | None = None) -> RoleLLM:
        """The model of one harness role's call (a judge's, a simulated user's) through this
        cassette: replayed by ``key`` (:class:`RoleKey`), or -- while recording -- recorded
        through ``live``, the role's own live model."""
        return RoleLLM(self, key, live)

    @property
    def recorded(self) -> int:
        """Exchanges recorded through the live backend so far (0 when only replaying)."""
        return self._recorder.recorded if self._recorder is not None else 0

    def save(self) -> bool:
        """Write what was recorded (atomically, secrets redacted); False if nothing was."""
        if self._recorder is None or not self._recorder.recorded:
            return False
        self.cassette.save(secrets=self._recorder.secrets)
        return True

    def _take(self, request: LLMRequest) -> tuple[Exchange, bool]:
        """The recorded exchange that answers ``request`` (a miss raises), and whether the
        request's messages are fixed (:func:`response_from` then shares its reply)."""
        canonical, key, fixed = keyed_request(request)
        exchange = self._player.take(canonical, key)
        if exchange is None:
            raise self._player.miss(canonical)
        return exchange, fixed

    async def _replayed(self, request: LLMRequest) -> tuple[ChatResponse, list[str] | None]:
        exchange, fixed = self._take(request)
        if exchange.latency:
            await asleep(exchange.latency)
        return response_from(exchange, fixed=fixed)

    async def _role_chat(self, request: LLMRequest, role: RoleKey,
                         live: LLM | None) -> tuple[ChatResponse, str]:
        if self._recorder is not None:
            return await self._recorder._role_chat(request, role, live)
        canonical, key = request_key(request)
        exchange = self._player.take(canonical, key, role)
        if exchange is None:
            raise self._player.role_miss(canonical, role)
        if exchange.latency:
            await asleep(exchange.latency)
        return response_from(exchange)[0], (exchange.key or {}).get("model", "unknown")

    async def _achat(self, request: LLMRequest) -> ChatResponse:
        if self._recorder is not None:
            return await self._recorder._achat(request)
        return (await self._replayed(request))[0]

    def _chat(self, request: LLMRequest) -> ChatResponse:
        """A sync call: an answer recorded with no latency is replayed without a trip through
        the event loop; one with latency waits it out there, as :meth:`_achat` does."""
        if self._recorder is not None:
            return run_sync(self._recorder._achat(request))
        exchange, fixed = self._take(request)
        if exchange.latency:
            run_sync(asleep(exchange.latency))
        return response_from(exchange, fixed=fixed)[0]

    async def _astream_chat(self, request: LLMRequest) -> AsyncIterator[ChatResponse]:
        if self._recorder is not None:
            async for chunk in self._recorder._astream_chat(request):
                yield chunk
            return
        response, chunks = await self._replayed(request)
        async for chunk in replay_stream(response, chunks):
            yield chunk


def _sample_of(cassette: Cassette, sample: int | None) -> int:
    """The sample to replay of ``cassette``, checked against what it holds."""
    where = cassette.path or "<cassette>"
    if cassette.samples is None:
        if sample not in (None, 0):
            raise CassetteError(f"{where}: holds one run, not samples; there is no sample "
                                f"{sample} to replay")
        return 0
    if sample is None:
        raise CassetteError(f"{where}: holds {cassette.samples} samples (independent runs); "
                            "replay each with sample=0, 1, ... (agentkit's commands and the "
                            "pytest plugin replay all of them)")
    if not 0 <= sample < cassette.samples:
        raise CassetteError(f"{where}: holds samples 0-{cassette.samples - 1}; there is no "
                            f"sample {sample}")
    return sample
