"""End to end in real Chromium: the dashboard an on-call engineer can trust (issue 23).

The harness of test_e2e_browser.py (`streamlit run app.py` on a free port with a temp database, Debian's
Chromium through Playwright, the lab's real vLLM 0.31.0 livelock server). Fields are filled and the
button clicked at once, with no Enter and no blur: the first click must count.
"""
from __future__ import annotations

import re
import shlex
import socket
from pathlib import Path

import pytest

from test_e2e_browser import CHROMIUM, SLOW, browser, dashboard, expect, nav, shot  # noqa: F401 - fixtures
from triage.sources import cmdline as cmdline_source
from triage.lab.server import free_port

pytestmark = pytest.mark.skipif(not Path(CHROMIUM).exists(), reason=f"{CHROMIUM} missing (apt-get install chromium)")


@pytest.fixture
def ctx(browser, dashboard):  # type: ignore[no-untyped-def]  # noqa: F811
    c = browser.new_context(viewport={"width": 1400, "height": 1000})
    c.grant_permissions(["clipboard-read", "clipboard-write"], origin=dashboard)
    try:
        yield c
    finally:
        c.close()


def _open(ctx, dashboard):  # type: ignore[no-untyped-def]  # noqa: F811
    pg = ctx.new_page()
    pg.set_default_timeout(SLOW)
    pg.goto(dashboard)
    expect(pg.get_by_role("heading", name=re.compile("Target"))).to_be_visible(timeout=SLOW)
    # the first run has finished (the sidebar is drawn after the page): typing before then races the values the
    # run fills in from the last target (its server, an empty truncation: issue 32 carries no answer)
    expect(pg.get_by_test_id("stSidebar").get_by_text(re.compile(r"^Target: "))).to_be_visible(timeout=SLOW)
    return pg


def _form(pg, url: str, tpt: str = "", cmd: str = "", model: str | None = None) -> None:  # type: ignore[no-untyped-def]
    """Every Target field set (a new tab opens on the last target, whose values fill the form), no Enter."""
    pg.get_by_label("Server URL").fill(url)
    if model is not None:
        pg.get_by_label("Model (press Fetch models to list them, or type the id)").fill(model)
    pg.get_by_label("What does your client send as truncate_prompt_tokens?", exact=True).fill(tpt)
    pg.get_by_text("Optional: the").click()
    pg.get_by_label("vllm serve command line").fill(cmd)


def _sidebar(pg):  # type: ignore[no-untyped-def]
    return pg.get_by_test_id("stSidebar")


@pytest.mark.real_server
def test_seed_case_fix_block_is_a_runnable_command_line(ctx, dashboard, server_031_livelock):  # type: ignore[no-untyped-def]  # noqa: F811
    srv = server_031_livelock
    pg = _open(ctx, dashboard)
    hostport = srv.url.split("//")[1]
    pg.get_by_label("Server URL").fill(hostport)  # no scheme, no Enter: Fetch models acts on the first click
    pg.get_by_role("button", name="Fetch models").click()
    expect(pg.get_by_role("combobox", name="Model (from /v1/models)")).to_be_visible(timeout=SLOW)
    expect(pg.get_by_text(f"No scheme given: using http://{hostport}.")).to_be_visible()
    pg.get_by_label("What does your client send as truncate_prompt_tokens?", exact=True).fill("256")
    pg.get_by_text("Optional: the").click()
    cmd = "vllm serve " + shlex.join(srv.args)
    pg.get_by_label("vllm serve command line").fill(cmd)
    pg.get_by_role("button", name="Use this target").click()  # the typed fields ride on this click
    expect(pg.get_by_text(re.compile(r"Target: .*" + re.escape(hostport) + r".*truncate_prompt_tokens 256")).first
           ).to_be_visible(timeout=SLOW)

    nav(pg, "Checklist")
    pg.get_by_role("button", name="Run checklist").click()
    banner = pg.get_by_test_id("stAlertContentError").filter(has_text="FAIL").first
    expect(banner).to_contain_text("in step 7. max_model_len vs truncate_prompt_tokens", timeout=SLOW)
    expect(banner.get_by_role("link", name="vllm#55427")).to_have_attribute(
        "href", "https://github.com/vllm-project/vllm/issues/55427")
    # one open run: the sidebar says the run the page saved
    saved = pg.get_by_text(re.compile(r"Saved as run #\d+"))
    expect(saved).to_be_visible()
    run_no = re.search(r"#(\d+)", saved.inner_text()).group(1)
    expect(_sidebar(pg).get_by_text(f"Open run: #{run_no}")).to_be_visible(timeout=SLOW)
    expect(_sidebar(pg).get_by_text(re.compile(r"truncate_prompt_tokens 256"))).to_be_visible(timeout=SLOW)
    # step 6 passes on its own, and says it is part of the cause
    expect(pg.get_by_text(re.compile(r"This step's value is part of the root cause")).first).to_be_visible()
    shot(pg, "trust-1-checklist-fix")

    # ordered by risk (issue 32): the client's change comes before the restart, which edits the user's own line
    expect(pg.get_by_test_id("stCode").first).not_to_contain_text("vllm serve")
    fix = pg.get_by_test_id("stCode").filter(has_text="vllm serve ").first
    fix.hover()
    fix.get_by_role("button").first.click()  # Streamlit's copy button
    pg.wait_for_timeout(300)
    copied = pg.evaluate("navigator.clipboard.readText()")
    facts = cmdline_source.collect(copied).facts
    assert copied.startswith("vllm serve ") and "cmdline_unknown_flags" not in facts, copied
    assert facts["enable_chunked_prefill"].value is False, copied  # the fix is applied …
    assert facts["max_model_len"].value == 256 and f"--port {srv.port}" in copied, copied  # … to the user's own line
    assert "max_num_batched_tokens" not in facts, copied  # vLLM refuses 128 < 256 with chunking off

    # a new tab finds the last target
    pg2 = _open(ctx, dashboard)
    expect(_sidebar(pg2).get_by_text(re.compile(re.escape(hostport)))).to_be_visible(timeout=SLOW)
    expect(pg2.get_by_label("Server URL")).to_have_value(srv.url)


def test_bad_targets_are_refused_with_the_reason(ctx, dashboard):  # type: ignore[no-untyped-def]  # noqa: F811
    pg = _open(ctx, dashboard)
    dead = f"127.0.0.1:{free_port()}"
    _form(pg, dead)  # no scheme, and nothing listens there
    pg.get_by_role("button", name="Use this target").click()
    err = pg.get_by_test_id("stAlertContentError").filter(has_text="cannot be used")
    expect(err).to_contain_text(f"http://{dead} cannot be used", timeout=SLOW)
    expect(err).to_contain_text("Cannot connect")
    expect(err).to_contain_text("Nothing was saved")
    expect(pg.get_by_test_id("stAlertContentSuccess")).to_have_count(0)
    pg.get_by_label("Server URL").fill("ftp://127.0.0.1:21")
    pg.get_by_role("button", name="Use this target").click()
    expect(pg.get_by_test_id("stAlertContentError").filter(has_text="not a web address")).to_be_visible(timeout=SLOW)
    # neither became the target (the tab may show the last good one, never these)
    expect(_sidebar(pg).get_by_text(re.compile(re.escape(dead) + r"|ftp://"))).to_have_count(0)
    expect(pg.get_by_test_id("stAlertContentSuccess").filter(has_text=re.compile(re.escape(dead) + r"|ftp://"))
           ).to_have_count(0)
    shot(pg, "trust-2-bad-target")


def test_answer_and_rerun_and_analyze_log_act_on_the_first_click(ctx, dashboard):  # type: ignore[no-untyped-def]  # noqa: F811
    """Offline (a command line, no server): Use → Checklist asks truncate_prompt_tokens → type, click once."""
    pg = _open(ctx, dashboard)
    _form(pg, f"http://127.0.0.1:{free_port()}", model="Qwen/Qwen3-Embedding-4B",
          cmd="docker run --gpus all vllm/vllm-openai:v0.31.0 Qwen/Qwen3-Embedding-4B --runner pooling --convert "
              "embed --max-model-len 2048 --max-num-batched-tokens 1024 --enable-chunked-prefill")
    pg.get_by_role("button", name="Use this target").click()
    expect(pg.get_by_text("the checklist will read only the command line")).to_be_visible(timeout=SLOW)

    nav(pg, "Checklist")
    expect(pg.get_by_text(re.compile(r"truncate_prompt_tokens\s*not stated")).first).to_be_visible(timeout=SLOW)
    pg.get_by_role("button", name="Run checklist").click()
    box = pg.get_by_role("textbox", name="truncate_prompt_tokens")
    expect(box.first).to_be_visible(timeout=SLOW)
    box.first.fill("2048")  # no Enter, no blur
    pg.get_by_role("button", name="Answer and re-run").last.click()
    banner = pg.get_by_test_id("stAlertContentError").filter(has_text="FAIL").first
    expect(banner).to_contain_text("vllm#55427", timeout=SLOW)
    # header, sidebar and verdict agree on the answered value
    expect(pg.get_by_test_id("stMain").get_by_text(re.compile(r"^Target .*truncate_prompt_tokens\s*2048"))
           ).to_be_visible()
    expect(_sidebar(pg).get_by_text(re.compile(r"truncate_prompt_tokens 2048"))).to_be_visible(timeout=SLOW)
    saved = pg.get_by_text(re.compile(r"Saved as run #\d+"))
    run_no = re.search(r"#(\d+)", saved.inner_text()).group(1)
    expect(_sidebar(pg).get_by_text(f"Open run: #{run_no}")).to_be_visible(timeout=SLOW)
    shot(pg, "trust-3-answered")

    nav(pg, "Logs")
    log = (Path(__file__).resolve().parents[1] / "fixtures" / "real" / "0.31.0-tiny-qwen3-livelock" / "server.log")
    pg.get_by_label("…or paste vLLM log").fill(log.read_text()[:20000])  # no Ctrl+Enter
    pg.get_by_role("button", name="Analyze log").click()
    expect(pg.get_by_role("heading", name="Start-up config")).to_be_visible(timeout=SLOW)


def test_enter_in_the_url_field_submits_the_target_form(ctx, dashboard):  # type: ignore[no-untyped-def]  # noqa: F811
    """Issue 32: Enter did not submit the Target form. Enter in the URL field is "Use this target", with every
    field typed so far (no button clicked, no blur): a command line and a URL where nothing listens."""
    pg = _open(ctx, dashboard)
    dead = f"127.0.0.1:{free_port()}"
    _form(pg, "", "1024", "vllm serve Qwen/Qwen3-Embedding-4B --runner pooling --max-model-len 2048",
          model="Qwen/Qwen3-Embedding-4B")
    url = pg.get_by_label("Server URL")
    url.fill(dead)
    url.press("Enter")
    expect(pg.get_by_text(f"http://{dead} does not answer")).to_be_visible(timeout=SLOW)
    expect(pg.get_by_text("the checklist will read only the command line")).to_be_visible()
    expect(_sidebar(pg).get_by_text(re.compile(re.escape(dead) + r".*truncate_prompt_tokens 1024"))
           ).to_be_visible(timeout=SLOW)
    expect(url).to_have_value(f"http://{dead}")  # the scheme the form added, kept in the field
    shot(pg, "trust-0-enter-submits")


def _use_target(pg, srv) -> None:  # type: ignore[no-untyped-def]
    _form(pg, srv.url, "256")
    pg.get_by_role("button", name="Use this target").click()
    expect(pg.get_by_text(re.compile(r"Target: .*truncate_prompt_tokens 256")).first).to_be_visible(timeout=SLOW)


class _HeldRequest:
    """What the seed probe sends: [SHORT, LONG], the long one truncated to exactly max_model_len (256) tokens,
    which livelocks 0.31.0, held open on a raw socket until ``abort()`` closes it: vLLM aborts the request when its
    client goes away. The hold lasts as long as the test needs (the live banner seen), not a guessed time: on a
    loaded box a fixed 20 or 30 s hold could end before the watcher had confirmed the stall for the browser."""

    def __init__(self, srv) -> None:  # type: ignore[no-untyped-def]
        import json
        import uuid
        from urllib.parse import urlsplit

        u = urlsplit(srv.url)
        # a fresh prompt each time: a cached prefix of an earlier one would not hang
        body = json.dumps({"model": srv.served_model, "input": ["hi", f"{uuid.uuid4()} " + "hello world " * 400],
                           "truncate_prompt_tokens": 256}).encode()
        self.sock = socket.create_connection((u.hostname, u.port), timeout=10)
        self.sock.sendall(b"POST /v1/embeddings HTTP/1.1\r\nHost: %s:%d\r\nContent-Type: application/json\r\n"
                          b"Content-Length: %d\r\nConnection: close\r\n\r\n" % (u.hostname.encode(), u.port,
                                                                                  len(body)) + body)

    def answered(self) -> bytes:
        """What the server sent so far (nothing while the engine is livelocked)."""
        self.sock.setblocking(False)
        try:
            return self.sock.recv(4096)
        except BlockingIOError:
            return b""
        finally:
            self.sock.setblocking(True)

    def abort(self) -> None:
        try:
            self.sock.shutdown(socket.SHUT_RDWR)
        except OSError:
            pass
        self.sock.close()


@pytest.mark.real_server
def test_a_stall_stays_in_the_alert_history_after_it_ends(ctx, dashboard, server_031_livelock):  # type: ignore[no-untyped-def]  # noqa: F811
    srv = server_031_livelock
    pg = _open(ctx, dashboard)
    _use_target(pg, srv)
    nav(pg, "Engine stats")
    expect(pg.get_by_text(re.compile(r"\d+ samples")).first).to_be_visible(timeout=SLOW)
    held = _HeldRequest(srv)
    try:
        # the live alert, while the request is held: the engine stays stalled until the test aborts it
        expect(pg.get_by_test_id("stAlertContentError").filter(has_text="ENGINE STALLED").first).to_be_visible(
            timeout=SLOW)
        assert held.answered() == b"", "the livelock request answered"
    finally:
        held.abort()
    # the live alert is gone, the episode stays: start, end, how it ended, its evidence
    expect(pg.get_by_text(re.compile(r"No stall now · 1 stall episode"))).to_be_visible(timeout=SLOW)
    expect(pg.get_by_role("heading", name=re.compile(r"Alert history \(1\)"))).to_be_visible()
    expect(pg.get_by_text(re.compile(r"Evidence of #1: livelock from \d\d:\d\d:\d\d"))).to_be_visible()
    pg.wait_for_timeout(3000)  # a few more ticks: it is still listed
    expect(pg.get_by_role("heading", name=re.compile(r"Alert history \(1\)"))).to_be_visible()
    shot(pg, "trust-5-stall-history")
    pg.get_by_text("Live", exact=True).click()


PAGES = ("Target", "Checklist", "Probes", "Vectors & clients", "Engine stats", "Logs", "Fleet", "History", "Report")


@pytest.mark.real_server
@pytest.mark.parametrize("scheme", ["light", "dark"])
def test_every_page_in_light_and_dark(browser, dashboard, server_031_livelock, scheme):  # type: ignore[no-untyped-def]  # noqa: F811
    """The theme follows the system: each page screenshotted in both (test-output/ui/theme-*.png, read in review)."""
    c = browser.new_context(viewport={"width": 1400, "height": 1000}, color_scheme=scheme)
    try:
        pg = _open(c, dashboard)
        _use_target(pg, server_031_livelock)
        nav(pg, "Checklist")
        pg.get_by_role("button", name="Run checklist").click()
        expect(pg.get_by_test_id("stCode").first).to_be_visible(timeout=SLOW)
        bg = pg.evaluate("getComputedStyle(document.querySelector('[data-testid=stApp]')).backgroundColor")
        dark = sum(int(x) for x in re.findall(r"\d+", bg)[:3]) < 3 * 128
        assert dark == (scheme == "dark"), bg
        primary = pg.get_by_role("button", name="Run checklist").evaluate("b => getComputedStyle(b).backgroundColor")
        r, g, b = (int(x) for x in re.findall(r"\d+", primary)[:3])
        assert b > 200 and r < 100, primary  # blue, not FAIL red
        for name in PAGES:
            nav(pg, name)
            if name == "Engine stats":  # let a few live ticks draw the chart
                expect(pg.locator(".js-plotly-plot .main-svg").first).to_be_attached(timeout=SLOW)
                pg.wait_for_timeout(2500)
            shot(pg, f"theme-{scheme}-{name.split()[0].lower()}")
            if name == "Engine stats":
                pg.get_by_text("Live", exact=True).click()
    finally:
        c.close()
