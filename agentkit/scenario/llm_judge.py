"""An old import path: these names moved to :mod:`agentkit.harness`
(``agentkit.harness._llm_judge``), as agentkit.scenario is the file format only; importing them
from here keeps working."""

from agentkit.harness._llm_judge import (
    CONSISTENT_SCORE,
    JUDGE_PROMPT,
    Judge,
    JudgeAnswerError,
    Judgement,
    JudgeVerdictEvent,
    Subject,
    Vote,
    disagreements,
    judge_messages,
    judged_entries,
    parse_verdict,
    verdicts,
    vote,
)

__all__ = ["JUDGE_PROMPT", "disagreements", "Judge", "judge_messages", "JudgeAnswerError",
           "judged_entries", "Judgement", "JudgeVerdictEvent", "parse_verdict", "Subject",
           "verdicts", "Vote", "vote", "CONSISTENT_SCORE"]
