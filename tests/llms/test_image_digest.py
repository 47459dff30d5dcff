"""Images as traces and cassettes keep them: MIME type, size and sha256, never the bytes."""

import base64
import hashlib
import json

import pytest

from agentkit.llms import ChatMessage, ImageBlock, TextBlock

PNG = b"\x89PNG\r\n\x1a\n a tiny picture"
SHA = hashlib.sha256(PNG).hexdigest()


def test_the_digest_of_image_bytes_is_mime_type_size_and_sha256():
    assert ImageBlock(image=PNG).digest() == {"block_type": "image", "image_mimetype": "image/png",
                                              "size": len(PNG), "sha256": SHA}


def test_the_digest_of_a_file_is_that_of_its_bytes_and_leaves_the_path_out(tmp_path):
    path = tmp_path / "pic.png"
    path.write_bytes(PNG)

    assert ImageBlock(path=path).digest() == ImageBlock(image=PNG).digest()


def test_the_digest_keeps_the_detail_level():
    assert ImageBlock(image=PNG, detail="low").digest()["detail"] == "low"


def test_the_digest_of_a_url_image_is_its_url_as_nothing_is_downloaded():
    assert ImageBlock(url="https://example.com/cat.jpg").digest() == {
        "block_type": "image", "image_mimetype": "image/jpeg",
        "url": "https://example.com/cat.jpg"}


def test_the_digest_of_a_missing_file_is_an_error_naming_the_path(tmp_path):
    missing = tmp_path / "gone.png"

    with pytest.raises(ValueError, match=rf"^cannot read image file '{missing}': No such file "
                                         "or directory$"):
        ImageBlock(path=missing).digest()


def test_reading_a_directory_as_an_image_is_an_error_naming_it(tmp_path):
    with pytest.raises(ValueError, match=rf"^cannot read image file '{tmp_path}': Is a "
                                         "directory$"):
        ImageBlock(path=tmp_path).resolve_image()


def test_to_dict_with_image_digests_keeps_text_and_digests_images_in_order():
    message = ChatMessage(blocks=[TextBlock(text="look"), ImageBlock(image=PNG)])

    assert message.to_dict(images="digest") == {
        "role": "user", "content": "look",
        "blocks": [{"block_type": "text", "text": "look"}, ImageBlock(image=PNG).digest()]}


def test_to_dict_with_image_digests_holds_no_image_bytes():
    message = ChatMessage(blocks=[TextBlock(text="look"), ImageBlock(image=PNG)])

    text = json.dumps(message.to_dict(images="digest"))

    assert base64.b64encode(PNG).decode() not in text and SHA in text


def test_to_dict_of_a_text_message_is_the_same_with_image_digests():
    message = ChatMessage(role="assistant", content="hi")

    assert message.to_dict(images="digest") == message.to_dict()


def test_an_empty_image_file_is_an_error_naming_it(tmp_path):
    empty = tmp_path / "blank.png"
    empty.write_bytes(b"")

    with pytest.raises(ValueError, match=rf"^image file '{empty}' is empty \(0 bytes\)$"):
        ImageBlock(path=empty).resolve_image()


def test_empty_image_bytes_are_an_error():
    with pytest.raises(ValueError, match=r"^the image is empty \(0 bytes\)$"):
        ImageBlock(image=b"", image_mimetype="image/png").digest()
