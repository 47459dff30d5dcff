"""The multimodal ReAct system prompt: the ReAct header (same wire format, same markers) with
notes on the images and a fixed failure answer. Derived from the ReAct header so the two
cannot drift apart in format."""

from agentkit.agent.react.prompts import REACT_CHAT_SYSTEM_HEADER

__all__ = ["REACT_MM_CHAT_SYSTEM_HEADER", "MM_FAILURE_ANSWER"]

MM_FAILURE_ANSWER = "Sorry, I cannot answer your query."


def _replaced(text: str, old: str, new: str) -> str:
    if old not in text:  # the ReAct header changed: this prompt must be revisited
        raise AssertionError(f"the ReAct header no longer contains {old!r}")
    return text.replace(old, new)


REACT_MM_CHAT_SYSTEM_HEADER = _replaced(_replaced(
    REACT_CHAT_SYSTEM_HEADER,
    "calling tools when they help.\n",
    "calling tools when they help.\n\n"
    "## Images\n\n"
    "The user's messages may come with images. Look at them closely: what they show "
    "is part of the question. Describe only what is visible; if the images and the tools "
    "together cannot answer the question, say so rather than guess.\n"),
    "Thought: The tools cannot give me what I need.\n"
    "Answer: your answer, in the language of the question",
    "Thought: The images and the tools cannot give me what I need.\n"
    f"Answer: {MM_FAILURE_ANSWER}")
