"""End to end in real Chromium: a hang in a ~20 s scrape gap (GAP_S), then "stalled now" as a stored finding (issue 32).

The harness of test_e2e_browser.py (`streamlit run app.py` on a free port with a temp database, Debian's Chromium
through Playwright) and the lab's shared real vLLM 0.31.0 livelock server (tiny Qwen3, max_model_len 256, budget
128, chunked prefill). The livelock is the seed's request held open (test_e2e_trust._HeldRequest), sent to the
server itself inside the gap. The dashboard watches the server through a gate (a TCP forwarder in this test): shut
for the gap, it holds every scrape unanswered, as a frozen or unreachable /metrics does, while the server and its
engine run on untouched. (Freezing the server's API process instead, SIGSTOP, was tried first: after SIGCONT, on
this loaded box, the page's samples came 14–16 s apart for minutes, which mixes vLLM's recovery into what is
tested.) During the gap Engine stats must say it cannot
judge ("no sample for N s — cannot judge"), never "No stall now"; once samples resume, the stall. Then, the engine
still stalled, the Checklist (on the server's own URL) says "Stalled now", stores it as a finding of its run, and
the Markdown and HTML downloaded from Report say the page's verdict and fix. Screenshots: test-output/ui/gap-*.png.
Run under the heavy lock.
"""
from __future__ import annotations

import re
import socket
import threading
import time
from pathlib import Path

import httpx
import pytest

from test_e2e_browser import CHROMIUM, SHOTS, SLOW, browser, dashboard, download, expect, nav, shot  # noqa: F401 - fixtures
from test_e2e_trust import _HeldRequest, _form, _open, _use_target, ctx  # noqa: F401 - a fixture
from tests.cmdline_edits import edited
from test_export_parity import markdown, report_html
from triage.catalogue import POOLING_LIVELOCK
from triage.vllm.metrics import parse_metrics

pytestmark = [pytest.mark.real_server,
              pytest.mark.skipif(not Path(CHROMIUM).exists(), reason=f"{CHROMIUM} missing (apt-get install chromium)")]

GAP_S = 20.0  # 10x the stall window (2 s): the shortest clock that still holds three readings of the page (CI time)
GAP_WORDS = re.compile(r"no sample for (\d+) s — cannot judge")


class _Gate:
    """A TCP forwarder to ``port`` on 127.0.0.1. Open, it passes bytes both ways; shut, it drops the connections it
    carries and holds every new one unanswered (a scrape then times out, as against a frozen /metrics)."""

    def __init__(self, port: int) -> None:
        self.upstream = port
        self.lsock = socket.create_server(("127.0.0.1", 0))
        self.port = self.lsock.getsockname()[1]
        self.is_open = True
        self.conns: list[socket.socket] = []
        self.lock = threading.Lock()
        threading.Thread(target=self._accept, daemon=True).start()

    def _accept(self) -> None:
        while True:
            try:
                c, _ = self.lsock.accept()
            except OSError:
                return
            with self.lock:
                self.conns.append(c)
                if not self.is_open:
                    continue  # held: accepted, never read, never answered
            try:
                u = socket.create_connection(("127.0.0.1", self.upstream), timeout=10)
            except OSError:
                c.close()
                continue
            with self.lock:
                self.conns.append(u)
            for a, b in ((c, u), (u, c)):
                threading.Thread(target=self._pump, args=(a, b), daemon=True).start()

    @staticmethod
    def _pump(a: socket.socket, b: socket.socket) -> None:
        try:
            while data := a.recv(65536):
                b.sendall(data)
        except OSError:
            pass
        for s in (a, b):
            try:
                s.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass

    def _drop(self) -> None:
        with self.lock:
            conns, self.conns = self.conns, []
        for s in conns:
            try:
                s.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass
            s.close()

    def shut(self) -> None:
        with self.lock:
            self.is_open = False
        self._drop()

    def reopen(self) -> None:
        self._drop()  # the held ones
        with self.lock:
            self.is_open = True

    def close(self) -> None:
        self.lsock.close()
        self._drop()


def _engine_has_it(url: str, limit_s: float = 60.0) -> None:
    """Wait until /metrics shows the request running (the engine has it: a freeze of the API process after this
    leaves the engine livelocked inside the gap)."""
    t0 = time.monotonic()
    with httpx.Client(timeout=5) as c:
        while time.monotonic() - t0 < limit_s:
            try:
                page = parse_metrics(c.get(url + "/metrics").text)
                if any((e.num_requests_running or 0) >= 1 for e in page.engines.values()):
                    return
            except (httpx.HTTPError, ValueError):
                pass
            time.sleep(0.1)
    raise AssertionError(f"the held request was not running within {limit_s:.0f} s")


def _samples_flow(pg, n: int = 8, limit_s: float = 240.0) -> None:  # type: ignore[no-untyped-def]
    """Wait until the page has ``n`` samples (a server just started, on a loaded box, answers late at first)."""
    caption = pg.get_by_text(re.compile(r"No stall now · .*\d+ samples")).first
    t0 = time.monotonic()
    while time.monotonic() - t0 < limit_s:
        got = re.search(r"(\d+) samples", caption.inner_text(timeout=SLOW)) if caption.count() else None
        if got and int(got.group(1)) >= n:
            return
        pg.wait_for_timeout(1000)
    raise AssertionError(f"fewer than {n} samples within {limit_s:.0f} s")


def fix_blocks_shown(pg) -> list[str]:  # type: ignore[no-untyped-def]
    """The code of each block in the page's "Fix — copy and paste" box, once all are drawn (Streamlit loads its
    code highlighter lazily: a block shows as a placeholder first)."""
    box = pg.locator(".st-key-fix-blocks").first
    expect(box.get_by_test_id("stCode").first).to_be_visible(timeout=SLOW)
    n = -1
    for _ in range(20):
        blocks = box.get_by_test_id("stCode").all()
        captions = box.get_by_test_id("stCaptionContainer").count()
        if len(blocks) == n and len(blocks) >= captions:
            break
        n = len(blocks)
        pg.wait_for_timeout(500)
    return [b.inner_text().strip("\n") for b in box.get_by_test_id("stCode").all()]


@pytest.mark.timeout(900)
def test_a_hang_in_a_scrape_gap_is_cannot_judge_then_the_stall_then_a_stored_finding(ctx, dashboard,  # noqa: F811
                                                                                     server_031_livelock):  # type: ignore[no-untyped-def]
    srv = server_031_livelock
    gate = _Gate(srv.port)
    pg = _open(ctx, dashboard)
    _form(pg, f"http://127.0.0.1:{gate.port}", "256")  # the dashboard watches the server through the gate
    pg.get_by_role("button", name="Use this target").click()
    expect(pg.get_by_text(re.compile(r"Target: .*truncate_prompt_tokens 256")).first).to_be_visible(timeout=SLOW)
    nav(pg, "Engine stats")
    _samples_flow(pg)  # the usual interval is known, and the server answers /metrics on time
    stalled = pg.get_by_test_id("stAlertContentError").filter(has_text="ENGINE STALLED")
    stale = pg.get_by_test_id("stAlertContentWarning").filter(has_text=GAP_WORDS)
    held = None
    gate.shut()  # the scrapes stop: every one is held unanswered for the gap
    t0 = time.monotonic()
    try:
        pg.wait_for_timeout(3000)
        held = _HeldRequest(srv)  # the hang starts inside the gap, sent to the server itself
        _engine_has_it(srv.url)
        expect(stale).to_be_visible(timeout=30_000)
        seen: list[int] = []
        # the whole gap (and three readings at least: a starved page draws seldom): "cannot judge", never
        # "No stall now", no verdict
        while time.monotonic() - t0 < GAP_S or len(seen) < 3:
            text = stale.inner_text(timeout=SLOW)
            seen.append(int(GAP_WORDS.search(text).group(1)))
            assert pg.get_by_text(re.compile(r"No stall now")).count() == 0, "'No stall now' inside the gap"
            assert stalled.count() == 0, "a stall judged inside the gap"
            if len(seen) == 3:
                shot(pg, "gap-1-cannot-judge")
            pg.wait_for_timeout(4000)
        assert seen[-1] > seen[0] >= 1, seen  # the gap is counted as it grows
    except BaseException:
        if held is not None:
            held.abort()
        raise
    finally:
        gate.reopen()
    try:
        # samples resume: the engine is still livelocked; judged after a whole window of on-time samples
        expect(stalled.first).to_be_visible(timeout=2 * SLOW)
        alert = stalled.first.inner_text()
        assert "vLLM 0.31.0" in alert and "version unknown" not in alert and POOLING_LIVELOCK.refs[0] in alert, alert
        assert held.answered() == b"", "the livelock request answered"
        expect(stale).to_have_count(0)
        gaps = pg.get_by_text(re.compile(r"Scrape gaps \(drawn grey, the lines broken\)"))
        expect(gaps).to_be_visible()
        assert int(GAP_WORDS.search(gaps.inner_text()).group(1)) >= GAP_S - 5, gaps.inner_text()
        shot(pg, "gap-2-stall-after")
        pg.get_by_text("Live", exact=True).click()

        # still stalled: the checklist, on the server's own URL (its process's command line is read through its
        # port), says "Stalled now" and stores it as a finding of its run
        nav(pg, "Target")
        _use_target(pg, srv)
        expect(pg.get_by_test_id("stSidebar").get_by_text(re.compile(re.escape(f"127.0.0.1:{srv.port}")))
               ).to_be_visible(timeout=SLOW)
        nav(pg, "Checklist")
        pg.get_by_role("button", name="Run checklist").click()
        now = pg.get_by_test_id("stAlertContentError").filter(has_text="Stalled now")
        expect(now).to_be_visible(timeout=SLOW)
        expect(pg.locator("summary").filter(has_text="stalled now, seen while the checklist ran").first
               ).to_be_visible()
        saved = pg.get_by_text(re.compile(r"Saved as run #\d+"))
        run_no = re.search(r"#(\d+)", saved.inner_text()).group(1)
        page_blocks = fix_blocks_shown(pg)
        shot(pg, "gap-3-checklist-stalled-now")
    finally:
        held.abort()
        gate.close()

    nav(pg, "Report")  # the open run: the checklist's, the stall among its findings
    expect(pg.get_by_text(re.compile(rf"Run #{run_no} · checklist · .*FAIL|FAIL.*Run #{run_no} · checklist")).first
           ).to_be_visible(timeout=SLOW)
    expect(pg.locator("summary").filter(has_text="stalled now, seen while the checklist ran").first).to_be_attached()
    md = markdown(download(pg, "Download Markdown", f"gap-report-{run_no}.md"))
    htm = report_html(download(pg, "Download HTML", f"gap-report-{run_no}.html"))
    shot(pg, "gap-4-report")
    text = (SHOTS / f"gap-report-{run_no}.md").read_text()
    assert "watch-engine-stalled" in text and "stalled now, seen while the checklist ran" in text
    assert md.status == htm.status == "fail" and md.headline == htm.headline
    # the page's fix, block for block, in both exports
    assert md.blocks == htm.blocks == tuple(page_blocks) and md.blocks, (page_blocks, md.blocks)
    # ordered by risk: a stall seen, so first what to do now (end the stuck request), never the restart; the
    # restart is the server process's own command line (nothing was pasted) with only the fix's options changed
    assert not md.blocks[0].startswith("vllm ") and f":{srv.port}" in md.blocks[0], md.blocks[0]
    import psutil
    import shlex

    own = shlex.join(psutil.Process(srv.pid).cmdline())
    restart = next(b for b in md.blocks if " serve " in b and "--no-enable-chunked-prefill" in b
                   and not b.startswith("---"))
    assert f"the server process's own command line (pid {srv.pid})" in text
    assert edited(own, restart, from_word="serve") == (["--max-num-batched-tokens", "128", "--enable-chunked-prefill"],
                                     ["--no-enable-chunked-prefill"]), (own, restart)
