"""The multimodal ReAct worker: ReAct whose first user message carries the task's images."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any

from agentkit.agent.react.formatter import ReActChatFormatter
from agentkit.agent.react.output_parser import ReActOutputParser
from agentkit.agent.react.step import FailureHandler, ReActAgentWorker
from agentkit.agent.react_multimodal.prompts import REACT_MM_CHAT_SYSTEM_HEADER
from agentkit.agent.types import Task
from agentkit.instrumentation import CallbackManager
from agentkit.llms.base import LLM
from agentkit.llms.types import ChatMessage, ImageBlock, MessageRole, TextBlock
from agentkit.tools import BaseTool, ObjectRetriever

if TYPE_CHECKING:
    from agentkit.agent.react_multimodal.base import MultimodalReActAgent

__all__ = ["IMAGE_DOCS_KEY", "ChatMessageFn", "MultimodalReActAgentWorker",
           "generate_image_chat_message"]

IMAGE_DOCS_KEY = "image_docs"
"""The ``task.extra_state`` key holding the task's images (a list of :class:`ImageBlock`)."""

ChatMessageFn = Callable[..., ChatMessage]
"""``fn(prompt, role, image_documents) -> ChatMessage``: builds the first user message."""


def generate_image_chat_message(prompt: str, role: MessageRole | str,
                                image_documents: Sequence[ImageBlock]) -> ChatMessage:
    """The default first user message: the prompt as a text block, then one block per image.

    Backend-neutral (upstream's default built OpenAI-only content parts): every backend gets
    the blocks and maps them itself."""
    return ChatMessage(role=MessageRole(role), blocks=[TextBlock(text=prompt), *image_documents])


def _checked_images(task: Task) -> list[ImageBlock]:
    """The task's images, each a readable :class:`ImageBlock`; a clear error naming the bad
    entry (and its path) otherwise."""
    docs = task.extra_state.get(IMAGE_DOCS_KEY)
    if docs is None:
        raise ValueError("Image docs not found in task extra state.")
    if isinstance(docs, (str, bytes, ImageBlock)) or not isinstance(docs, Sequence):
        raise TypeError(f"extra_state[{IMAGE_DOCS_KEY!r}] must be a list of "
                        f"agentkit.llms.ImageBlock, got {type(docs).__name__}")
    for index, doc in enumerate(docs):
        if not isinstance(doc, ImageBlock):
            raise TypeError(f"{IMAGE_DOCS_KEY}[{index}] is a {type(doc).__name__}, not an "
                            "agentkit.llms.ImageBlock (wrap a file as ImageBlock(path=...))")
        if doc.image is None and doc.path is not None:
            try:
                doc.resolve_image()
            except ValueError as exc:
                raise ValueError(f"{IMAGE_DOCS_KEY}[{index}]: {exc}") from None
    return list(docs)


class MultimodalReActAgentWorker(ReActAgentWorker):
    """ReAct over a model that sees images: ``task.extra_state["image_docs"]`` (a list of
    :class:`~agentkit.llms.ImageBlock`) become blocks of the task's first user message, which
    is kept in memory with them. Without the key the first step raises ``ValueError("Image
    docs not found in task extra state.")``; a missing, unreadable or empty image file is a
    ``ValueError`` naming the entry and the path, raised before anything reaches memory.

    Fixes over LlamaIndex: any :class:`LLM` works (images are blocks each backend maps: OpenAI
    ``image_url`` parts, scripted mocks record them in ``.requests``), not only OpenAI's
    multimodal class; unknown tools, unparseable output and raising tools are observations as
    in ReAct (upstream crashed); ``from_tools`` keeps ``generate_chat_message_fn`` (upstream
    dropped it); streaming works as in ReAct (upstream raised "Stream step not implemented
    yet.").
    """

    def __init__(self, tools: Sequence[BaseTool], multi_modal_llm: LLM | None = None,
                 max_iterations: int = 10,
                 react_chat_formatter: ReActChatFormatter | None = None,
                 output_parser: ReActOutputParser | None = None,
                 callback_manager: CallbackManager | None = None, verbose: bool = False,
                 generate_chat_message_fn: ChatMessageFn | None = None,
                 tool_retriever: ObjectRetriever[BaseTool] | None = None,
                 handle_reasoning_failure_fn: FailureHandler | None = None,
                 llm: LLM | None = None) -> None:
        if multi_modal_llm is not None and llm is not None and multi_modal_llm is not llm:
            raise ValueError("give the model once: `multi_modal_llm` or `llm`, not two models")
        model = multi_modal_llm or llm
        if model is None:
            raise ValueError(f"{type(self).__name__} needs an `llm`")
        super().__init__(
            tools, llm=model,
            max_iterations=max_iterations,
            react_chat_formatter=react_chat_formatter or ReActChatFormatter.from_defaults(
                system_header=REACT_MM_CHAT_SYSTEM_HEADER),
            output_parser=output_parser, callback_manager=callback_manager, verbose=verbose,
            tool_retriever=tool_retriever, handle_reasoning_failure_fn=handle_reasoning_failure_fn)
        self._generate_chat_message_fn = generate_chat_message_fn or generate_image_chat_message

    @classmethod
    def from_tools(cls, tools: Sequence[BaseTool] | None = None,  # type: ignore[override]
                   multi_modal_llm: LLM | None = None, max_iterations: int = 10,
                   react_chat_formatter: ReActChatFormatter | None = None,
                   output_parser: ReActOutputParser | None = None, verbose: bool = False,
                   tool_retriever: ObjectRetriever[BaseTool] | None = None,
                   handle_reasoning_failure_fn: FailureHandler | None = None,
                   callback_manager: CallbackManager | None = None,
                   generate_chat_message_fn: ChatMessageFn | None = None,
                   llm: LLM | None = None, **kwargs: Any) -> MultimodalReActAgentWorker:
        """Build a worker over ``multi_modal_llm`` (or ``llm=``: any :class:`LLM`)."""
        if kwargs:
            raise TypeError(f"MultimodalReActAgentWorker.from_tools got unexpected arguments: "
                            f"{sorted(kwargs)}")
        return cls(list(tools or []), multi_modal_llm=multi_modal_llm, llm=llm,
                   max_iterations=max_iterations, react_chat_formatter=react_chat_formatter,
                   output_parser=output_parser, callback_manager=callback_manager,
                   verbose=verbose, generate_chat_message_fn=generate_chat_message_fn,
                   tool_retriever=tool_retriever,
                   handle_reasoning_failure_fn=handle_reasoning_failure_fn)

    @property
    def multi_modal_llm(self) -> LLM:
        return self._llm

    def as_agent(self, **kwargs: Any) -> MultimodalReActAgent:
        """A :class:`MultimodalReActAgent` over this worker (its chats take ``image_docs=``)."""
        from agentkit.agent.react_multimodal.base import MultimodalReActAgent

        return MultimodalReActAgent(self, **kwargs)

    def _user_message(self, task: Task, text: str) -> ChatMessage:
        """The first user message with the task's images, built by ``generate_chat_message_fn``."""
        images = _checked_images(task)
        message = self._generate_chat_message_fn(prompt=text, role=MessageRole.USER,
                                                 image_documents=images)
        if not isinstance(message, ChatMessage):
            raise TypeError(f"generate_chat_message_fn must return a ChatMessage, got "
                            f"{type(message).__name__}")
        return message
