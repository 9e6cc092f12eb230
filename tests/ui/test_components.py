"""Components under AppTest.from_function: each owns its session keys and returns plain values."""
from __future__ import annotations

from streamlit.testing.v1 import AppTest

from triage.findings import Finding, Status
from ui.components.finding_card import evidence_rows
from ui_apptest import ROOT, no_exception, shown


def _pager_app() -> None:
    import streamlit as st

    from ui.components import pager

    st.session_state["out"] = pager.show("p", total=60, page_size=25)


def test_pager_returns_limit_offset():
    at = AppTest.from_function(_pager_app).run()
    assert at.session_state["out"] == (25, 0)
    at.button(key="p.next").click().run()
    assert at.session_state["out"] == (25, 25)
    at.button(key="p.next").click().run()
    assert at.session_state["out"] == (25, 50) and at.button(key="p.next").disabled
    at.button(key="p.prev").click().run()
    assert at.session_state["out"] == (25, 25)


def _confirm_app() -> None:
    import streamlit as st

    from ui.components import hang_confirm

    st.session_state["ok"] = hang_confirm.show("h", 30.0)


def test_hang_confirm_is_false_until_ticked():
    at = AppTest.from_function(_confirm_app).run()
    assert at.session_state["ok"] is False
    assert "up to 30 seconds" in at.warning[0].value and "aborts" in at.warning[0].value
    at.checkbox(key="h.confirm").check().run()
    assert at.session_state["ok"] is True


def _log_input_app() -> None:
    import streamlit as st

    from ui.components import log_input

    st.session_state["text"] = log_input.show("l")


def test_log_input_returns_pasted_text():
    at = AppTest.from_function(_log_input_app).run()
    assert at.session_state["text"] is None
    at.text_area(key="l.paste").set_value("INFO hello").run()
    assert at.session_state["text"] == "INFO hello"


def _card_app() -> None:
    from triage.findings import Finding, Status
    from ui.components import finding_card

    finding_card.show(Finding("gpu-memory", Status.UNKNOWN, "GPU memory unknown",
                              {"question": "Which GPU?", "max_model_len": {"value": 256, "source": "server"}},
                              fix="Paste nvidia-smi."), question="fallback question")


def test_finding_card_asks_the_evidence_question():
    at = AppTest.from_function(_card_app).run()
    no_exception(at)
    assert "UNKNOWN" in at.expander[0].label and "gpu-memory" in at.expander[0].label
    assert any("Which GPU?" in shown(i.value) for i in at.info)
    assert at.dataframe[0].value.to_dict("records") == [{"what": "max_model_len", "value": "256", "source": "server"}]


def test_evidence_rows_flatten_nested_provenance():
    rows = evidence_rows({"preconditions": {"vllm_version": {"value": "0.31.0", "source": "server", "detail": "GET"}},
                          "count": 3})
    assert rows == [{"what": "preconditions.vllm_version", "value": "0.31.0", "source": "server: GET"},
                    {"what": "count", "value": "3", "source": ""}]
    assert Finding("x", Status.PASS, "t").evidence == {}


def test_app_navigation_lists_every_page(use_services):
    from ui_fakes import FakeServices

    use_services(FakeServices())
    at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=30).run()
    no_exception(at)
    assert at.title[0].value == "Target"
    for page, title in [("diagnose", "Diagnose"), ("checklist", "Checklist"), ("probes", "Probes"),
                        ("stats", "Engine stats"), ("logs", "Logs"), ("history", "History"), ("report", "Report")]:
        at.switch_page(f"ui/pages/{page}_page.py").run()
        no_exception(at)
        assert at.title[0].value == title


def test_target_form_survives_a_page_switch(use_services):
    from ui_fakes import FakeServices

    use_services(FakeServices())
    at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=30).run()
    at.text_input(key="target.url").set_value("http://10.0.0.7:8000")
    at.text_input(key="target.tpt").set_value("4096")
    at.button(key="target.use").click().run()  # a form: its fields are sent with the submit (Enter or a button)
    at.switch_page("ui/pages/checklist_page.py").run()
    at.switch_page("ui/pages/target_page.py").run()
    no_exception(at)
    assert at.text_input(key="target.url").value == "http://10.0.0.7:8000"
    assert at.text_input(key="target.tpt").value == "4096"


def _yaml_card_app() -> None:
    from triage.findings import Finding, Status
    from ui.components import finding_card

    finding_card.show(Finding("kube-liveness-blind", Status.WARN, "probe blind", {
        "probe_path": "/health", "yaml_to_copy": {"livenessProbe: paste under the vLLM container": "livenessProbe:\n"
                                                  "  exec: {}\n"}}), expanded=True)


def test_finding_card_shows_yaml_to_copy_as_code():
    """A finding's YAML to paste (issue 31: the liveness probe) is a code block with its title, not an evidence row."""
    at = AppTest.from_function(_yaml_card_app).run()
    no_exception(at)
    assert [c.value.strip() for c in at.code] == ["livenessProbe:\n  exec: {}"] and at.code[0].language == "yaml"
    assert any("paste under the vLLM container" in c.value for c in at.caption)
    assert [r["what"] for r in evidence_rows({"probe_path": "/health", "yaml_to_copy": {"t": "x"}})] == ["probe_path"]
