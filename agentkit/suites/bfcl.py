"""The single-turn cases of BFCL v4 (the Berkeley Function Calling Leaderboard) as scenarios.

``agentkit suite bfcl`` writes them. Each case becomes a scenario: its functions as tools told
BFCL's JSON schemas (the types BFCL maps for OpenAI: ``dict`` an object, ``float`` a number,
``tuple`` an array, dots in names made underscores), answering a fixed text (single-turn BFCL
never runs a function); the user question; a trajectory rendered from the first possible
answer, so every agent type runs the case offline; and expectations that score the calls as
BFCL's AST checker does -- each argument ``one_of`` its possible answers (``optional`` where
an answer is ``""``, texts compared ``loose``), the calls in any order and no others, and no
call at all for ``irrelevance``. BFCL's data comes from the ``bfcl-eval`` distribution
(installed with ``pip install --no-deps``; never imported) or a folder given with ``--data``.
"""

from __future__ import annotations

import argparse
import json
import re
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from importlib import metadata
from pathlib import Path
from typing import Any, TextIO

from agentkit.core.errors import BadInputError
from agentkit.core.files import atomic_write_text
from agentkit.recording import dump_yaml

__all__ = ["CATEGORIES", "BFCLDataError", "Case", "stand_in", "STAND_IN_OUTPUT", "data_folder",
           "read_cases", "scenario_data", "scenario_text", "write_suite", "add_arguments",
           "command"]

#: category -> the stem of its data file (``BFCL_v4_<stem>.json``)
CATEGORIES: dict[str, str] = {
    "simple": "simple_python",
    "multiple": "multiple",
    "parallel": "parallel",
    "parallel_multiple": "parallel_multiple",
    "irrelevance": "irrelevance",
}
_DISTRIBUTION = "bfcl-eval"
_INSTALL = "pip install --no-deps 'bfcl-eval>=2026.3'"
STAND_IN_OUTPUT = "done"
_ANSWER = "Done."
_REF_LIKE = re.compile(r"\$\{?[0-9]")
_NO_CALL_ANSWER = "None of the available functions fits this request."

#: BFCL's parameter types as JSON-schema types (the mapping BFCL uses for OpenAI's tools)
_JSON_TYPES = {
    "integer": "integer", "number": "number", "float": "number", "double": "number",
    "string": "string", "char": "string", "any": "string", "Any": "string", "String": "string",
    "boolean": "boolean", "bool": "boolean", "array": "array", "list": "array",
    "tuple": "array", "ArrayList": "array", "Array": "array", "Queue": "array",
    "Stack": "array", "dict": "object", "object": "object", "HashMap": "object",
    "Hashtable": "object", "byte": "integer", "short": "integer", "long": "integer",
    "Bigint": "integer",
}


class BFCLDataError(BadInputError):
    """BFCL's data is missing or malformed: the message names the file and line, and how to
    get the data."""


def stand_in(**arguments: Any) -> str:
    """Every BFCL tool's implementation: single-turn BFCL scores the calls and never runs
    them, so each call answers one fixed text."""
    return STAND_IN_OUTPUT


@dataclass(frozen=True)
class Case:
    """One BFCL case: where it was read, its question, functions and possible answers (none
    for ``irrelevance``)."""

    id: str
    category: str
    messages: list[dict[str, Any]]
    functions: list[dict[str, Any]]
    answers: list[dict[str, Any]] | None
    place: str


def data_folder(given: str | Path | None = None) -> Path:
    """The folder of BFCL's ``BFCL_v4_*.json`` files: ``given``, else the installed
    ``bfcl-eval`` distribution's (found from its file list, without importing it)."""
    if given is not None:
        folder = Path(given)
        if not folder.is_dir():
            raise BFCLDataError(f"{folder}: no such folder (--data names the folder holding "
                                "BFCL_v4_*.json and possible_answer/)")
        return folder
    try:
        files = metadata.distribution(_DISTRIBUTION).files or []
    except metadata.PackageNotFoundError:
        files = []
    for file in files:
        if file.name == "BFCL_v4_simple_python.json" and file.parent.name == "data":
            return Path(str(file.locate())).parent
    raise BFCLDataError(f"BFCL's data was not found: install it with `{_INSTALL}` (agentkit "
                        "reads its data files and never imports it), or give --data DIR")


def _lines(path: Path) -> Iterator[tuple[int, dict[str, Any]]]:
    """The JSON objects of a JSON-lines file with their line numbers."""
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise BFCLDataError(f"{path}: no such file (a BFCL data folder holds BFCL_v4_<category>"
                            ".json and possible_answer/BFCL_v4_<category>.json)") from None
    except (OSError, UnicodeDecodeError) as exc:
        raise BFCLDataError(f"{path}: cannot read it: {exc}") from None
    for number, line in enumerate(text.splitlines(), start=1):
        if not line.strip():
            continue
        try:
            item = json.loads(line)
        except json.JSONDecodeError as exc:
            raise BFCLDataError(f"{path}:{number}: not a JSON object: {exc.msg} (column "
                                f"{exc.colno}); each line holds one case") from None
        if not isinstance(item, dict):
            raise BFCLDataError(f"{path}:{number}: expected a JSON object (one case per "
                                f"line), got {type(item).__name__}")
        yield number, item


def _field(item: dict[str, Any], key: str, kind: type, place: str) -> Any:
    value = item.get(key)
    if not isinstance(value, kind) or not value:
        raise BFCLDataError(f"{place}: the case has no `{key}` (a non-empty "
                            f"{'list' if kind is list else kind.__name__})")
    return value


def read_cases(folder: Path, category: str) -> Iterator[Case]:
    """The cases of ``category`` in file order, each with its possible answers."""
    if category not in CATEGORIES:
        raise BFCLDataError(f"unknown BFCL category {category!r}; the single-turn categories "
                            f"are {', '.join(CATEGORIES)}")
    name = f"BFCL_v4_{CATEGORIES[category]}.json"
    answers: dict[str, tuple[list[dict[str, Any]], str]] = {}
    if category != "irrelevance":
        answer_path = folder / "possible_answer" / name
        for number, item in _lines(answer_path):
            place = f"{answer_path}:{number}"
            answers[str(_field(item, "id", str, place))] = (
                _field(item, "ground_truth", list, place), place)
    path = folder / name
    for number, item in _lines(path):
        place = f"{path}:{number}"
        case_id = _field(item, "id", str, place)
        question = _field(item, "question", list, place)
        if not isinstance(question[0], list) or not question[0]:
            raise BFCLDataError(f"{place}: `question` is a list of turns, each a list of "
                                "messages; the first turn has none")
        functions = _field(item, "function", list, place)
        answer = None
        if category != "irrelevance":
            if case_id not in answers:
                raise BFCLDataError(f"{place}: case {case_id} has no possible answer in "
                                    f"{folder / 'possible_answer' / name}")
            answer = answers[case_id][0]
        yield Case(case_id, category, question[0], functions, answer, place)


def tool_name(name: str) -> str:
    """A BFCL function's name as a tool name: dots become underscores (as BFCL does for
    OpenAI-style models, and scores them)."""
    return name.replace(".", "_")


def _json_schema(node: dict[str, Any]) -> dict[str, Any]:
    """A BFCL parameter schema with JSON-schema types, nested properties and items too."""
    out = dict(node)
    given = out.get("type")
    if given == "float":
        out["format"] = "float"
        out["description"] = f"{out.get('description', '')} This is a float type value.".strip()
    out["type"] = _JSON_TYPES.get(str(given), "string")
    if isinstance(out.get("properties"), dict):
        out["properties"] = {key: _json_schema(value) if isinstance(value, dict) else value
                             for key, value in out["properties"].items()}
    if isinstance(out.get("items"), dict):
        out["items"] = _json_schema(out["items"])
    return out


def _parameters(function: dict[str, Any], place: str) -> dict[str, Any]:
    parameters = function.get("parameters")
    if not isinstance(parameters, dict) or not isinstance(parameters.get("properties", {}),
                                                           dict):
        raise BFCLDataError(f"{place}: function `{function.get('name')}` has no `parameters` "
                            "mapping with `properties`")
    schema = _json_schema(parameters)
    schema["type"] = "object"
    return schema


def _options(value: Any) -> list[Any]:
    return value if isinstance(value, list) else [value]


def _matcher(options: list[Any], schema: dict[str, Any], required: bool = False
             ) -> dict[str, Any]:
    """A parameter's possible answers as a ``one_of`` matcher (``""`` means it may be left
    out, unless the function requires it: BFCL checks required parameters first)."""
    values = [_expected_value(option, schema) for option in options if option != ""]
    matcher: dict[str, Any] = {"one_of": values or [""]}
    if "" in options and not required:
        matcher["optional"] = True
    matcher["loose"] = True
    return matcher


def _expected_value(value: Any, schema: dict[str, Any]) -> Any:
    """One possible answer with BFCL's type rules: a float parameter's integer answer a float;
    a dict's keys (also in a list of dicts) each a matcher of their own possible answers."""
    kind = schema.get("type")
    if kind == "float" and isinstance(value, int) and not isinstance(value, bool):
        return float(value)
    if kind == "dict" and isinstance(value, dict):
        return _dict_matchers(value, schema)
    items = schema.get("items")
    if (kind in ("array", "tuple") and isinstance(items, dict) and items.get("type") == "dict"
            and isinstance(value, list)):
        return [_dict_matchers(item, items) if isinstance(item, dict) else item
                for item in value]
    return value


def _dict_matchers(value: dict[str, Any], schema: dict[str, Any]) -> dict[str, Any]:
    properties = schema.get("properties") or {}
    return {key: _matcher(_options(options), properties.get(key) or {})
            for key, options in value.items()}


def _first(options: list[Any]) -> Any:
    """The reference value of a parameter: its first possible answer that is not ``""``,
    preferring one with no ``$<digit>`` in it (a trajectory reads ``$1`` as call 1's output)."""
    given = [option for option in options if option != ""]
    value = next((option for option in given if not _REF_LIKE.search(json.dumps(option))),
                 given[0] if given else None)
    if isinstance(value, dict):
        return {key: _first(_options(inner)) for key, inner in value.items()
                if _first(_options(inner)) is not None}
    if isinstance(value, list) and value and all(isinstance(item, dict) for item in value):
        return [{key: _first(_options(inner)) for key, inner in item.items()
                 if _first(_options(inner)) is not None} for item in value]
    return value


def _answer_calls(case: Case, functions: dict[str, dict[str, Any]]
                  ) -> list[tuple[str, dict[str, Any], dict[str, Any]]]:
    """Each possible-answer call: the tool name, its expected args, its reference args."""
    calls = []
    for entry in case.answers or ():
        if not isinstance(entry, dict) or len(entry) != 1:
            raise BFCLDataError(f"{case.place}: a possible answer is one mapping of a function "
                                f"name to its parameters, got {json.dumps(entry)[:80]}")
        (name, params), = entry.items()
        if name not in functions:
            raise BFCLDataError(f"{case.place}: the possible answer calls `{name}`, which is "
                                f"not one of the case's functions ({', '.join(functions)})")
        if not isinstance(params, dict):
            raise BFCLDataError(f"{case.place}: the parameters of `{name}` in the possible "
                                "answer are not a mapping")
        parameters = functions[name].get("parameters") or {}
        properties = parameters.get("properties") or {}
        required = set(parameters.get("required") or ())
        # BFCL fails a parameter the function does not have, whatever the answer lists: one
        # it lists as optional ("") is left out
        params = {key: options for key, options in params.items()
                  if key in properties or "" not in _options(options)}
        expected = {key: _matcher(_options(options), properties.get(key) or {}, key in required)
                    for key, options in params.items()}
        reference = {key: value for key, options in params.items()
                     if (value := _first(_options(options))) is not None}
        calls.append((tool_name(name), expected, reference))
    return calls


def scenario_data(case: Case) -> dict[str, Any]:
    """The scenario file of ``case`` as plain data."""
    functions: dict[str, dict[str, Any]] = {}
    for function in case.functions:
        name = function.get("name") if isinstance(function, dict) else None
        if not isinstance(name, str) or not tool_name(name).isidentifier():
            raise BFCLDataError(f"{case.place}: a function needs a `name` of letters, digits, "
                                f"'_' and '.', got {name!r}")
        functions[name] = function
    tools = [{"ref": "agentkit.suites.bfcl:stand_in", "name": tool_name(name),
              "description": str(function.get("description") or tool_name(name)),
              "parameters": _parameters(function, case.place)}
             for name, function in functions.items()]
    *earlier, last = case.messages
    if not isinstance(last, dict) or last.get("role") != "user":
        raise BFCLDataError(f"{case.place}: the question's last message is not the user's")
    calls = _answer_calls(case, functions)
    trajectory: list[dict[str, Any]] = [{"call": name, "args": reference}
                                        for name, _, reference in calls]
    if len(trajectory) > 1:
        trajectory = [{"parallel": trajectory}]
    trajectory.append({"answer": _ANSWER if calls else _NO_CALL_ANSWER})
    data: dict[str, Any] = {
        "format": 1,
        "name": case.id,
        "description": f"BFCL v4 {case.category}: {short_text(str(last.get('content', '')))}",
        "tags": ["bfcl", case.category],
        "tools": tools,
    }
    if earlier:
        data["history"] = [{"role": m.get("role"), "content": str(m.get("content", ""))}
                           for m in earlier]
    data["turns"] = [{"user": str(last.get("content", ""))}]
    data["trajectory"] = trajectory
    data["expect"] = {
        "answer": {"contains": ""},  # BFCL scores the calls, not the words around them
        "tool_calls": {"match": "unordered", "args": "exact",
                       "calls": [{"name": name, "args": expected}
                                 for name, expected, _ in calls]},
    }
    return data


def scenario_text(case: Case) -> str:
    """The scenario file of ``case``, in the YAML every scenario writer of agentkit writes
    (:func:`agentkit.recording.dump_yaml`: keys in order, a text of several lines as a ``|``
    block)."""
    return dump_yaml(scenario_data(case))


def short_text(text: str, limit: int = 100) -> str:
    text = " ".join(text.split())
    return text if len(text) <= limit else text[:limit - 3] + "..."


def write_suite(out: Path, categories: Sequence[str], data: str | Path | None = None,
                limit: int | None = None) -> dict[str, int]:
    """Write the scenarios of ``categories`` under ``out/<category>/<id>.yaml`` (the first
    ``limit`` of each); returns how many per category."""
    folder = data_folder(data)
    written: dict[str, int] = {}
    for category in categories:
        count = 0
        for case in read_cases(folder, category):
            if limit is not None and count >= limit:
                break
            atomic_write_text(out / category / f"{_file_stem(case)}.yaml", scenario_text(case))
            count += 1
        written[category] = count
    return written


def _file_stem(case: Case) -> str:
    if not re.fullmatch(r"[A-Za-z0-9_.-]+", case.id):
        raise BFCLDataError(f"{case.place}: case id {case.id!r} is not a file name (letters, "
                            "digits, '_', '-', '.')")
    return case.id


def _categories(text: str) -> list[str]:
    names = [name.strip() for name in text.split(",") if name.strip()]
    unknown = [name for name in names if name not in CATEGORIES]
    if unknown or not names:
        raise argparse.ArgumentTypeError(
            f"unknown category {', '.join(unknown) or repr(text)}; choose from "
            f"{', '.join(CATEGORIES)}")
    return list(dict.fromkeys(names))


def _positive(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        value = 0
    if value < 1:
        raise argparse.ArgumentTypeError(f"expected a whole number of at least 1, got {text!r}")
    return value


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """The options of ``agentkit suite bfcl``."""
    parser.add_argument("--categories", type=_categories, default=list(CATEGORIES),
                        help=f"comma-separated (default: all: {','.join(CATEGORIES)})")
    parser.add_argument("--out", type=Path, default=Path("suites/bfcl"),
                        help="the folder to write the scenarios into, one subfolder per "
                             "category (default: suites/bfcl)")
    parser.add_argument("--data", default=None,
                        help="BFCL's data folder (default: the installed bfcl-eval "
                             "distribution's)")
    parser.add_argument("--limit", type=_positive, default=None,
                        help="only the first N cases of each category")


def command(args: argparse.Namespace, out: TextIO) -> int:
    """Write the scenarios and say how many, per category."""
    written = write_suite(args.out, args.categories, args.data, args.limit)
    parts = ", ".join(f"{category} {count}" for category, count in written.items())
    print(f"wrote {sum(written.values())} scenarios to {args.out} ({parts})", file=out)
    return 0
