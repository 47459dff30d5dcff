"""Images in scenarios: turn images checked at load, sent to agent types that take them, kept
in traces and cassettes as MIME type, size and sha256, replayed by that hash."""

from __future__ import annotations

import base64
import hashlib
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
import yaml

from agentkit.agent import FunctionCallingAgent
from agentkit.harness._record import record_scenario
from agentkit.llms.cassette import CassetteMissError
from agentkit.llms.mock import ScriptedLLM
from agentkit.scenario import (
    AGENT_TYPES,
    ScenarioError,
    load_scenario,
    register_agent_type,
    run_scenario,
)
from agentkit.scenario._images import turn_images
from agentkit.trace._read import expand_trace

PNG = b"\x89PNG\r\n\x1a\n a picture of a dog"
OTHER_PNG = b"\x89PNG\r\n\x1a\n a picture of a cat"  # same size, other bytes
SHA = hashlib.sha256(PNG).hexdigest()
A_DOG = "Thought: I see a dog.\\nAnswer: a dog"

PICTURE = f"""\
format: 1
name: pic
tools:
  - ref: mocks.tools:add
turns:
  - user: What is in the picture?
    images: [images/dog.png]
agents:
  react_multimodal:
    script:
      - "{A_DOG}"
"""


@pytest.fixture
def picture(write_file: Callable[[str, str], Path], tmp_path: Path) -> Path:
    """A scenario file with one image turn, its image beside it in ``images/``."""
    (tmp_path / "images").mkdir()
    (tmp_path / "images" / "dog.png").write_bytes(PNG)
    return write_file("pic.yaml", PICTURE)


def _error(path: Path) -> str:
    with pytest.raises(ScenarioError) as info:
        load_scenario(path)
    return str(info.value)


# ----------------------------------------------------------------- loading
def test_turn_images_are_paths_relative_to_the_scenario_file(picture, tmp_path):
    scenario = load_scenario(picture)

    [image] = turn_images(scenario, scenario.turns[0])

    assert image.path == tmp_path / "images" / "dog.png" and image.resolve_image() == PNG


def test_a_turn_has_no_images_by_default(write_file):
    scenario = load_scenario(write_file("s.yaml", PICTURE.replace(
        "    images: [images/dog.png]\n", "")))

    assert scenario.turns[0].images == []


def test_a_missing_image_file_is_a_load_error_naming_the_line_and_field(write_file, tmp_path):
    path = write_file("s.yaml", PICTURE)

    assert _error(path) == (f"{path}:7: turns.0.images.0: no image file `images/dog.png` "
                            f"({tmp_path / 'images' / 'dog.png'} does not exist; image paths are "
                            "relative to the scenario file)")


def test_an_image_path_that_is_a_directory_is_a_load_error(write_file, tmp_path):
    (tmp_path / "images" / "dog.png").mkdir(parents=True)
    path = write_file("s.yaml", PICTURE)

    assert "turns.0.images.0: no image file `images/dog.png` (" in _error(path)
    assert "dog.png is a directory;" in _error(path)


def test_an_empty_image_file_is_a_load_error(picture, tmp_path):
    (tmp_path / "images" / "dog.png").write_bytes(b"")

    assert _error(picture) == (f"{picture}:7: turns.0.images.0: image file `images/dog.png` "
                               f"({tmp_path / 'images' / 'dog.png'}) is empty (0 bytes)")


def test_a_file_that_is_not_an_image_by_its_name_is_a_load_error(write_file, tmp_path):
    (tmp_path / "notes.txt").write_text("hello")
    path = write_file("s.yaml", PICTURE.replace("images/dog.png", "notes.txt"))

    assert _error(path) == (f"{path}:7: turns.0.images.0: `notes.txt` is not an image file by "
                            "its name (type text/plain); use .png, .jpg, .gif or .webp")


def test_an_unreadable_image_file_is_a_load_error(picture, monkeypatch):
    real_open = Path.open

    def refuse_images(self: Path, *args: Any, **kwargs: Any) -> Any:
        if self.suffix == ".png":
            raise PermissionError(13, "Permission denied")
        return real_open(self, *args, **kwargs)

    monkeypatch.setattr(Path, "open", refuse_images)

    assert _error(picture).endswith("turns.0.images.0: cannot read image file `images/dog.png` "
                                    f"({picture.parent / 'images' / 'dog.png'}): Permission "
                                    "denied")


def test_every_broken_image_is_reported_on_its_own_line(write_file):
    path = write_file("s.yaml", PICTURE.replace(
        "    images: [images/dog.png]\n",
        "    images:\n      - a.png\n  - user: again\n    images:\n      - b.png\n"))

    lines = _error(path).splitlines()

    assert [line.split(": ", 2)[:2] for line in lines] == [
        [f"{path}:8", "turns.0.images.0"], [f"{path}:11", "turns.1.images.0"]]


def test_an_image_path_with_a_nul_character_is_a_load_error(write_file):
    path = write_file("s.yaml", PICTURE.replace("[images/dog.png]", '["dog\\0.png"]'))

    assert _error(path) == (f"{path}:7: turns.0.images.0: image path 'dog\\x00.png' holds a NUL "
                            "character; write the file's path")


def test_images_that_are_not_a_list_are_a_load_error(write_file):
    path = write_file("s.yaml", PICTURE.replace("[images/dog.png]", "{file: dog.png}"))

    assert _error(path).startswith(f"{path}:7: turns.0.images: expected a list")


# ----------------------------------------------------------------- where images may be
def _outside(tmp_path: Path) -> Path:
    """A real image file outside the project (``tmp_path / "project"``)."""
    (tmp_path / "elsewhere").mkdir()
    (tmp_path / "elsewhere" / "cat.png").write_bytes(OTHER_PNG)
    return tmp_path / "elsewhere" / "cat.png"


def _in_project(write_file: Callable[[str, str], Path], image: str,
                pyproject: str = "") -> Path:
    write_file("project/pyproject.toml", pyproject)
    return write_file("project/scenarios/pic.yaml", PICTURE.replace("images/dog.png", image))


@pytest.mark.parametrize("image", ["../../elsewhere/cat.png", "{outside}"],
                         ids=["dot-dot", "absolute"])
def test_an_image_outside_the_project_is_a_load_error(write_file, tmp_path, image):
    outside = _outside(tmp_path)
    path = _in_project(write_file, image.format(outside=outside))

    assert _error(path) == (
        f"{path}:7: turns.0.images.0: image `{image.format(outside=outside)}` is outside the "
        f"project ({outside} is not in {tmp_path / 'project'}); keep images in the project, or "
        "list their folder in `image_folders` under [tool.agentkit] in pyproject.toml")


def test_an_image_symlink_leading_outside_the_project_is_a_load_error(write_file, tmp_path):
    outside = _outside(tmp_path)
    (tmp_path / "project" / "scenarios" / "images").mkdir(parents=True)
    (tmp_path / "project" / "scenarios" / "images" / "dog.png").symlink_to(outside)
    path = _in_project(write_file, "images/dog.png")

    assert f"image `images/dog.png` is outside the project ({outside} is not in " in _error(path)


def test_an_image_anywhere_in_the_project_loads_also_up_from_the_scenario(write_file,
                                                                          tmp_path):
    (tmp_path / "project" / "images").mkdir(parents=True)
    (tmp_path / "project" / "images" / "dog.png").write_bytes(PNG)
    (tmp_path / "project" / "scenarios").mkdir()
    (tmp_path / "project" / "scenarios" / "dog.png").symlink_to(Path("../images/dog.png"))

    for image in ("../images/dog.png", "dog.png"):
        scenario = load_scenario(_in_project(write_file, image))
        assert turn_images(scenario, scenario.turns[0])[0].resolve_image() == PNG


def test_without_a_pyproject_the_project_is_the_scenarios_folder(write_file, tmp_path):
    (tmp_path / "images").mkdir()
    (tmp_path / "images" / "dog.png").write_bytes(PNG)
    path = write_file("scenarios/pic.yaml", PICTURE.replace("images/dog.png",
                                                             "../images/dog.png"))

    assert "is outside the project (" in _error(path)
    assert f"is not in {tmp_path / 'scenarios'})" in _error(path)


def test_a_malformed_project_table_is_an_error_at_the_first_image(write_file, tmp_path):
    path = _in_project(write_file, "dog.png", "[tool.agentkit]\nimage_folder = ['x']\n")

    assert _error(path).startswith(f"{path}:7: turns.0.images: cannot tell where its images may "
                                   f"be: {tmp_path / 'project' / 'pyproject.toml'}:2: ")


def test_a_folder_listed_in_image_folders_may_hold_images(write_file, tmp_path):
    outside = _outside(tmp_path)
    path = _in_project(write_file, str(outside),
                       pyproject='[tool.agentkit]\nimage_folders = ["../elsewhere"]\n')

    scenario = load_scenario(path)

    assert turn_images(scenario, scenario.turns[0])[0].resolve_image() == OTHER_PNG


# ----------------------------------------------------------------- running
def test_turn_images_reach_the_model_on_the_user_message(picture):
    llm = ScriptedLLM(["Thought: I see a dog.\nAnswer: a dog"])

    result = run_scenario(picture, llm=llm)

    assert result.passed, result.problems
    text, image = llm.requests[0].messages[1].blocks
    assert text.text == "What is in the picture?" and image.resolve_image() == PNG


def test_turn_images_reach_the_openai_backend_as_image_url_parts(picture):
    path = picture.with_name("openai.yaml")
    path.write_text(PICTURE.replace("    script:", "    backend: openai\n    script:"))

    result = run_scenario(path)

    [server] = result.doubles  # the fake endpoint serving the script
    [request] = server.requests  # type: ignore[attr-defined]
    assert request["messages"][1]["content"] == [
        {"type": "text", "text": "What is in the picture?"},
        {"type": "image_url",
         "image_url": {"url": "data:image/png;base64," + base64.b64encode(PNG).decode()}}]


def test_a_trace_keeps_an_image_as_mime_type_size_and_sha256(picture):
    trace = expand_trace(run_scenario(picture).trace.to_dict())

    digest = {"block_type": "image", "image_mimetype": "image/png", "size": len(PNG),
              "sha256": SHA}
    assert trace["turns"][0]["memory"][0]["blocks"][1] == digest
    assert trace["turns"][0]["steps"][0]["llm_calls"][0]["messages"][1]["blocks"][1] == digest


def test_a_trace_holds_neither_the_image_bytes_nor_its_path(picture):
    text = run_scenario(picture).trace.to_json()

    assert base64.b64encode(PNG).decode() not in text
    assert "dog.png" not in text and str(picture.parent) not in text


def test_an_agent_type_that_takes_no_images_is_an_error_naming_the_turn(picture):
    path = picture.with_name("fc.yaml")
    path.write_text(PICTURE.replace("react_multimodal:", "function_calling:"))

    with pytest.raises(ScenarioError) as info:
        run_scenario(path)

    assert str(info.value) == (f"{path}:7: turns.0.images: agent type `function_calling` does "
                               "not take images (agent types that do: react_multimodal); run "
                               "this scenario under one of those")


def test_an_agent_type_registered_with_images_gets_each_turns_images(picture, restore_agent_types):
    received: list[Any] = []

    class Recording(FunctionCallingAgent):
        def chat(self, message: str, *args: Any, **kwargs: Any) -> Any:
            received.append(kwargs.get("image_docs"))
            return super().chat(message, *args)

    def factory(context: Any) -> Any:
        return Recording.from_tools(list(context.tools), llm=context.llm)

    register_agent_type("seeing", factory, images=True)
    path = picture.with_name("seeing.yaml")
    path.write_text(PICTURE.replace("react_multimodal:", "seeing:").replace(
        f'      - "{A_DOG}"\n', "      - a dog\n      - still a dog\n").replace(
        "agents:", "  - user: And now?\nagents:"))

    run_scenario(path)

    [[image], no_images] = received
    assert image.resolve_image() == PNG and no_images == []


def test_registering_a_type_without_images_takes_the_capability_away(restore_agent_types):
    register_agent_type("react_multimodal", AGENT_TYPES["react_multimodal"].factory)

    assert not AGENT_TYPES["react_multimodal"].images


# ----------------------------------------------------------------- cassettes
def _recorded(picture: Path) -> Path:
    path = picture.with_name("rec.yaml")
    path.write_text(PICTURE.replace(f'    script:\n      - "{A_DOG}"\n',
                                    "    recording: cassettes/rec.yaml\n"))
    live = ScriptedLLM(["Thought: I see a dog.\nAnswer: a dog"])
    assert record_scenario(path, "react_multimodal", live).written
    return path


def test_a_cassette_request_keeps_the_image_as_its_digest_not_its_bytes(picture):
    path = _recorded(picture)
    cassette = path.parent / "cassettes" / "rec.yaml"

    [exchange] = yaml.safe_load(cassette.read_text("utf-8"))["exchanges"]

    assert exchange["request"]["messages"][1]["blocks"][1] == {
        "block_type": "image", "image_mimetype": "image/png", "size": len(PNG), "sha256": SHA}
    assert base64.b64encode(PNG).decode() not in cassette.read_text("utf-8")


def test_a_recorded_image_question_replays_by_the_image_hash(picture):
    path = _recorded(picture)

    replayed = run_scenario(path)

    assert replayed.passed, replayed.problems
    assert replayed.trace.turns[0].response == "a dog"


def test_another_image_misses_the_cassette_naming_the_sha256_that_differs(picture):
    path = _recorded(picture)
    (picture.parent / "images" / "dog.png").write_bytes(OTHER_PNG)

    replayed = run_scenario(path)

    error = replayed.trace.turns[0].error or ""
    other = hashlib.sha256(OTHER_PNG).hexdigest()
    assert error.startswith(f"{CassetteMissError.__name__}: ")
    assert (f"first difference (recorded -> now), at messages[1].blocks[1].sha256: \"{SHA}\" "
            f"-> \"{other}\"") in error


def test_the_same_image_under_another_path_replays(picture):
    path = _recorded(picture)
    (picture.parent / "pictures").mkdir()
    (picture.parent / "pictures" / "dog2.png").write_bytes(PNG)
    path.write_text(path.read_text().replace("images/dog.png", "pictures/dog2.png"))

    assert run_scenario(path).passed

