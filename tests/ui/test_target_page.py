"""Target page: URL, key held in session only, models from /v1/models, truncate_prompt_tokens, saved targets."""
from __future__ import annotations

from triage.target import Truncation
from ui_apptest import no_exception, page, says_empty, shown
from ui.components import session
from ui_fakes import MODEL, URL, FakeServices


def test_empty_state(use_services):
    use_services(FakeServices())
    assert says_empty("target", "No target chosen yet")


def test_fetch_models_pick_and_use(use_services):
    fake = use_services(FakeServices())
    at = page("target").run()
    at.text_input(key="target.url").set_value(URL)
    at.text_input(key="target.api_key").set_value("sk-secret-123")
    at.button(key="target.fetch").click().run()
    assert fake.calls[0] == ("list_models", (URL, "sk-secret-123"))
    assert at.selectbox(key="target.model_pick").value.startswith(MODEL)
    at.text_input(key="target.tpt").set_value("256")
    at.button(key="target.use").click().run()
    no_exception(at)
    form = at.session_state[session.TARGET_KEY]
    assert (form.url, form.model, form.truncation.tokens, form.api_key) == (URL, MODEL, 256, "sk-secret-123")
    saved = [c[1] for c in fake.calls if c[0] == "save_target"][0]
    assert saved.truncation == Truncation("tokens", 256)
    assert any("Target:" in s.value for s in at.success)


def test_unreachable_server_is_a_message(use_services):
    use_services(FakeServices(models_error="Cannot connect to the server: connection refused."))
    at = page("target").run()
    at.text_input(key="target.url").set_value("http://127.0.0.1:9")
    at.button(key="target.fetch").click().run()
    no_exception(at)
    assert any("Cannot connect" in e.value for e in at.error)


def test_bad_truncate_value_blocks_use(use_services):
    use_services(FakeServices())
    at = page("target").run()
    at.text_input(key="target.url").set_value(URL)
    at.text_input(key="target.tpt").set_value("lots")
    at.button(key="target.use").click().run()  # enabled (first click counts), and refuses with the reason
    no_exception(at)
    assert any("whole number" in e.value for e in at.error)
    assert any("not used" in e.value for e in at.error)
    assert session.TARGET_KEY not in at.session_state


def test_unreachable_server_is_refused_not_saved(use_services):
    fake = use_services(FakeServices(models_error="Cannot connect to the server: connection refused."))
    at = page("target").run()
    at.text_input(key="target.url").set_value("127.0.0.1:9")
    at.button(key="target.use").click().run()
    no_exception(at)
    assert any("http://127.0.0.1:9 cannot be used" in shown(e.value) and "Cannot connect" in shown(e.value)
               for e in at.error)
    assert not at.success and not [c for c in fake.calls if c[0] == "save_target"]


def test_saved_target_fills_the_form(use_services):
    fake = use_services(FakeServices())
    at = page("target").run()
    at.selectbox(key="target.saved").set_value(fake.saved[0].title).run()
    assert at.text_input(key="target.url").value == URL
    assert at.text_input(key="target.tpt").value == "256"


class _LastTargetServices(FakeServices):
    """The store remembers the last target with the truncation its user stated then (256)."""

    def last_target(self):  # type: ignore[no-untyped-def]
        from triage.target import Target

        return Target(URL, MODEL, 256, cmdline="vllm serve m", target_id=1)


def test_a_new_session_does_not_carry_the_last_targets_truncation(use_services):
    """Issue 32: a new session opened pre-filled with the previous target's truncation and ran the checklist with
    it as "stated by user". The server and model are carried; the truncation is offered and used only once
    confirmed."""
    use_services(_LastTargetServices())
    at = page("target").run()
    no_exception(at)
    t = at.session_state[session.TARGET_KEY]
    assert (t.url, t.model, t.truncation.known) == (URL, MODEL, False)
    assert at.text_input(key="target.url").value == URL and at.text_input(key="target.tpt").value == ""
    offer = at.button(key="target.confirm_carried")
    assert offer.label == "My client still sends 256"
    offer.click().run()
    no_exception(at)
    t = at.session_state[session.TARGET_KEY]
    assert t.truncation == Truncation("tokens", 256) and at.text_input(key="target.tpt").value == "256"
    assert not [b for b in at.button if b.key == "target.confirm_carried"]  # asked once
