"""triage.logs.startup_plan: what one message says, read once (the memo) and gated by cheap substrings."""
from __future__ import annotations

from triage.logs.startup_plan import has_any_marker, message_plan


def test_a_refusal_is_an_event_and_a_plain_line_is_nothing():
    plan = message_plan("vllm: error: unrecognized arguments: --task embed")
    assert plan.event is not None and plan.event[0] == "log-removed-flag"
    quiet = message_plan("Loading weights took 0.12 seconds")
    assert (quiet.event, quiet.config, quiet.tasks, quiet.started) == (None, None, None, False)


def test_a_config_line_is_a_config_step_and_the_plan_is_shared():
    msg = "Using max model len 256"
    assert message_plan(msg).config == ("versions", None, None, ("max_model_len", 256))
    assert message_plan(msg) is message_plan(msg)
    assert has_any_marker(msg) and not has_any_marker("nothing to see")


def test_supported_tasks_are_read():
    assert message_plan("Supported tasks: ['embed', 'classify']").tasks == ["embed", "classify"]
