"""Logs page: paste, analyze, see findings, config and series; a bad log is a message."""
from __future__ import annotations

from ui.components import session
from ui_apptest import no_exception, page
from ui_fakes import FakeServices


def test_paste_and_analyze(use_services):
    fake = use_services(FakeServices())
    at = page("logs").run()
    at.button(key="logs.analyze").click().run()  # enabled from the start: the first click counts
    assert any("Nothing to analyze yet" in e.value for e in at.error) and not fake.calls
    at.text_area(key="logs.input.paste").set_value("INFO Engine 000: Avg prompt throughput: 0.0 tokens/s").run()
    at.button(key="logs.analyze").click().run()
    no_exception(at)
    assert fake.calls[-1][0] == "analyze_log"
    assert any("Engine stalled" in e.label for e in at.expander)
    assert [s.value for s in at.subheader] == ["Findings", "Start-up config", "Stats series"]
    assert at.session_state[session.OPEN_RUN_KEY] == 13


def test_bad_log_is_a_message(use_services):
    use_services(FakeServices())
    at = page("logs").run()
    at.text_area(key="logs.input.paste").set_value("this is not a log").run()
    at.button(key="logs.analyze").click().run()
    no_exception(at)
    assert any("does not look like a vLLM log" in e.value for e in at.error)


REAL = __import__("pathlib").Path(__file__).resolve().parents[1] / "fixtures" / "real"


def _analyzed(temp_db: str, log: str):  # type: ignore[no-untyped-def]
    from ui.services import Services

    at = page("logs")
    with open(REAL / log) as f:
        text = f.read()
    at.run()
    at.text_area(key="logs.input.paste").set_value(text).run()
    at.button(key="logs.analyze").click().run()
    no_exception(at)
    return at, Services(temp_db)


def test_the_logs_own_line_leads_the_banner(use_services, temp_db):
    """Issue 32: the Logs page led with the generic record title and hid "8192 > 4096 max_position_embeddings" in a
    collapsed card. The line the log states leads; the record's title follows."""
    from ui.services import Services

    use_services(Services(temp_db))
    at, _ = _analyzed(temp_db, "startup/0.31.0-max-model-len-too-big/server.log")
    banner = at.error[0].value
    plain = banner.replace("\\", "")  # Markdown escapes
    assert plain.startswith("**FAIL** — **The server did not start: max_model_len 8192 is above the model's "
                            "max_position_embeddings 4096** — the server refuses to start"), banner


def test_snippets_address_the_port_the_log_names_and_its_times_are_not_called_utc(use_services, temp_db):
    """Issue 32: snippets pointed at 127.0.0.1:8000 while the log named another port; zone-less log times were
    labelled UTC. The recorded 0.32.0 BERT log names port 56143 and writes vLLM's zone-less times."""
    from ui.services import Services

    use_services(Services(temp_db))
    at, _ = _analyzed(temp_db, "logs/0.32.0-minilm-bert-waiting-waiting-bert.log")
    code = [c.value for c in at.code]
    assert code and any("http://127.0.0.1:56143/v1" in c for c in code), code
    assert not any(":8000" in c for c in code)
    assert "Times are as the log wrote them: its lines state no zone (the server's clock), so none is assumed." in [
        c.value for c in at.caption]
    fig = at.get("plotly_chart")[0].proto.spec
    assert "time as the log wrote it (no zone stated)" in fig and "time (UTC)" not in fig
