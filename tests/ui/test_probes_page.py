"""Probes page: safe sets by default; the seed matrix only behind the hang confirmation."""
from __future__ import annotations

from ui.components import session
from ui_apptest import no_exception, shown, with_target
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


class _OneOf(FakeServices):
    """The probe run returns a recorded 0.31.0 hang of one case, diagnosed "one of" (chunked prefill unseen)."""

    def run_probes(self, form, sets, *, allow_hang, stall_s=5.0, deadline_s=30.0, on_event=None,  # noqa: ANN001
                   run_experiments=False):  # noqa: ANN001, ANN202
        from tests.catalogue.test_diagnosis_cases import _recorded_probe
        from triage.differential import diagnose
        from triage.probes.seed import seed_findings
        from ui import values as v

        view = super().run_probes(form, sets, allow_hang=allow_hang, stall_s=stall_s, deadline_s=deadline_s,
                                  on_event=on_event, run_experiments=run_experiments)
        fs = seed_findings([_recorded_probe("livelock-031-short-long-t256", 256)], 256, "0.31.0")
        return v.ProbeRunView(view.run_id, view.probes, [*fs, *diagnose(fs, {})])


def test_one_of_diagnosis_is_the_banner_and_offers_the_experiments(use_services):
    fake = use_services(_OneOf())
    at = _at()
    at.button(key="probes.run").click().run()
    no_exception(at)
    assert any("one of pooling-livelock" in shown(e.value) for e in at.error)  # the diagnosis is the banner's cause
    assert any("The experiments (seed, conformance)" in shown(i.value) for i in at.info)
    at.button(key="probes.experiments").click().run()
    no_exception(at)
    assert fake.calls[-1][1].get("run_experiments") is True
