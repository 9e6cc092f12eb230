"""The Engine stats page's service: /metrics scraped by a Watcher kept in the page's dict, charted, every stall
episode kept with its evidence."""
from __future__ import annotations

import time
from typing import Any

from triage import charts, watch
from triage.episode import Episode
from triage.stall import DEFAULT_STALL_S
from triage.target import Target
from triage.display import kv_percent
from triage.recurrence import ended_words
from ui.adapters import plain_error, sample_row
from ui.errors import ServiceError
from ui.services.base import ServiceBase
from ui.values import StatsView

HISTORY_KEY = "episodes"  # in the Engine stats page's dict: every stall episode seen, kept across watcher resets
EVIDENCE_BEFORE_S, EVIDENCE_AFTER_S = 10.0, 3.0


def _episode_history(session: dict[str, Any], alerts: list[Episode], samples: list[Any],
                     now: float) -> list[dict[str, Any]]:
    """Every stall episode the page has seen (open and ended): start, end, how it ended, its evidence.

    The watcher's alerts are the episodes, each with how it ended as the watcher read it
    (``triage.recurrence.ended_by``: the gauges before and after); the samples around it are kept with it, so it
    stays readable after the live series scrolls on.
    """
    hist: dict[tuple[str, float], dict[str, Any]] = session.setdefault(HISTORY_KEY, {})
    for a in alerts:
        assert a.start is not None  # watch's episodes start at a scrape
        key = (str(a.engine), float(a.start))
        ep = hist.setdefault(key, {"engine": key[0], "kind": a.kind, "start": key[1],
                                   "confirmed": a.confirmed_at, "end": None, "evidence": []})
        ep["end"] = a.end
        ep["ended"] = ended_words(a.ended)  # the watcher's reading (triage.recurrence.ended_by)
    one_engine = len({str(x.engine) for x in samples}) <= 1
    for ep in hist.values():
        if ep["end"] is None or not ep["evidence"] or ep.get("evidence_until", 0) < ep["end"] + EVIDENCE_AFTER_S:
            lo, hi = ep["start"] - EVIDENCE_BEFORE_S, (ep["end"] or now) + EVIDENCE_AFTER_S
            rows = [sample_row(x) for x in samples if x.ts is not None and lo <= x.ts <= hi and
                    (one_engine or str(x.engine) == ep["engine"])]
            if rows:
                ep["evidence"], ep["evidence_until"] = rows[-400:], min(hi, now)
    return sorted(hist.values(), key=lambda e: e["start"])


class StatsService(ServiceBase):
    """Engine stats page (a live view: nothing is stored; the CLI's ``watch`` is the recorder)."""

    def stats_tick(self, form: Target, session: dict[str, Any], stall_s: float = DEFAULT_STALL_S,
                   keep: int = 900, interval_s: float = 1.0) -> StatsView:
        """Scrape /metrics once with a Watcher kept in ``session`` (the page's dict) and chart the series.

        The series kept here is bounded (``keep`` samples, 15 minutes at 1 s); nothing is stored:
        the CLI's ``watch`` is the recorder, this page is a live view.
        """
        try:
            key = (form.url, form.api_key, float(stall_s), float(interval_s))
            w = session.get("watcher")
            if w is None or session.get("watcher_key") != key:
                if w is not None:
                    w.close()
                # the page's refresh is the scrape interval: a sample is "late" (cannot judge) against it, not
                # against the CLI's 0.5 s (a 1 s page on a busy host read every sample late and never judged)
                w = watch.Watcher(form.url, stall_s=float(stall_s), api_key=form.api_key or None,
                                  interval=float(interval_s))
                session.update(watcher=w, watcher_key=key, samples=[])
            tick = w.sample_once()
        except ServiceError:
            raise
        except Exception as e:
            raise ServiceError(f"Engine stats: {plain_error(e)}") from e
        samples: list[Any] = session["samples"]
        samples.extend(tick.samples)
        del samples[:-keep]
        alerts = list(w.alerts or [])
        history = _episode_history(session, alerts, samples, tick.ts)
        now = time.time()  # the samples' clock (the Watcher's): a gap up to now is drawn and stated
        figure = charts.engine_stats_figure(samples, alerts=alerts, now=now)
        stamps = [s.ts for s in samples if s.ts is not None]
        gaps = charts.scrape_gaps(stamps, now)
        last_ts = max(stamps, default=None)
        stale_s = now - last_ts if last_ts is not None and gaps and gaps[-1][1] == now else None
        row = tick.sample
        latest: dict[str, Any] = {}
        if row is not None:
            latest = {"running": row.num_requests_running, "waiting": row.num_requests_waiting,
                      "prompt tokens/s": row.prompt_throughput,
                      "KV cache %": kv_percent(row.kv_cache_usage_perc)}
        open_alert = next((a for a in reversed(alerts) if a.open), None)
        msg = None
        if tick.alert_event is not None and open_alert is not None:
            msg = tick.alert_event.message
        elif open_alert is not None:
            assert open_alert.start is not None
            msg = watch.alert_message(open_alert.kind, open_alert.start, tick.ts, open_alert.running[1],
                                      open_alert.waiting[1], open_alert.detail.get("vllm_version") or w.vllm_version,
                                      facts=w.facts)
        alert = {**watch.alert_dict(open_alert), "message": msg} if open_alert is not None else None
        error = f"Scrape failed: {tick.error}" if tick.error else None
        return StatsView(figure, latest, alert, len(samples), error, len(history), episodes=tuple(history),
                         last_ts=last_ts, gaps=tuple(gaps), stale_s=stale_s)
