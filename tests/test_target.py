"""The one target type: truncation parsed once, typed; the API key never part of what is stored."""
from __future__ import annotations

import pytest

from triage.target import MAX_MODEL_LEN, NO_TRUNCATION, UNKNOWN, Target, Truncation


@pytest.mark.parametrize(("given", "kind", "request_value", "config_value"), [
    pytest.param(256, "tokens", 256, 256, id="int"),
    pytest.param("256", "tokens", 256, 256, id="text"),
    pytest.param(-1, "max_model_len", -1, -1, id="minus-one"),
    pytest.param("max_model_len", "max_model_len", -1, -1, id="word"),
    pytest.param("none", "none", None, "none", id="none"),
    pytest.param("None", "none", None, "none", id="None"),
    pytest.param(None, "unknown", None, None, id="not-stated"),
    pytest.param("", "unknown", None, None, id="blank"),
])
def test_parse(given, kind, request_value, config_value):
    t = Truncation.parse(given)
    assert (t.kind, t.request_value(), t.config_value()) == (kind, request_value, config_value)
    assert Truncation.parse(t) is t


@pytest.mark.parametrize("bad", [0, -2, "abc", "1.5", True])
def test_parse_refuses(bad):
    with pytest.raises(ValueError):
        Truncation.parse(bad)


def test_effective_and_text():
    assert MAX_MODEL_LEN.effective(512) == 512 and Truncation.parse(255).effective(512) == 255
    assert NO_TRUNCATION.effective(512) is None and UNKNOWN.effective(512) is None
    assert [str(x) for x in (Truncation.parse(8), MAX_MODEL_LEN, NO_TRUNCATION, UNKNOWN)] == [
        "8", "-1 (max_model_len)", "none", "not stated"]


def test_target_parses_once_and_hides_the_key():
    t = Target("http://h:1/", "m", "256", api_key="sk-secret-0123456789")
    assert t.truncation == Truncation("tokens", 256) and t.url == "http://h:1"
    assert "sk-secret" not in repr(t) and "sk-secret" not in str(t.describe())
    assert t.describe()["api_key_given"] is True and t.secrets == ("sk-secret-0123456789",)
    assert t == Target("http://h:1", "m", 256)  # the key is not part of what the target is
