"""The in-process bridge: an httpx transport, so HTTP clients reach a bridge without a socket.

``openai.OpenAI(base_url=bridge.base_url, api_key=..., http_client=httpx.Client(transport=
BridgeTransport(bridge)))`` -- or :func:`openai_clients` -- routes every request of that client
to ``bridge``; a framework built on the SDK that takes an ``http_client`` is routed the same
way. The transport belongs to one bridge, so clients of runs in other threads (or pytest-xdist
workers) never reach each other's bridges; nothing is patched process-wide.
"""

from __future__ import annotations

import importlib
from typing import Any

import httpx
import openai

from agentkit.bridge.endpoint import API_KEY, Bridge, HTTPAnswer

__all__ = ["BridgeTransport", "openai_clients", "openai_client", "async_openai_client",
           "httpx2_clients"]


class BridgeTransport(httpx.BaseTransport, httpx.AsyncBaseTransport):
    """An httpx transport (sync and async) answering every request with ``bridge``."""

    def __init__(self, bridge: Bridge) -> None:
        self.bridge = bridge

    def handle_request(self, request: httpx.Request) -> httpx.Response:
        answer = self.bridge.handle(request.method, request.url.path, request.read())
        response: httpx.Response = _response(answer, request)
        return response

    async def handle_async_request(self, request: httpx.Request) -> httpx.Response:
        answer = await self.bridge.ahandle(request.method, request.url.path,
                                           await request.aread())
        response: httpx.Response = _response(answer, request)
        return response


def _response(answer: HTTPAnswer, request: Any, http: Any = httpx) -> Any:
    """The answer as a response of the HTTP library ``http`` (httpx, or httpx2 which has the
    same classes); a scripted timeout or refused connection is raised as the transport error
    a real one would be."""
    if answer.failure == "timeout":
        raise http.ReadTimeout("scripted timeout (agentkit bridge)", request=request)
    if answer.failure == "connect":
        raise http.ConnectError("scripted connection failure (agentkit bridge)",
                                request=request)
    return http.Response(answer.status, headers=answer.headers, content=answer.body,
                         request=request)


def openai_clients(bridge: Bridge, **options: Any) -> tuple[openai.OpenAI, openai.AsyncOpenAI]:
    """A sync and an async ``openai`` client routed to ``bridge`` in-process. They make one
    attempt per call (``max_retries=0``, unless ``options`` say otherwise): a scripted error
    the scripted model does not retry itself (its ``max_retries``) reaches the agent at once."""
    return openai_client(bridge, **options), async_openai_client(bridge, **options)


def openai_client(bridge: Bridge, **options: Any) -> openai.OpenAI:
    """The sync client of :func:`openai_clients`."""
    # Any: openai 3.x annotates http_client with httpx2's classes, 1.x/2.x with httpx's, and
    # every one of them takes an httpx client (see pyproject.toml)
    http: Any = httpx.Client(transport=BridgeTransport(bridge))
    return openai.OpenAI(http_client=http, **_client_options(bridge, options))


def async_openai_client(bridge: Bridge, **options: Any) -> openai.AsyncOpenAI:
    """The async client of :func:`openai_clients`."""
    http: Any = httpx.AsyncClient(transport=BridgeTransport(bridge))
    return openai.AsyncOpenAI(http_client=http, **_client_options(bridge, options))


def _client_options(bridge: Bridge, options: dict[str, Any]) -> dict[str, Any]:
    return {"base_url": bridge.base_url, "api_key": API_KEY, "max_retries": 0, **options}


def httpx2_clients(bridge: Bridge) -> tuple[Any, Any]:
    """A sync and an async ``httpx2`` client routed to ``bridge`` in-process: the HTTP stack of
    Anthropic's SDK (which takes no httpx client), e.g. ``anthropic.Anthropic(base_url=
    bridge.base_url.removesuffix("/v1"), api_key="any", http_client=sync)``. ``httpx2`` is
    imported here (it comes with the SDKs that use it); it is not a dependency of agentkit."""
    httpx2 = importlib.import_module("httpx2")

    def answer(request: Any) -> Any:
        got = bridge.handle(request.method, request.url.path, request.read())
        return _response(got, request, httpx2)

    async def aanswer(request: Any) -> Any:
        got = await bridge.ahandle(request.method, request.url.path, await request.aread())
        return _response(got, request, httpx2)

    return (httpx2.Client(transport=httpx2.MockTransport(answer)),
            httpx2.AsyncClient(transport=httpx2.MockTransport(aanswer)))

