"""Messages, responses and metadata exchanged with an LLM (the shape of ``llama_index.core.llms``).

A :class:`ChatMessage` holds a list of content blocks (text and images); ``content`` is the
text of its text blocks. Tool calls requested by the model live in
``additional_kwargs["tool_calls"]`` as :class:`ToolSelection` objects, and a tool result
message carries ``additional_kwargs["tool_call_id"]``.
"""

from __future__ import annotations

import base64
import functools
import hashlib
import weakref
from collections.abc import Sequence
from enum import Enum
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any, Literal

from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    field_serializer,
    field_validator,
    model_validator,
)

from agentkit.core.models import Model

__all__ = [
    "MessageRole",
    "TextBlock",
    "ImageBlock",
    "ContentBlock",
    "ToolSelection",
    "ChatMessage",
    "text_message",
    "fix_message",
    "fixed_memo",
    "Usage",
    "ChatResponse",
    "CompletionResponse",
    "LLMMetadata",
    "model_metadata",
    "ToolOutput",
]


class MessageRole(str, Enum):
    SYSTEM = "system"
    USER = "user"
    ASSISTANT = "assistant"
    TOOL = "tool"

    def __str__(self) -> str:
        return self.value


class TextBlock(Model):
    block_type: Literal["text"] = "text"
    text: str


_MAGIC = ((b"\x89PNG", "image/png"), (b"\xff\xd8\xff", "image/jpeg"), (b"GIF8", "image/gif"),
          (b"RIFF", "image/webp"))


class ImageBlock(Model):
    """An image given as raw bytes, a local path or a URL, with its MIME type."""

    block_type: Literal["image"] = "image"
    image: bytes | None = None
    path: Path | None = None
    url: str | None = None
    image_mimetype: str | None = None
    detail: str | None = None

    @field_validator("image", mode="before")
    @classmethod
    def _decode_base64(cls, value: Any) -> Any:
        return base64.b64decode(value, validate=True) if isinstance(value, str) else value

    @field_serializer("image", when_used="json")
    def _encode_base64(self, value: bytes | None) -> str | None:
        return None if value is None else base64.b64encode(value).decode("ascii")

    @model_validator(mode="after")
    def _check_source(self) -> ImageBlock:
        if self.image is None and self.path is None and self.url is None:
            raise ValueError("an ImageBlock needs one of `image` (bytes), `path` or `url`")
        if self.image_mimetype is None:
            self.image_mimetype = self._guess_mimetype()
        return self

    def _guess_mimetype(self) -> str | None:
        if self.image is not None:
            for magic, mime in _MAGIC:
                if self.image.startswith(magic):
                    return mime
        name = str(self.path) if self.path is not None else (self.url or "")
        import mimetypes  # here, not at import: only an image without a known type needs it

        return mimetypes.guess_type(name)[0]

    def resolve_image(self) -> bytes:
        """The image bytes (read from ``path`` if needed). URLs are not fetched.

        A missing, unreadable or empty file (an empty image, too) is a ``ValueError`` naming
        the path, raised here rather than from deep inside a backend or a trace writer."""
        if self.image is not None:
            if not self.image:
                raise ValueError("the image is empty (0 bytes)")
            return self.image
        if self.path is not None:
            try:
                content = self.path.read_bytes()
            except OSError as exc:
                raise ValueError(f"cannot read image file {str(self.path)!r}: "
                                 f"{exc.strerror or exc}") from None
            if not content:
                raise ValueError(f"image file {str(self.path)!r} is empty (0 bytes)")
            return content
        raise ValueError(f"image {self.url!r} is a URL; agentkit does not download images")

    def digest(self) -> dict[str, Any]:
        """The image as traces, snapshots and cassettes keep it: MIME type, size and sha256 of
        its bytes, never the bytes (nor a machine-specific path). A URL-only image is kept as
        its URL, which agentkit does not download."""
        data: dict[str, Any] = {"block_type": self.block_type, "image_mimetype": self.image_mimetype}
        if self.image is None and self.path is None:
            data["url"] = self.url
        else:
            content = self.resolve_image()
            data.update(size=len(content), sha256=hashlib.sha256(content).hexdigest())
        if self.detail is not None:
            data["detail"] = self.detail
        return data

    def as_url(self) -> str:
        """A URL a model API accepts: the URL itself, or a base64 ``data:`` URL."""
        if self.url is not None and self.image is None and self.path is None:
            return self.url
        data = base64.b64encode(self.resolve_image()).decode("ascii")
        return f"data:{self.image_mimetype or 'image/png'};base64,{data}"


ContentBlock = Annotated[TextBlock | ImageBlock, Field(discriminator="block_type")]


class ToolSelection(Model):
    """A tool call requested by the model.

    ``arguments_error`` is set (and ``tool_kwargs`` left empty) when the model's arguments
    could not be decoded; agents turn it into an error observation instead of crashing.
    """

    tool_id: str
    tool_name: str
    tool_kwargs: dict[str, Any] = Field(default_factory=dict)
    arguments_error: str | None = None


def _block_text(block: Any) -> str | None:
    """The text of a text block given as an object or a dict; None for other blocks."""
    if isinstance(block, TextBlock):
        return block.text
    if isinstance(block, dict) and block.get("block_type", "text") == "text":
        return block.get("text")
    return None


class ChatMessage(Model):
    """One chat message. ``ChatMessage(role, content)`` and ``ChatMessage(blocks=[...])`` both work."""

    role: MessageRole = MessageRole.USER
    additional_kwargs: dict[str, Any] = Field(default_factory=dict)
    blocks: list[ContentBlock] = Field(default_factory=list)

    if TYPE_CHECKING:
        # The constructor type checkers see. `content` is not a field (the validator below
        # turns it into a text block), so the signature derived from the fields would reject
        # it. A declaration only: a real __init__ forwarding to pydantic's would add a Python
        # call to every construction (+17 % measured).
        def __init__(self, *, role: MessageRole | str = ..., content: str | None = ...,
                     blocks: Sequence[TextBlock | ImageBlock] = ...,
                     additional_kwargs: dict[str, Any] = ...) -> None: ...

    @model_validator(mode="before")
    @classmethod
    def _content_to_blocks(cls, data: Any) -> Any:
        if isinstance(data, dict) and "content" in data:
            data = dict(data)
            content = data.pop("content")
            if content is not None and data.get("blocks"):
                texts = [_block_text(b) for b in data["blocks"]]
                if "\n".join(t for t in texts if t is not None) != content:
                    raise ValueError("give a ChatMessage either `content` or `blocks`, not both")
            elif content is not None:  # validated into a TextBlock (cheaper than building one here)
                data["blocks"] = [{"block_type": "text",
                                   "text": content if isinstance(content, str) else str(content)}]
        return data

    @field_validator("additional_kwargs")
    @classmethod
    def _revive_tool_calls(cls, value: dict[str, Any]) -> dict[str, Any]:
        """``tool_calls`` holds ToolSelections (dicts, as saved, are revived); anything else
        is a validation error here, not a crash where the calls are read."""
        calls = value.get("tool_calls")
        if calls is None:
            return value
        if not isinstance(calls, (list, tuple)):
            raise ValueError(f"additional_kwargs.tool_calls must be a list of tool calls, got "
                             f"{type(calls).__name__}")
        revived = []
        for index, call in enumerate(calls):
            if isinstance(call, dict):
                call = ToolSelection.model_validate(call)
            elif not isinstance(call, ToolSelection):
                raise ValueError(f"additional_kwargs.tool_calls[{index}] must be a tool call "
                                 f"(tool_id, tool_name, tool_kwargs), got {type(call).__name__}")
            revived.append(call)
        return {**value, "tool_calls": revived}

    @property
    def content(self) -> str | None:
        blocks = self.blocks
        if len(blocks) == 1 and type(blocks[0]) is TextBlock:  # the usual message: one text
            return blocks[0].text
        texts = [b.text for b in blocks if isinstance(b, TextBlock)]
        if not texts:
            return None
        return texts[0] if len(texts) == 1 else "\n".join(texts)

    @content.setter
    def content(self, value: str | None) -> None:
        images = [b for b in self.blocks if not isinstance(b, TextBlock)]
        self.blocks = ([TextBlock(text=value)] if value is not None else []) + images

    @property
    def tool_calls(self) -> list[ToolSelection]:
        return list(self.additional_kwargs.get("tool_calls") or [])

    @classmethod
    def from_str(cls, content: str, role: MessageRole | str = MessageRole.USER,
                 **kwargs: Any) -> ChatMessage:
        return cls(role=role, content=content, **kwargs)

    def to_dict(self, *, images: Literal["inline", "digest"] = "inline") -> dict[str, Any]:
        """A plain, JSON-ready dict with ``content`` in place of text-only blocks.

        ``images="inline"`` keeps image blocks whole (base64 bytes: the dict round-trips
        through the constructor); ``"digest"`` keeps each as :meth:`ImageBlock.digest`, which
        is how traces and cassettes record them. A fixed message's digest form is worked out
        once (:func:`fix_message`; the request's hash and the trace both read it): each call
        gets its own dict, its values shared -- read-only."""
        if images == "digest":
            memo = fixed_memo(self)
            if memo is not None:
                found = memo.get("digest")
                if found is None:
                    found = memo["digest"] = self._to_dict("digest")
                return dict(found)
        return self._to_dict(images)

    def _to_dict(self, images: Literal["inline", "digest"]) -> dict[str, Any]:
        blocks = self.blocks
        # the usual message, one text block, read without the property and the scan; the
        # role's value without the enum's descriptor (two Python calls)
        if len(blocks) == 1 and type(blocks[0]) is TextBlock:
            data: dict[str, Any] = {"role": self.role._value_, "content": blocks[0].text}
        else:
            data = {"role": self.role._value_, "content": self.content}
            if any(isinstance(b, ImageBlock) for b in blocks):
                data["blocks"] = [b.digest() if images == "digest" and isinstance(b, ImageBlock)
                                  else b.model_dump(mode="json") for b in blocks]
        if self.additional_kwargs:
            data["additional_kwargs"] = _jsonable(self.additional_kwargs)
        return data

    def __str__(self) -> str:
        return f"{self.role.value}: {self.content}"


def text_message(role: MessageRole, text: str,
                 additional_kwargs: dict[str, Any] | None = None) -> ChatMessage:
    """``ChatMessage(role=role, content=text, additional_kwargs=...)`` for a ``str`` text: the
    same message, validated from the text block ``content`` becomes, so the validator has
    nothing to convert (agents build a few per step; a sixth cheaper each)."""
    data: dict[str, Any] = {"role": role, "blocks": [{"block_type": "text", "text": text}]}
    if additional_kwargs is not None:
        data["additional_kwargs"] = additional_kwargs
    return ChatMessage.__pydantic_validator__.validate_python(data)  # type: ignore[no-any-return]


def _jsonable(value: Any) -> Any:
    if isinstance(value, BaseModel):
        return value.model_dump(mode="json")
    if isinstance(value, dict):
        return {str(k): _jsonable(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_jsonable(v) for v in value]
    if isinstance(value, (str, int, float, bool)) or value is None:
        return value
    return str(value)


_FIXED: dict[int, tuple[weakref.ReferenceType[ChatMessage], dict[str, Any]]] = {}
"""The fixed messages alive, by id: each one's memo (:func:`fixed_memo`)."""


def fix_message(message: ChatMessage) -> None:
    """Declare that nothing changes ``message`` any more, so what is worked out from it (its
    canonical form for a cassette's request hash...) may be kept with it (:func:`fixed_memo`).
    The bridge fixes every message it reads: a client resends its whole conversation with
    each request, and a message sent again is the first one's object (read-only from then
    on: nothing in agentkit changes a request's messages)."""
    key = id(message)
    if key not in _FIXED:
        # the entry goes when the message does, before its id can be another object's
        _FIXED[key] = (weakref.ref(message, functools.partial(_unfix, key)), {})


def _unfix(key: int, _: object) -> None:
    _FIXED.pop(key, None)


def fixed_memo(message: ChatMessage) -> dict[str, Any] | None:
    """Where what is worked out from a fixed message (:func:`fix_message`) is kept, by a name
    of the caller's; None for a message that may still change."""
    entry = _FIXED.get(id(message))
    return entry[1] if entry is not None else None


class Usage(Model):
    prompt_tokens: int = 0
    completion_tokens: int = 0
    total_tokens: int = 0

    @model_validator(mode="after")
    def _fill_total(self) -> Usage:
        if not self.total_tokens:
            self.total_tokens = self.prompt_tokens + self.completion_tokens
        return self

    def __add__(self, other: Usage) -> Usage:
        return Usage(prompt_tokens=self.prompt_tokens + other.prompt_tokens,
                     completion_tokens=self.completion_tokens + other.completion_tokens,
                     total_tokens=self.total_tokens + other.total_tokens)


class ChatResponse(Model):
    """A chat reply; in a stream, ``message`` is cumulative and ``delta`` the new text."""

    model_config = ConfigDict(arbitrary_types_allowed=True)

    message: ChatMessage
    raw: Any = None
    delta: str | None = None
    usage: Usage | None = None
    additional_kwargs: dict[str, Any] = Field(default_factory=dict)

    def __str__(self) -> str:
        return str(self.message)


class CompletionResponse(Model):
    model_config = ConfigDict(arbitrary_types_allowed=True)

    text: str
    raw: Any = None
    delta: str | None = None
    usage: Usage | None = None
    additional_kwargs: dict[str, Any] = Field(default_factory=dict)

    def __str__(self) -> str:
        return self.text


class LLMMetadata(Model):
    context_window: int = 3900
    num_output: int = 256
    is_chat_model: bool = False
    is_function_calling_model: bool = False
    model_name: str = "unknown"
    system_role: MessageRole = MessageRole.SYSTEM


@functools.lru_cache(maxsize=256)
def model_metadata(model_name: str, *, function_calling: bool,
                   context_window: int = 3900) -> LLMMetadata:
    """The metadata of a chat model that says no more of itself than its name, whether it
    calls tools and its context window (a replayed cassette, a scripted model), built once
    per model and shared: the LLM call path reads a model's metadata on every call. Treat it
    as read-only."""
    return LLMMetadata(model_name=model_name, is_chat_model=True,
                       is_function_calling_model=function_calling,
                       context_window=context_window)


class ToolOutput(Model):
    """The result of one tool call; ``str(output)`` is its content."""

    model_config = ConfigDict(arbitrary_types_allowed=True)

    content: str
    tool_name: str
    raw_input: dict[str, Any] = Field(default_factory=dict)
    raw_output: Any = None
    is_error: bool = False

    def __str__(self) -> str:
        return self.content
