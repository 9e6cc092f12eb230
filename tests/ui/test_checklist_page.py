"""Checklist page: steps in the design card's order, verdict + evidence + fix + question, summary on top."""
from __future__ import annotations

from triage.findings import Finding, Status
from ui.components import session
from triage.steps import STEPS
from triage.target import Target
from triage.catalogue import POOLING_LIVELOCK
from ui_apptest import no_exception, says_empty, shown, with_target
from ui_fakes import MODEL, URL, FakeServices

SAVED = Target(URL, MODEL, 256, target_id=1)  # the session target of these tests: a saved one (id 1)


def test_needs_a_target(use_services):
    use_services(FakeServices())
    assert says_empty("checklist", "No target yet")


def test_walk_shows_steps_in_order_and_summary(use_services):
    fake = use_services(FakeServices())
    at = with_target("checklist", SAVED).run()
    at.button(key="checklist.run").click().run()
    no_exception(at)
    heads = [h.value for h in at.subheader]
    assert [h.split(". ", 1)[1].split(" — ")[0] for h in heads] == [s.title for s in STEPS]
    assert "FAIL" in heads[-1]  # truncation step carries the livelock verdict
    issue = POOLING_LIVELOCK.refs[0].removeprefix("vllm")
    assert "FAIL" in at.error[0].value and issue in at.error[0].value  # summary verdict at the top
    assert fake.calls[0][0] == "iter_checklist"
    # the question is asked where the evidence was missing (GPU memory: unknown)
    assert any("To decide" in i.value for i in at.info)
    assert at.session_state[session.OPEN_RUN_KEY] == 11
    md = " ".join(m.value for m in at.markdown)
    assert "**Fix:** Send truncate_prompt_tokens 255" in shown(md)


def test_pass_summary(use_services):
    use_services(FakeServices(findings=[Finding("pooling-livelock-risk", Status.PASS, "No livelock risk on 0.32.0")]))
    at = with_target("checklist", SAVED).run()
    at.button(key="checklist.run").click().run()
    no_exception(at)
    assert "PASS" in at.success[0].value


def test_engine_error_is_a_message(use_services):
    use_services(FakeServices(findings=[], error="Cannot connect to the server: connection refused."))
    at = with_target("checklist", SAVED).run()
    at.button(key="checklist.run").click().run()
    no_exception(at)
    assert any("Cannot connect" in e.value for e in at.error)


def test_results_of_another_target_are_not_shown(use_services):
    use_services(FakeServices())
    at = with_target("checklist", SAVED).run()
    at.button(key="checklist.run").click().run()
    assert at.subheader
    at.session_state[session.TARGET_KEY] = Target("http://other:8000", MODEL, 256)
    at.run()
    no_exception(at)
    assert not at.subheader and any("Press **Run checklist**" in i.value for i in at.info)


def test_a_healthy_verdict_says_what_it_did_not_check(use_services):
    """Issue 32: a healthy verdict did not say what was not checked. It lists the parts checked (the set-up, from
    the sources that answered) and those not (log, real requests, vectors, load), each with where to check it;
    a probe set run in this session for the target counts as checked."""
    fake = use_services(FakeServices(findings=[Finding("pooling-livelock-risk", Status.PASS, "No livelock risk")]))
    fake.config = {"values": {}, "sources": {"server": "ok", "log": "no log given", "cmdline": "no command line"}}
    at = with_target("checklist", SAVED).run()
    at.button(key="checklist.run").click().run()
    no_exception(at)
    md = [m.value.replace("\\", "") for m in at.markdown]  # md.text escapes Markdown's specials
    assert any(m.startswith(":green[:material/check:] Checked: The set-up") and "read from server" in m for m in md)
    unchecked = [m for m in md if "Not checked:" in m]
    assert [m.split("Not checked: ")[1].split(" (")[0].split(":")[0] for m in unchecked] == [
        "The server's log", "Real requests", "The vectors", "Behaviour under load"]
    assert [c.value.replace("\\", "") for c in at.caption
            if c.value.startswith(("Analyze", "Send", "Check the", "Try it"))] == [
        "Analyze the server's log", "Send real requests: Probes", "Check the vectors: Vectors & clients",
        "Try it under load: Probes → Throughput"]  # the page links (captions where a page runs alone)
    at.session_state[session.SETS_RUN_KEY] = {URL: ["conformance"]}
    at.button(key="checklist.run").click().run()
    md = [m.value.replace("\\", "") for m in at.markdown]
    assert any("Checked: Real requests" in m and "probe set conformance run" in m for m in md)


def test_stalled_now_while_the_checklist_runs(use_services):
    """Issue 32: during a live hang the Checklist showed the same text as on an idle server. The live stall rule
    over /metrics while it ran is said at the top: stalled now, or not, or cannot judge."""
    from ui.values import LiveState

    fake = use_services(FakeServices())
    fake.config = {"values": {}, "sources": {"server": "ok"}}  # the server answered: its engine is looked at
    fake.live = LiveState("stalled", "ENGINE STALLED: running 1, waiting 0, no progress for 2.5 s", 6, 3.0)
    at = with_target("checklist", SAVED).run()
    at.button(key="checklist.run").click().run()
    no_exception(at)
    assert ("live_state", URL) in fake.calls
    assert at.error[0].value.startswith("**FAIL** — **Stalled now** (while the checklist ran): ENGINE STALLED")
    fake.live = LiveState("cannot judge", "no /metrics samples to judge by (HTTP 503)", 0, 3.0)
    at.button(key="checklist.run").click().run()
    assert "Live state: cannot judge — no /metrics samples to judge by (HTTP 503)" in [
        c.value.replace("\\", "") for c in at.caption]
    assert not any("Stalled now" in e.value for e in at.error)
