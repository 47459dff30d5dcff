"""Images over the OpenAI backend: image blocks become ``image_url`` parts (files and bytes as
base64 data URLs with their MIME type, URLs as they are), also through the multimodal ReAct
agent in every chat mode."""

import base64
from typing import Any

import pytest

from agentkit.agent import MultimodalReActAgentWorker
from agentkit.core.sim import run_sync
from agentkit.llms import ChatMessage, ImageBlock, TextBlock
from agentkit.tools import FunctionTool

JPEG = b"\xff\xd8\xff\xe0 a tiny jpeg"
PNG = b"\x89PNG\r\n\x1a\n a tiny png"


def add(a: int, b: int) -> int:
    """Add two integers."""
    return a + b


def data_url(mime: str, content: bytes) -> str:
    return f"data:{mime};base64,{base64.b64encode(content).decode()}"


def image_parts(request: dict[str, Any], index: int = 1) -> list[dict[str, Any]]:
    return [p for p in request["messages"][index]["content"] if p["type"] == "image_url"]


def test_an_image_file_is_sent_as_a_data_url_with_the_files_mime_type(fake_openai, tmp_path):
    path = tmp_path / "photo.jpg"
    path.write_bytes(JPEG)
    server = fake_openai(["ok"])

    server.llm().chat([ChatMessage(blocks=[TextBlock(text="see"), ImageBlock(path=path)])])

    assert server.requests[0]["messages"][0]["content"] == [
        {"type": "text", "text": "see"},
        {"type": "image_url", "image_url": {"url": data_url("image/jpeg", JPEG)}}]


def test_a_missing_image_file_fails_before_any_request_naming_the_path(fake_openai, tmp_path):
    missing = tmp_path / "gone.png"
    server = fake_openai([])

    with pytest.raises(ValueError, match=rf"cannot read image file '{missing}': No such file"):
        server.llm().chat([ChatMessage(blocks=[ImageBlock(path=missing)])])

    assert server.calls == 0


@pytest.mark.parametrize("mode", ["chat", "achat", "stream_chat", "astream_chat"])
def test_the_multimodal_agent_sends_its_images_as_image_url_parts(fake_openai, mode):
    server = fake_openai(['Thought: 2 apples, 3 pears.\nAction: add\nAction Input: {"a": 2, "b": 3}',
                          "Thought: done.\nAnswer: 5 fruits"])
    agent = MultimodalReActAgentWorker.from_tools(
        [FunctionTool.from_defaults(add)], multi_modal_llm=server.llm()).as_agent()
    images = [ImageBlock(image=PNG), ImageBlock(url="https://example.com/fruit.jpg")]

    if mode == "chat":
        response = str(agent.chat("How many fruits?", image_docs=images))
    elif mode == "achat":
        response = str(run_sync(agent.achat("How many fruits?", image_docs=images)))
    elif mode == "stream_chat":
        response = "".join(agent.stream_chat("How many fruits?", image_docs=images).response_gen)
    else:
        async def streamed() -> str:
            stream = await agent.astream_chat("How many fruits?", image_docs=images)
            return "".join([delta async for delta in stream.async_response_gen()])
        response = run_sync(streamed())

    assert response == "5 fruits"
    expected = [{"type": "image_url", "image_url": {"url": data_url("image/png", PNG)}},
                {"type": "image_url", "image_url": {"url": "https://example.com/fruit.jpg"}}]
    assert [image_parts(request) for request in server.requests] == [expected, expected]
    assert server.requests[0]["messages"][1]["content"][0] == {"type": "text",
                                                              "text": "How many fruits?"}
