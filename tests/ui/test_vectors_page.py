"""Vectors & clients page: runs the vectors and clients sets, plots cosines, shows settings to copy."""
from __future__ import annotations

from triage.findings import Finding, Status
from ui.components import session
from ui.values import ProbeRunView
from ui_apptest import no_exception, with_target
from ui_fakes import FakeServices


class VectorServices(FakeServices):
    def run_probes(self, form, sets, *, allow_hang, stall_s=5.0, deadline_s=30.0, on_event=None):  # type: ignore[override]
        self.calls.append(("run_probes", {"sets": sets, "allow_hang": allow_hang}))
        return ProbeRunView(21, [], [
            Finding("vectors-repeat", Status.PASS, "the same text twice: cosine 1.00000", {"cosine": 1.0}),
            Finding("clients-langchain-defaults", Status.FAIL, "LangChain OpenAIEmbeddings: wrong vectors",
                    {"cosine": -0.08, "settings_to_copy": "OpenAIEmbeddings(check_embedding_ctx_length=False)"},
                    "set check_embedding_ctx_length=False")])


def test_runs_both_sets_and_shows_plot_and_settings(use_services):
    fake = use_services(VectorServices())
    at = with_target("vectors").run()
    no_exception(at)
    assert at.checkbox(key="vectors.set.vectors").value and at.checkbox(key="vectors.set.clients").value
    at.button(key="vectors.run").click().run()
    no_exception(at)
    assert fake.calls[-1] == ("run_probes", {"sets": ["vectors", "clients"], "allow_hang": False})
    assert any("check_embedding_ctx_length=False" in c.value for c in at.code)
    assert at.session_state[session.OPEN_RUN_KEY] == 21
