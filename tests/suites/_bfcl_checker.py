"""BFCL's own AST checker (``bfcl_eval.eval_checker.ast_eval.ast_checker``, from the installed
``bfcl-eval``, run unchanged) over answers read as JSON from stdin; prints one verdict per
answer as JSON. Run in a process of its own: BFCL's model registry, which imports every model
SDK BFCL supports, is stood in for by one OpenAI-style entry (function names with dots are
called with underscores, ``underscore_to_dot``) before the checker is imported.

stdin: ``[{"category": ..., "functions": [...], "ground_truth": [...], "answers": [[{name:
args}, ...], ...]}, ...]``; stdout: ``[[true, false, ...], ...]``."""

from __future__ import annotations

import json
import sys
import types
from dataclasses import dataclass
from typing import Any


@dataclass
class _OpenAIStyle:
    underscore_to_dot: bool = True


class _Registry(dict[str, Any]):
    def __missing__(self, key: str) -> _OpenAIStyle:
        return _OpenAIStyle()


def _install_registry() -> None:
    stand_in = types.ModuleType("bfcl_eval.constants.model_config")
    stand_in.MODEL_CONFIG_MAPPING = _Registry()  # type: ignore[attr-defined]
    sys.modules["bfcl_eval.constants.model_config"] = stand_in


def main() -> None:
    _install_registry()
    from bfcl_eval.constants.enums import Language
    from bfcl_eval.eval_checker.ast_eval.ast_checker import ast_checker

    verdicts = []
    for case in json.load(sys.stdin):
        stem = case["category"]
        row = []
        for answer in case["answers"]:
            if stem == "irrelevance":
                # BFCL's runner: an irrelevance case passes when no call could be decoded
                row.append(not answer)
                continue
            result = ast_checker(case["functions"], answer, case["ground_truth"],
                                 Language.PYTHON, stem, "stand-in-model")
            row.append(bool(result["valid"]))
        verdicts.append(row)
    json.dump(verdicts, sys.stdout)


if __name__ == "__main__":
    main()
