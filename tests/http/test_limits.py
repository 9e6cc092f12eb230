"""triage.http.limits: the one capped, deadlined read (byte cap while streaming, a total deadline over every byte,
a caller's larger cap as a parameter) and the parsed-size caps, on a replayed server (httpx.MockTransport)."""
from __future__ import annotations

import time
from collections.abc import Iterator

import httpx
import pytest

from triage.http.errors import BodyTooLarge, Deadline, TooMany, cut_kind
from triage.http.limits import (
    MAX_DIMENSIONS,
    MAX_JSON_ITEMS,
    MAX_TOKENS,
    check_sizes,
    get_within,
    json_or_text,
    read_json,
    timeout_of,
)


def _chunks(n: int, size: int, pause_s: float = 0.0) -> Iterator[bytes]:
    for _ in range(n):
        if pause_s:
            time.sleep(pause_s)
        yield b"x" * size


def _client(body: object, seen: list[httpx.Request] | None = None) -> httpx.Client:
    def handler(req: httpx.Request) -> httpx.Response:
        if seen is not None:
            seen.append(req)
        return httpx.Response(200, content=body() if callable(body) else body)  # type: ignore[arg-type]

    return httpx.Client(transport=httpx.MockTransport(handler))


def test_get_within_reads_a_whole_answer_and_sends_the_params() -> None:
    seen: list[httpx.Request] = []
    with _client(b'{"ok": 1}', seen) as c:
        assert get_within(c, "http://prom/api", {"q": "up"}, time.monotonic() + 5, 100) == (200, b'{"ok": 1}')
    assert seen[0].url.params["q"] == "up"


def test_the_cap_is_the_callers_parameter_and_is_checked_while_streaming() -> None:
    with _client(lambda: _chunks(100, 1024)) as c:
        assert len(get_within(c, "http://p/", None, time.monotonic() + 5, 200 * 1024)[1]) == 100 * 1024
        with pytest.raises(BodyTooLarge) as e:
            get_within(c, "http://p/", None, time.monotonic() + 5, 10 * 1024)
    assert cut_kind(e.value) == "too-large"


def test_the_deadline_is_total_not_per_read() -> None:
    with _client(lambda: _chunks(50, 1, pause_s=0.05)) as c:  # each chunk in time, the whole answer not
        t0 = time.monotonic()
        with pytest.raises(Deadline) as e:
            get_within(c, "http://p/", None, time.monotonic() + 0.5, 1 << 20)
    assert time.monotonic() - t0 < 2 and cut_kind(e.value) == "timeout"
    with _client(b"{}") as c, pytest.raises(Deadline):
        get_within(c, "http://p/", None, time.monotonic() - 1, 1 << 20)  # no time left: nothing sent


def test_timeout_of_connects_within_five_seconds_at_most() -> None:
    assert timeout_of(30).connect == 5.0 and timeout_of(30).read == 30
    assert timeout_of(2).connect == 2


def test_json_items_are_counted_before_parsing() -> None:
    r = httpx.Response(200)
    assert json_or_text(b'{"a": [1, 2]}', r) == {"a": [1, 2]}
    assert json_or_text(b"not json" * 1000, r, limit=10) == "not jsonno"
    with pytest.raises(TooMany, match="items cap"):
        json_or_text(b"[" + b"0," * (MAX_JSON_ITEMS + 1) + b"0]", r)


def test_read_json_says_the_parsed_size_cap_as_a_value_error() -> None:
    assert read_json(httpx.Response(200, content=b'{"x": 1}')) == {"x": 1}
    with pytest.raises(ValueError, match="parsed-size cap"):
        read_json(httpx.Response(200, content=b"[" + b"0," * (MAX_JSON_ITEMS + 1) + b"0]"))


@pytest.mark.parametrize("body, capped", [
    pytest.param({"data": [{"embedding": [0.0] * 8}]}, False, id="small-vector"),
    pytest.param({"data": [{"embedding": [0.0] * (MAX_DIMENSIONS + 1)}]}, True, id="long-vector"),
    pytest.param({"data": [{"embedding": "A" * ((MAX_DIMENSIONS + 1) * 16 // 3 + 16)}]}, True, id="long-base64"),
    pytest.param({"tokens": list(range(MAX_TOKENS + 1))}, True, id="many-tokens"),
    pytest.param({"data": ["oops", None]}, False, id="odd-items"),
    pytest.param(["not", "a", "dict"], False, id="list"),
])
def test_check_sizes_refuses_vectors_and_token_lists_past_their_caps(body: object, capped: bool) -> None:
    if capped:
        with pytest.raises(TooMany):
            check_sizes(body)
    else:
        check_sizes(body)
