"""Replay recorded real vLLM responses (tests/fixtures/real/<dir>/*.json, metrics-*.txt) as an httpx transport.

Routes are (method, path) from the recordings; a path nobody recorded gets the recorded answer vLLM
gave for an unknown route (no-v1-prefix.json: 404 {"detail": "Not Found"}).
"""

from __future__ import annotations

import json
from pathlib import Path
from collections.abc import Callable

import httpx

REAL = Path(__file__).resolve().parents[1] / "fixtures" / "real"
ENGINE = REAL / "engine"

# when several recordings share a route, the plain one wins
PREFERRED = (
    "health.json",
    "load.json",
    "tokenize.json",
    "embed-single.json",
    "models.json",
    "version.json",
    "server-info.json",
)


def _response(rec: dict) -> httpx.Response:
    headers = {"content-type": (rec.get("headers") or {}).get("content-type", "application/json")}
    if "body" in rec:
        return httpx.Response(rec["status"], content=json.dumps(rec["body"]).encode(), headers=headers)
    return httpx.Response(rec["status"], content=(rec.get("body_text") or "").encode(), headers=headers)


def load_routes(dirname: str | Path, metrics: str = "metrics-idle.txt") -> dict[tuple[str, str], httpx.Response]:
    d = Path(dirname) if Path(dirname).is_absolute() else REAL / dirname
    routes: dict[tuple[str, str], httpx.Response] = {}
    files = sorted(d.glob("*.json"), key=lambda p: (p.name not in PREFERRED, p.name))
    for f in files:
        rec = json.loads(f.read_text())
        if not isinstance(rec, dict) or "method" not in rec:
            continue
        routes.setdefault((rec["method"], rec["path"]), _response(rec))
    if (d / metrics).exists():
        routes[("GET", "/metrics")] = httpx.Response(
            200, text=(d / metrics).read_text(), headers={"content-type": "text/plain; version=0.0.4"}
        )
    return routes


def not_found() -> httpx.Response:
    return _response(json.loads((REAL / "0.31.0-tiny-qwen3-livelock" / "no-v1-prefix.json").read_text()))


def transport(
    dirname: str | Path,
    metrics: str = "metrics-idle.txt",
    overrides: dict[tuple[str, str], httpx.Response] | None = None,
    seen: list[str] | None = None,
) -> httpx.MockTransport:
    routes = load_routes(dirname, metrics)
    routes.update(overrides or {})

    def handler(req: httpx.Request) -> httpx.Response:
        if seen is not None:
            seen.append(f"{req.method} {req.url.path} auth={'authorization' in req.headers}")
        r = routes.get((req.method, req.url.path))
        if r is None:
            return not_found()
        return httpx.Response(r.status_code, content=r.content, headers=r.headers)

    return httpx.MockTransport(handler)


Handler = Callable[[httpx.Request], httpx.Response]


class Clock:
    """A test's clock for a watch over replayed /metrics pages: ``sleep`` moves it on, so a watch takes no time."""

    def __init__(self) -> None:
        self.t = 1_795_986_000.0

    def __call__(self) -> float:
        return self.t

    def sleep(self, s: float) -> None:
        self.t += s


def livelock_metrics(metrics: str | None) -> httpx.MockTransport:
    """The lab's 0.31.0 livelock server's recordings with /metrics answered by the page ``metrics``
    (metrics-livelock-9s.txt, metrics-idle.txt), or refused 503 when None."""
    overrides = {} if metrics else {("GET", "/metrics"): httpx.Response(503, text="Service Unavailable")}
    return transport("0.31.0-tiny-qwen3-livelock", metrics or "metrics-idle.txt", overrides=overrides)

