"""The commands CI runs, read from README.md so that the README cannot drift from CI.

Prints one command a line: the first two ```bash blocks under "## Quick start" (install and
report, then the tests) and the first under "## Development" (lint and type check). A block of
several lines is one command, its lines joined by spaces. A README without them is an error
naming the section and what CI expects there.

    python3 .ci/readme_commands.py [README.md]
"""

from __future__ import annotations

import re
import sys
from pathlib import Path

# (section title, how many ```bash blocks CI runs from it, what they are)
SECTIONS = (("Quick start", 2, "install+run, test"), ("Development", 1, "lint and type check"))

_BLOCK = re.compile(r"```bash\n(.*?)```", re.S)


def commands(readme: str) -> list[str]:
    """The commands of every section of SECTIONS, in order (ValueError naming what is missing)."""
    found: list[str] = []
    for title, count, what in SECTIONS:
        heading = f"\n## {title}\n"
        if heading not in f"\n{readme}":
            raise ValueError(f"no `## {title}` section (CI runs its ```bash blocks: {what})")
        section = f"\n{readme}".split(heading, 1)[1].split("\n## ", 1)[0]
        blocks = _BLOCK.findall(section)
        if len(blocks) < count:
            raise ValueError(f"the {title} section needs {count} ```bash block(s) ({what}), "
                             f"has {len(blocks)}")
        found += [" ".join(line.strip() for line in block.strip().splitlines())
                  for block in blocks[:count]]
    return found


def main(argv: list[str]) -> None:
    """Print the commands of the README given (README.md by default)."""
    path = Path(argv[1] if len(argv) > 1 else "README.md")
    try:
        print("\n".join(commands(path.read_text(encoding="utf-8"))))
    except ValueError as exc:
        sys.exit(f"{path}: {exc}")


if __name__ == "__main__":
    main(sys.argv)
