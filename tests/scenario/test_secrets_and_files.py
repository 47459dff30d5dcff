"""Secret redaction and atomic file writes (what keeps cassettes safe and whole on disk)."""

from __future__ import annotations

import json
import os

import pytest
from hypothesis import given
from hypothesis import strategies as st

from agentkit.core.files import FileWriteError, atomic_write_text
from agentkit.core.secrets import Redactor
from tests.fake_keys import fake_key


# ----------------------------------------------------------------- secrets from the environment
@pytest.mark.parametrize("name", ["SERVICE_API_KEY", "GITHUB_TOKEN", "client_secret",
                                  "DB_PASSWORD", "AWS_CREDENTIALS"])
def test_values_of_secret_looking_env_vars_are_replaced_by_their_name(name):
    redactor = Redactor(environ={name: "s3cr3t-value-123"})

    assert redactor.text("x=s3cr3t-value-123;") == f"x=<redacted:{name}>;"
    assert redactor.redacted == {name}


def test_values_of_other_env_vars_are_kept():
    redactor = Redactor(environ={"HOME": "/home/someone", "LANG": "en_US.UTF-8"})

    assert redactor.text("in /home/someone") == "in /home/someone"
    assert redactor.redacted == set()


def test_short_values_of_secret_env_vars_are_not_treated_as_secrets():
    redactor = Redactor(environ={"KEY": "abc"})

    assert redactor.text("abc def") == "abc def"


def test_the_longer_of_two_overlapping_secrets_is_redacted_whole():
    redactor = Redactor(environ={"A_TOKEN": "tok-12345678", "B_TOKEN": "tok-12345678-extended"})

    assert redactor.text("tok-12345678-extended") == "<redacted:B_TOKEN>"


def test_the_process_environment_is_used_by_default(monkeypatch):
    monkeypatch.setenv("ZZ_TEST_SECRET", "from-the-environment")

    assert Redactor().text("from-the-environment") == "<redacted:ZZ_TEST_SECRET>"


# ----------------------------------------------------------------- secrets by shape
def test_openai_style_keys_are_redacted():
    redactor = Redactor(environ={})

    assert redactor.text(f"key {fake_key('proj-FAKE_not-a-real-key0')} ok") == "key <redacted:api-key> ok"
    assert redactor.redacted == {"api-key"}


def test_short_sk_prefixed_words_are_not_keys():
    assert Redactor(environ={}).text("a sk-short word") == "a sk-short word"


@pytest.mark.parametrize("header", ["Bearer abc.DEF-123_xyz", "bearer abc.DEF-123_xyz"])
def test_bearer_tokens_are_redacted_whatever_the_case(header):
    redactor = Redactor(environ={})

    assert redactor.text(f"Authorization: {header}") == "Authorization: Bearer <redacted>"
    assert redactor.redacted == {"bearer-token"}


@pytest.mark.parametrize("field", ["Authorization", "api_key", "API-KEY", "x-api-key",
                                   "openai_api_key"])
def test_secret_fields_are_redacted_whatever_their_value(field):
    redactor = Redactor(environ={})

    assert redactor.data({field: "anything", "model": "m"}) == {field: "<redacted>", "model": "m"}
    assert redactor.redacted == {field.lower()}


def test_empty_secret_fields_are_left_empty():
    redactor = Redactor(environ={})

    assert redactor.data({"api_key": None, "authorization": ""}) == {"api_key": None,
                                                                    "authorization": ""}
    assert redactor.redacted == set()


def test_nested_data_is_redacted_everywhere_and_other_values_kept():
    redactor = Redactor(environ={})
    data = {"messages": [{"content": fake_key("fake-abcdefghijklmnopq")}, ("Bearer abcdefghij", 3)],
            "n": 1.5, "flag": True, "none": None}

    assert redactor.data(data) == {
        "messages": [{"content": "<redacted:api-key>"}, ["Bearer <redacted>", 3]],
        "n": 1.5, "flag": True, "none": None}


def test_redacting_redacted_data_changes_nothing():
    redactor = Redactor(environ={"MY_TOKEN": "tok-0123456789"})
    once = redactor.data({"text": f"tok-0123456789 {fake_key('fake-abcdefghijklmnopq')} Bearer abcdefghij",
                          "api_key": "x"})

    assert Redactor(environ={"MY_TOKEN": "tok-0123456789"}).data(once) == once


# ----------------------------------------------------------------- atomic writes
def test_atomic_write_creates_the_file_and_its_folders(tmp_path):
    path = tmp_path / "a" / "b" / "out.txt"

    atomic_write_text(path, "héllo\n")

    assert path.read_text("utf-8") == "héllo\n"


def test_atomic_write_replaces_an_existing_file(tmp_path):
    path = tmp_path / "out.txt"
    path.write_text("old")

    atomic_write_text(path, "new")

    assert path.read_text() == "new"
    assert [p.name for p in tmp_path.iterdir()] == ["out.txt"]


def test_atomic_write_keeps_newlines_as_written(tmp_path):
    path = tmp_path / "out.txt"

    atomic_write_text(path, "a\nb\n")

    assert path.read_bytes() == b"a\nb\n"


def test_a_failing_rename_keeps_the_old_file_and_removes_the_temp_file(tmp_path, monkeypatch):
    path = tmp_path / "out.txt"
    path.write_text("old")

    def fail(*_args):
        raise OSError("rename failed")

    monkeypatch.setattr(os, "replace", fail)
    with pytest.raises(FileWriteError, match=r"out.txt: cannot write it: rename failed "
                                             r"\(nothing written\)"):
        atomic_write_text(path, "new")

    assert path.read_text() == "old"
    assert [p.name for p in tmp_path.iterdir()] == ["out.txt"]


def test_a_failure_while_writing_keeps_the_old_file_and_removes_the_temp_file(tmp_path,
                                                                              monkeypatch):
    path = tmp_path / "out.txt"
    path.write_text("old")

    def fail(_fd):
        raise OSError("fsync failed")

    monkeypatch.setattr(os, "fsync", fail)
    with pytest.raises(FileWriteError, match=r"fsync failed \(nothing written\)"):
        atomic_write_text(path, "new")

    assert path.read_text() == "old"
    assert [p.name for p in tmp_path.iterdir()] == ["out.txt"]


# ----------------------------------------------------------------- stream chunks
def test_a_secret_split_across_chunks_is_redacted_in_the_joined_text():
    redactor = Redactor(environ={})

    pieces = redactor.chunks(["key: " + fake_key("fake-abcdefgh"), "ijklmnopqrst", " done"])

    assert "".join(pieces) == "key: <redacted:api-key> done"
    assert redactor.redacted == {"api-key"}


def test_chunks_are_cut_where_they_were_and_a_cut_inside_a_secret_moves_past_it():
    redactor = Redactor(environ={"MY_TOKEN": "tok-0123456789"})

    assert redactor.chunks(["a ", "tok-01", "23456789", " b", " c"]) == \
        ["a ", "<redacted:MY_TOKEN>", " b", " c"]


def test_chunks_without_secrets_are_kept_as_they_are():
    assert Redactor(environ={}).chunks(["a", "", "b c"]) == ["a", "", "b c"]


_PIECE = st.text(alphabet="abcdefghijklmnopqrstBearer tok0123456789 sk-", max_size=12)


@given(st.lists(_PIECE, max_size=8))
def test_redacted_chunks_always_join_to_the_redacted_joined_text(pieces):
    environ = {"MY_TOKEN": "tok-0123456789"}

    assert "".join(Redactor(environ=environ).chunks(pieces)) == \
        Redactor(environ=environ).text("".join(pieces))


# ----------------------------------------------------------------- more kinds of secrets
@pytest.mark.parametrize("name", ["GITHUB_PAT", "SENTRY_DSN", "DB_PASSWD", "MY_SERVICE_KEY"])
def test_values_of_pat_dsn_and_passwd_env_vars_are_secrets(name):
    redactor = Redactor(environ={name: "v4lue-0123456789"})

    assert redactor.text("got v4lue-0123456789") == f"got <redacted:{name}>"


def test_a_path_variable_is_not_mistaken_for_a_pat():
    redactor = Redactor(environ={"PATH": "/usr/local/bin:/usr/bin", "PATTERN": "abcdefghij"})

    assert redactor.text("/usr/local/bin:/usr/bin abcdefghij") == \
        "/usr/local/bin:/usr/bin abcdefghij"


def test_url_credentials_are_redacted_in_any_text():
    redactor = Redactor(environ={})

    assert redactor.text("connect to postgres://app:hunter2-pw@db:5432/x failed") == \
        "connect to postgres://app:<redacted>@db:5432/x failed"
    assert redactor.redacted == {"url-credentials"}


def test_the_password_of_a_database_url_is_a_secret_on_its_own_too():
    redactor = Redactor(environ={"DATABASE_URL": "postgres://app:s3cret-pass@db/x"})

    assert redactor.text("password s3cret-pass rejected") == \
        "password <redacted:DATABASE_URL:password> rejected"


def test_secrets_given_by_name_are_redacted():
    redactor = Redactor(environ={}, secrets={"header X-Api-Key": "hdr-0123456789"})

    assert redactor.text("echo: hdr-0123456789") == "echo: <redacted:header X-Api-Key>"


_PIECES = st.sampled_from(["plain text", fake_key("fakefakefakefakefake1"), "Bearer abcdefgh123",
                           "BEARER xyz12345678", "postgres://user:hunter22@db", "sk-short", "é",
                           "api_key", "Authorization", "x", "\t", '"', "\\"])
_TEXTS = st.lists(_PIECES, max_size=4).map(" ".join)
_JSONISH = st.recursive(
    _TEXTS | st.integers() | st.none() | st.booleans(),
    lambda inner: st.lists(inner, max_size=3) | st.tuples(inner, inner)
    | st.dictionaries(_TEXTS | st.sampled_from(["authorization", "API_KEY", "x-api-key"]),
                      inner, max_size=3), max_leaves=12)


@given(_JSONISH)
def test_json_data_is_data_redacted_as_its_json_round_trip(value):
    quick, walked = Redactor(environ={}), Redactor(environ={})

    assert quick.json_data(value) == walked.data(json.loads(json.dumps(value, default=str)))
    assert quick.redacted == walked.redacted


def test_json_data_redacts_the_values_of_secret_env_vars_too():
    redactor = Redactor(environ={"SERVICE_TOKEN": "tok-123456789"})

    assert redactor.json_data({"messages": [("say tok-123456789",)]}) == {
        "messages": [["say <redacted:SERVICE_TOKEN>"]]}
