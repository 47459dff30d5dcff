"""The default tokenizer: deterministic, offline, no model download.

Words, numbers and punctuation marks are tokens; a word longer than four characters counts one
token per four characters, which tracks BPE tokenizers closely enough for token budgets.
"""

from __future__ import annotations

import functools
import re

__all__ = ["default_tokenizer", "count_tokens"]

_PIECES = re.compile(r"\w{1,4}|[^\w\s]")


def default_tokenizer(text: str) -> list[str]:
    """Split ``text`` into token strings."""
    return _PIECES.findall(text)


@functools.lru_cache(maxsize=8192)
def count_tokens(text: str) -> int:
    """How many tokens ``text`` has (memoised: agents re-send the same prompts every call)."""
    return len(_PIECES.findall(text))
