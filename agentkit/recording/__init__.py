"""The world's recording: cassettes of LLM, MCP and role exchanges, replayed forever.

This layer sits above :mod:`agentkit.llms` and below :mod:`agentkit.tools` (whose MCP tools
record through it). It holds the cassette format (:class:`Cassette`), its player
(:class:`CassettePlayer`), the replaying and recording LLMs (:class:`CassetteLLM`,
:class:`RecordingLLM`) and the harness roles' channel (:class:`RoleKey`, :class:`RoleLLM`),
and the fake OpenAI endpoint (:class:`FakeOpenAIServer`, loaded on first use: it needs httpx,
respx and the OpenAI backend, which a replay never does). The old paths
``agentkit.llms.cassette``, ``agentkit.llms.cassette_schema`` and ``agentkit.llms.fake_openai``
re-export these names.

**Cassettes.** A cassette file (YAML) has a versioned header and a list of exchanges, each a
canonical request, its hash, and the response (message, usage, stream chunks) or error, with
the latency it took. Format 2 adds ``mcp_exchanges``: the ``tools/list`` and ``tools/call``
exchanges of the run's MCP servers (:mod:`agentkit.tools.mcp`), kept the same way, and
the servers' handshakes and other requests ``agentkit mcp-proxy`` recorded
(:data:`MCP_HANDSHAKES`, :data:`MCP_METHODS`), each with the notifications sent while it was
answered; format 3
writes request messages with references (below). A cassette is written in the lowest format
that holds it, and every format is read. :class:`CassetteLLM` replays a cassette;
:class:`RecordingLLM` wraps any backend and records through it according to a VCR-style mode:

* ``none`` -- replay only; a request not on the cassette fails (the default);
* ``once`` -- record if the cassette does not exist yet, else replay only;
* ``new_episodes`` -- replay what is recorded, record what is not;
* ``all`` -- never replay; record every call (appended to what is there);
* ``rewrite`` -- start an empty cassette and record every call.

A miss is one short message: the request, the nearest recorded one, and where it first differs
(as a unified diff around the change, never cut), then how to re-record. Secrets are
redacted before anything is written, and writes are atomic.

Each request's messages are written once (format 3, :mod:`agentkit.core.reflists`): a run of
messages an earlier request of the cassette holds is a reference to it, so a cassette of N
exchanges of a conversation grows with N, not with N times its memory window.

**Samples.** A cassette may hold several independent runs of the same conversation against a
live model (``samples: N``): every exchange carries the index of its sample,
and a replay (``CassetteLLM(..., sample=i)``) or a recording (``RecordingLLM(...,
sample=i)``) sees only that sample's exchanges -- the same request in two samples is two
answers, never one answer served twice. ``complete`` lists the samples whose run went to its
end (an interrupted evaluation resumes the others); ``sampling`` keeps how they were drawn
(temperature, the seed of sample 0: sample i used ``seed + i``). A cassette of one run has
no sample keys.

**Formats.** The optional parts of a cassette each need a minimum ``format``
(:data:`PART_FORMATS`): samples 2, ``mcp_exchanges`` 2, message references 3, role exchanges
3, an exchange's ``wire`` 4, an exchange's ``variant`` 5. A cassette is written in the lowest
format that holds all its parts (the highest of their needs; with none of them, format 1), so
a recording keeps the format it always had. Formats 1 to 5 are read; a part that needs a
higher format than the file declares is refused, naming the file, its line and the part.

**Wires.** An agent on the bridge (:mod:`agentkit.bridge`) may speak chat completions, the
Responses API or Anthropic's Messages API; the bridge reads each into the same LLM request, so
one cassette format holds all three. An exchange made over the Responses or Messages API names
it (``wire: openai_responses`` / ``anthropic_messages``: :data:`WIRES`, set by the bridge with
:func:`on_wire`); the request it is matched by is the model's, whichever API carried it.

**Variants.** A fault matrix's recording (:mod:`agentkit.harness`) holds the scenario's run
and, after it, each fault variant's continuation of it, every exchange of one tagged with the
variant's label (``variant: lookup_order#1:timeout``, set by ``RecordingLLM(...,
variant=...)``). A replay sees the untagged exchanges and, with ``variant``, that variant's
(:meth:`Cassette.variant_exchanges`); what it leaves over is counted of its own only.

**Roles.** Beside the agent's exchanges a scenario's cassette keeps those of the harness's own
LLM roles -- an LLM judge's verdicts, a simulated user's messages -- each tagged with its
``role`` and a :class:`RoleKey`: the scenario field it serves, the role's model, hashes of its
subject (the rubric; the persona and goal) and of the transcript it saw. A role's call goes
through :meth:`CassetteLLM.role` (or :meth:`RecordingLLM.role`): replayed by its key and
request, or recorded through the role's own live model. A role's request that is not on the
cassette is a miss that says which part of the key changed (a changed rubric is never judged
again silently). Role exchanges need format 3.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from agentkit.core.lazy import lazy_names
from agentkit.recording._cassette import (
    CASSETTE_FORMAT,
    CASSETTE_FORMATS,
    RECORD_MODES,
    REPLAYED,
    WIRES,
    Cassette,
    Exchange,
    RecordMode,
    ReplayedCassettes,
    Wire,
    current_wire,
    dump_yaml,
    on_wire,
    replayed_cassette,
)
from agentkit.recording._errors import CassetteError, CassetteMissError, RecordedLLMError
from agentkit.recording._player import CassettePlayer
from agentkit.recording._record import RecordingLLM
from agentkit.recording._replay import CassetteLLM
from agentkit.recording._requests import canonical_request, public_url, request_hash, text_hash
from agentkit.recording._roles import RoleChannel, RoleKey, RoleLLM
from agentkit.recording._schema import (
    MCP_HANDSHAKES,
    MCP_METHODS,
    PART_FORMATS,
    CassetteData,
    ExchangeData,
    MCPExchangeData,
    MCPMethod,
    check_cassette,
    parts_of,
)

if TYPE_CHECKING:
    from agentkit.recording._fake_openai import (
        DEFAULT_BASE_URL,
        EPOCH,
        TEST_API_KEY,
        FakeOpenAIServer,
        HTTPError,
        RawToolCall,
    )

__all__ = [
    # the cassette and its file format
    "Cassette",
    "Exchange",
    "replayed_cassette",
    "ReplayedCassettes",
    "REPLAYED",
    "CASSETTE_FORMAT",
    "CASSETTE_FORMATS",
    "PART_FORMATS",
    "CassetteData",
    "ExchangeData",
    "MCPExchangeData",
    "MCP_HANDSHAKES",
    "MCP_METHODS",
    "MCPMethod",
    "check_cassette",
    "parts_of",
    "dump_yaml",
    # the API an agent spoke to the bridge
    "Wire",
    "WIRES",
    "on_wire",
    "current_wire",
    # requests as a cassette keys them
    "canonical_request",
    "request_hash",
    "text_hash",
    "public_url",
    # replaying and recording
    "RecordMode",
    "RECORD_MODES",
    "CassettePlayer",
    "CassetteLLM",
    "RecordingLLM",
    "RoleKey",
    "RoleLLM",
    "RoleChannel",
    # errors
    "CassetteError",
    "CassetteMissError",
    "RecordedLLMError",
    # the fake OpenAI endpoint
    "FakeOpenAIServer",
    "HTTPError",
    "RawToolCall",
    "EPOCH",
    "DEFAULT_BASE_URL",
    "TEST_API_KEY",
]

__getattr__, __dir__ = lazy_names(
    __name__, dict.fromkeys(__all__[__all__.index("FakeOpenAIServer"):],
                            "agentkit.recording._fake_openai"))
"""The fake endpoint's names, imported on first use (the package docstring says why)."""
