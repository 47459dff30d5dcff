"""``keyword-judge``: the deterministic stand-in that recorded judges/refund_amount.cassette.yaml.
It reads a judge's request as a model would -- the rubric in the system message, the fenced
transcript -- and decides by keywords: the amount must be the lookup's output, a date is
"today" or "tomorrow" (it misses "by Friday", "on 3 March"), and on a rounded amount it wavers
(pass the first time it is asked, fail after)."""

from __future__ import annotations

import json
import re
from collections import Counter
from collections.abc import Sequence
from typing import Any

from agentkit.llms import ChatMessage
from agentkit.llms.mock import FunctionLLM

NAME = "keyword-judge"


def keyword_judge() -> FunctionLLM:
    """A fresh stand-in (its wavering counts the calls it was given)."""
    asked: Counter[str] = Counter()

    def answer(messages: Sequence[ChatMessage], info: Any) -> str:
        rubric = str(messages[0].content).rsplit("Rubric: ", 1)[1]
        text = str(messages[1].content)
        asked[rubric + text] += 1
        output = re.findall(r"returned: (.*)", text)[-1]
        said = re.findall(r"Assistant: (.*)", text)[-1]
        amount = re.search(r"\d+\.\d\d", output)
        has_amount = amount is not None and amount.group(0) in said
        dated = re.search(r"\b(today|tomorrow)\b", said, re.IGNORECASE) is not None
        rounded = re.search(r"\babout \d", said) is not None
        if rubric.startswith("states the refund amount"):
            verdict, why = has_amount, "the amount is the lookup's" if has_amount else "no amount"
        elif rubric.startswith("promises no date"):
            verdict, why = not dated, "a date is promised" if dated else "no date is promised"
        else:
            verdict = has_amount and not dated
            why = "amount and no date" if verdict else "amount missing or a date promised"
            if rounded:
                verdict, why = asked[rubric + text] == 1, "the amount is rounded"
        return json.dumps({"verdict": "pass" if verdict else "fail", "reason": why,
                           "score": 1.0 if verdict else 0.0})

    return FunctionLLM(function=answer, name=NAME, function_calling=False)
