"""The old import paths of what moved to :mod:`agentkit.recording`, and the names each keeps:
the tests of the re-exports and the layer table's import check read it."""

NEW_HOME = "agentkit.recording"

OLD_PATHS: dict[str, tuple[str, ...]] = {
    "agentkit.llms.cassette": (
        "CASSETTE_FORMAT", "CASSETTE_FORMATS", "RecordMode", "RECORD_MODES", "Cassette",
        "Exchange", "CassetteError", "CassetteMissError", "CassettePlayer", "RecordedLLMError",
        "CassetteLLM", "RecordingLLM", "RoleKey", "RoleLLM", "canonical_request",
        "request_hash", "text_hash", "public_url", "dump_yaml"),
    "agentkit.llms.cassette_schema": (
        "CassetteError", "CassetteData", "ExchangeData", "MCPExchangeData", "PART_FORMATS",
        "check_cassette", "parts_of"),
    "agentkit.llms.fake_openai": (
        "FakeOpenAIServer", "HTTPError", "RawToolCall", "EPOCH", "DEFAULT_BASE_URL",
        "TEST_API_KEY"),
    # a module of its own that also re-exports the cassette's two LLMs, on first use
    "agentkit.llms.mock": ("CassetteLLM", "RecordingLLM"),
}
"""Each old path and the names it re-exports from :data:`NEW_HOME`."""

SHIMS = ("agentkit.llms.cassette", "agentkit.llms.cassette_schema", "agentkit.llms.fake_openai")
"""The old paths that are nothing but the re-export."""


def new_home(name: str) -> str:
    """Where an imported ``agentkit...`` name really comes from: a name of an old path (or the
    old path itself) is :data:`NEW_HOME`'s; any other name is itself."""
    for old, names in OLD_PATHS.items():
        if name == old and old in SHIMS:
            return NEW_HOME
        if name.startswith(old + ".") and name[len(old) + 1:] in names:
            return f"{NEW_HOME}.{name[len(old) + 1:]}"
    return name


def is_reexport(module: str, name: str) -> bool:
    """Whether ``module`` importing ``name`` is one of its re-exports from the new home."""
    return name.removeprefix(NEW_HOME + ".") in OLD_PATHS.get(module, ()) and \
        name.startswith(NEW_HOME + ".")
