"""A cassette's format is the lowest that holds its parts (samples 2, MCP exchanges 2, role
exchanges 3, message references 3; none of them 1), and a part that needs a higher format
than the file declares is refused at its line."""

from __future__ import annotations

import pytest
import yaml

from agentkit.llms.cassette import Cassette, CassetteError, Exchange


def _exchange(text: str, sample: int = 0) -> Exchange:
    return Exchange(request={"messages": [{"role": "user", "content": text}]},
                    request_hash=text, response={"message": {"content": "ok"}}, sample=sample)


def _format(cassette: Cassette) -> int:
    cassette.save()
    assert cassette.path is not None
    return int(yaml.safe_load(cassette.path.read_text("utf-8"))["format"])


def test_a_cassette_with_no_optional_part_is_format_1(tmp_path):
    assert _format(Cassette(path=tmp_path / "c.yaml", exchanges=[_exchange("a")])) == 1


def test_a_sampled_cassette_without_repeated_messages_is_format_2(tmp_path):
    cassette = Cassette(path=tmp_path / "c.yaml", samples=2,
                        exchanges=[_exchange("a", 0), _exchange("b", 1)])

    assert _format(cassette) == 2
    assert [e.sample for e in Cassette.load(tmp_path / "c.yaml").exchanges] == [0, 1]


def test_a_sampled_cassette_with_mcp_exchanges_is_format_2(tmp_path):
    cassette = Cassette(path=tmp_path / "c.yaml", samples=1, exchanges=[_exchange("a")])
    cassette.mcp_exchanges.append(Exchange(request={"server": "toy", "method": "tools/list"},
                                           request_hash="m1", response={"tools": []}))

    assert _format(cassette) == 2
    assert len(Cassette.load(tmp_path / "c.yaml").mcp_exchanges) == 1


def test_a_sampled_cassette_with_repeated_messages_is_format_3_and_reads_back(tmp_path):
    first = _exchange("a", 0)
    again = Exchange(request={"messages": [*first.request["messages"],
                                           {"role": "user", "content": "b"}]},
                     request_hash="ab", response={"message": {"content": "ok"}}, sample=0)
    cassette = Cassette(path=tmp_path / "c.yaml", samples=1, exchanges=[first, again])

    assert _format(cassette) == 3
    loaded = Cassette.load(tmp_path / "c.yaml")
    assert [e.request for e in loaded.exchanges] == [first.request, again.request]


def test_samples_in_a_format_1_cassette_are_refused_at_their_line(tmp_path):
    path = tmp_path / "c.yaml"
    path.write_text("format: 1\nsamples: 1\nexchanges:\n  - sample: 0\n    request: {}\n"
                    "    response: {message: {content: hi}}\n")

    with pytest.raises(CassetteError, match=rf"^{path}:2: samples: samples .* are cassette "
                                            r"format 2, but the file says `format: 1`"):
        Cassette.load(path)


def test_a_message_reference_in_a_format_2_cassette_is_refused_at_its_line(tmp_path):
    path = tmp_path / "c.yaml"
    path.write_text("format: 2\nexchanges:\n"
                    "  - request: {messages: [{role: user, content: a}]}\n"
                    "    response: {message: {content: hi}}\n"
                    "  - request:\n      messages:\n"
                    "        - {ref: /exchanges/0/request/messages, start: 0, count: 1}\n"
                    "    response: {message: {content: hi}}\n")

    with pytest.raises(CassetteError, match=rf"^{path}:7: exchanges\.1\.request\.messages\.0: "
                                            r"a message reference belongs to a cassette of "
                                            r"`format: 3`, but the file says `format: 2`"):
        Cassette.load(path)


def test_a_format_2_cassette_needs_no_samples(tmp_path):
    path = tmp_path / "c.yaml"
    path.write_text("format: 2\nexchanges: []\n")

    assert Cassette.load(path).samples is None


def test_a_sampled_cassette_with_role_exchanges_is_format_3_and_keeps_each_sample_and_role(
        tmp_path):
    judge = Exchange(request={"messages": [{"role": "user", "content": "judge it"}]},
                     request_hash="j", response={"message": {"content": "{}"}}, sample=1,
                     role="judge", key={"at": "expect.answer.judge", "transcript": "t"})
    cassette = Cassette(path=tmp_path / "c.yaml", samples=2,
                        exchanges=[_exchange("a", 0), _exchange("b", 1), judge])

    assert _format(cassette) == 3
    loaded = Cassette.load(tmp_path / "c.yaml")
    assert [(e.sample, e.role) for e in loaded.exchanges] == [(0, None), (1, None), (1, "judge")]


def test_a_role_exchange_in_a_format_2_cassette_is_refused_naming_its_line(tmp_path):
    path = tmp_path / "c.yaml"
    path.write_text("format: 2\nexchanges:\n  - role: judge\n    key: {at: x, transcript: t}\n"
                    "    request: {}\n    response: {message: {content: hi}}\n")

    with pytest.raises(CassetteError, match=rf"^{path}:3: exchanges\.0: a role exchange "
                                            r".* but the file says `format: 2`"):
        Cassette.load(path)
