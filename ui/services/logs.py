"""The Logs page's service: a pasted or uploaded vLLM log analysed, filed under the server it names, charted."""
from __future__ import annotations

import io
from typing import Any
from urllib.parse import urlsplit

from triage import charts, logs
from triage import recorder as recorder_
from triage.export.groups import groups
from triage.logs.lines import times_zoned
from triage.logs.persist import to_metric_samples
from triage.recorder import Recorder
from triage.target import Target
from ui.adapters import plain_error, sample_row
from ui.errors import ServiceError
from ui.services.base import ServiceBase, guard
from ui.values import LogView

LOG_TIME_UTC = "time (UTC)"
LOG_TIME_AS_WRITTEN = "time as the log wrote it (no zone stated)"  # vLLM's own record times carry none
_LOOPBACK = {"127.0.0.1", "localhost", "::1"}
_ANY_HOST = {"0.0.0.0", "::", ""}


def _log_server(config: dict[str, Any]) -> tuple[str, int] | None:
    """(host, port) of the server a log names (its start-up arguments; vLLM's defaults where it states none)."""
    args = config.get("non_default_args") if isinstance(config.get("non_default_args"), dict) else {}
    if not args and "port" not in config:
        return None
    try:
        port = int(args.get("port", config.get("port", 8000)))  # vLLM's default port when the log states none
    except (TypeError, ValueError):
        return None
    return str(args.get("host") or config.get("host") or "0.0.0.0"), port


def _names(url: str | None, host: str, port: int) -> bool:
    """Whether ``url`` is the server listening on ``host``:``port``."""
    try:
        u = urlsplit(url or "")
        uport = u.port or (443 if u.scheme == "https" else 80)
    except ValueError:
        return False
    same_host = host in _ANY_HOST or u.hostname == host or (u.hostname in _LOOPBACK and host in _LOOPBACK)
    return uport == port and same_host


def log_server_target(config: dict[str, Any], session_target: Target | None) -> Target | None:
    """The server a log names, as the target its fix snippets address: the session's target when it is that
    server (its command line and key), else the log's own host and port (issue 32: snippets pointed at
    127.0.0.1:8000 while the log named port 8003); None when the log names none."""
    named = _log_server(config)
    if named is None:
        return None
    host, port = named
    if session_target is not None and _names(session_target.url, host, port):
        return session_target
    shown = "127.0.0.1" if host in _ANY_HOST else (f"[{host}]" if ":" in host else host)
    model = config.get("served_model_name") or config.get("model")
    return Target(url=f"http://{shown}:{port}", model=model if isinstance(model, str) else None)


class LogsService(ServiceBase):
    """Logs page."""

    @guard("Log analysis")
    def analyze_log(self, text: str, target_id: int | None = None, save: bool = True,
                    secrets: tuple[str, ...] = (), session_target: Target | None = None) -> LogView:
        """Parse a pasted or uploaded vLLM log: series, start-up config, findings; store it as a run.

        The run is filed under the server the log names (its start-up arguments' host and port) when that
        server is the session's target or a saved one, else under no target: never under whatever target
        happens to be selected. ``target_id`` is kept for callers that know better (an import)."""
        if not text or not text.strip():
            raise ServiceError("The log is empty: paste it or upload a file.")
        try:
            # a file object, never a str: a pasted one-liner must not be taken for a path on this host
            res = logs.analyze_log(io.StringIO(text))
        except Exception as e:
            raise ServiceError(f"This does not look like a vLLM log ({plain_error(e)}).") from e
        findings = list(res.findings)
        config = dict(res.config_provenance or {})
        points = list(res.samples or [])
        samples = [sample_row(p) for p in points]
        summary = {k: v for k, v in (res.summary or {}).items() if k != "episodes"}
        stats = summary.get("stats") if isinstance(summary.get("stats"), dict) else {}
        # a server that died at argparse (`vllm: error: unrecognized arguments …`) prints no vLLM record, yet the
        # engine judged it: its start-up findings make it a log (issue 14)
        judged = any(f.check != "log-engine-stats" for f in findings)
        if not config and not summary.get("levels") and not stats.get("lines") and not judged:
            raise ServiceError(f"This does not look like a vLLM log: none of its {summary.get('lines', '?')} lines "
                               "is a vLLM log record (no log levels, start-up config or engine stats lines).")
        run_id = None
        filed = ""
        if session_target is not None or target_id is None:
            target_id, filed = self._log_target(dict(res.config or {}), session_target)
        if save:
            events = logs.log_events(res, log_text=text, name="dashboard-paste.log", target_id=target_id)
            run_id = recorder_.save(events, Recorder(self.store, tuple(x for x in secrets if x)))
        figure = None
        zoned = times_zoned(text)
        if points:
            try:
                # the log's stall episodes are shaded on the time axis
                figure = charts.engine_stats_figure(to_metric_samples(points), alerts=list(res.episodes or []),
                                                    time_title=LOG_TIME_UTC if zoned else LOG_TIME_AS_WRITTEN)
            except Exception:  # noqa: BLE001 - the table below still shows the series
                figure = None
        grouped, rest = groups(findings, config)
        return LogView(findings, config, samples, dict(summary), run_id, figure, groups=tuple(grouped),
                       ungrouped=tuple(rest), filed_under=filed,
                       server=log_server_target(dict(res.config or {}), session_target), times_zoned=zoned)

    def _log_target(self, config: dict[str, Any], session_target: Target | None) -> tuple[int | None, str]:
        """(target id, what was said) for the server a log names: host and port of its start-up arguments."""
        named = _log_server(config)
        if named is None:
            return None, "The log names no server (no start-up arguments): filed under no target."
        host, port = named
        if session_target is not None and session_target.target_id is not None and _names(session_target.url,
                                                                                           host, port):
            return session_target.target_id, (f"Filed under {session_target.url}, the server the log names "
                                              f"({host}:{port}).")
        t = next((t for t in self.store.list_targets() if _names(t.url, host, port)), None)
        if t is not None:
            return t.id, f"Filed under {t.url}, the server the log names ({host}:{port})."
        return None, f"The log names {host}:{port}, which is not a saved target: filed under no target."
