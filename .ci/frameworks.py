"""The frameworks lane's two installs, read from pyproject.toml's framework extras so that they
cannot drift from them. ``oldest``: pip constraints pinning each framework distribution to the
oldest release its range accepts (the lane's first run); ``newest``: the requirements to
``pip install -U`` for the newest release of each (its second run)."""

import re
import sys
import tomllib
from pathlib import Path

EXTRAS = ("llama-index", "pydantic-ai", "openai-agents", "langgraph")

extras = tomllib.loads((Path(__file__).resolve().parents[1] / "pyproject.toml").read_text(
    encoding="utf-8"))["project"]["optional-dependencies"]
specs = [spec for extra in EXTRAS for spec in extras[extra]]
if sys.argv[1:] == ["oldest"]:
    for spec in specs:
        name, lowest = re.fullmatch(r"([\w.-]+)(?:\[[\w,]+\])?>=([\w.]+),<[\w.]+", spec).groups()
        print(f"{name}=={lowest}")  # constraints take no [extras]
elif sys.argv[1:] == ["newest"]:
    print("\n".join(re.match(r"[\w.-]+(?:\[[\w,]+\])?", spec).group() for spec in specs))
else:
    sys.exit("usage: .ci/frameworks.py oldest|newest")
