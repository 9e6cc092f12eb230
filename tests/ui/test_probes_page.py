"""Probes page: safe sets by default; the seed matrix only behind the hang confirmation."""
from __future__ import annotations

from ui.components import session
from ui_apptest import no_exception, with_target
from ui_fakes import FakeServices


def _at():
    return with_target("probes").run()


def test_defaults_are_conformance_and_throughput(use_services):
    fake = use_services(FakeServices())
    at = _at()
    assert at.checkbox(key="probes.set.conformance").value and at.checkbox(key="probes.set.throughput").value
    assert not at.checkbox(key="probes.set.seed").value
    at.button(key="probes.run").click().run()
    no_exception(at)
    assert at.checkbox(key="probes.set.vectors").value  # safe and bounded: on by default (issue 13)
    assert fake.calls[-1] == ("run_probes", {"sets": ["conformance", "throughput", "vectors"], "allow_hang": False,
                                             "deadline_s": 30.0})
    assert at.session_state[session.OPEN_RUN_KEY] == 12
    assert any("2 probes" in w.value for w in at.warning)  # worst is http-error → warn


def test_seed_needs_confirmation(use_services):
    fake = use_services(FakeServices())
    at = _at()
    at.checkbox(key="probes.set.seed").check().run()
    assert any("hangs the engine for up to 30 seconds" in w.value for w in at.warning)
    assert at.button(key="probes.run").disabled
    at.checkbox(key="probes.hang.confirm").check().run()
    assert not at.button(key="probes.run").disabled
    at.button(key="probes.run").click().run()
    no_exception(at)
    assert fake.calls[-1][1]["allow_hang"] is True and "seed" in fake.calls[-1][1]["sets"]
    assert any("livelock" in e.label for e in at.expander)


def test_probe_error_is_a_message(use_services):
    use_services(FakeServices(error="Probes: 401 Unauthorized: the server wants an API key."))
    at = _at()
    at.button(key="probes.run").click().run()
    no_exception(at)
    assert any("401" in e.value for e in at.error)
