"""One self-contained, offline HTML report: plotly.js inlined once, findings by root cause, charts, config, probes.

Safety, in two layers:
- every string from a server, log or user goes through html.escape; chart data sits in
  ``<script type="application/json">`` blocks (never executed) with ``<``, ``>``, ``&`` and
  U+2028/9 written as JSON escapes, and one small bootstrap script draws them. This is the
  figure JSON of ``fig.to_html(full_html=False, include_plotlyjs=False)`` without its inline
  per-chart scripts, so the page holds exactly two scripts;
- a Content-Security-Policy allows only those two scripts (by sha256) and no network at all,
  so even a string that escaped escaping could not run or phone home.
"""
from __future__ import annotations

import base64
import functools
import hashlib
import html
import json
from collections.abc import Iterable
from typing import Any

import plotly.graph_objects as go
import plotly.io as pio
from plotly.offline import get_plotlyjs

from triage import charts, fixblocks
from triage.export import rows, view
from triage.export.groups import FindingGroup, document_groups
from triage.headline import Verdict
from triage.redact import redact_text

CAPTURE_PREVIEW_BYTES = 32_000

_BOOT = """(function () {
  var nodes = document.querySelectorAll('script[type="application/json"][data-chart]');
  for (var i = 0; i < nodes.length; i++) {
    var fig = JSON.parse(nodes[i].textContent);
    var div = document.getElementById(nodes[i].getAttribute('data-chart'));
    Plotly.newPlot(div, fig.data || [], fig.layout || {}, {displaylogo: false, responsive: true});
  }
})();"""

_CSS = """body{font:14px/1.45 system-ui,sans-serif;margin:1.5em auto;max-width:1200px;padding:0 1em;color:#222}
table{border-collapse:collapse;margin:.5em 0 1.2em;width:100%}th,td{border:1px solid #ddd;padding:4px 8px;
text-align:left;vertical-align:top}th{background:#f4f4f4}code,pre{font:12px/1.4 ui-monospace,monospace}
pre{background:#f7f7f7;padding:8px;overflow:auto;max-height:420px;white-space:pre-wrap;word-break:break-all}
.st{display:inline-block;padding:1px 8px;border-radius:9px;color:#fff;font-weight:600;font-size:12px}
.st-fail,.st-error{background:#c62828}.st-warn{background:#ef6c00}.st-unknown{background:#757575}
.st-pass{background:#2e7d32}.verdict{font-size:18px;margin:.4em 0 1em}.chart{min-height:380px}"""


def esc(s: Any) -> str:
    return html.escape("" if s is None else str(s), quote=True)


def badge(status: str) -> str:
    return f'<span class="st st-{esc(status)}">{esc(status.upper())}</span>'


def safe_json(obj: Any) -> str:
    """JSON that cannot close its <script> element or start markup inside it."""
    s = obj if isinstance(obj, str) else json.dumps(obj, default=str)
    return (s.replace("&", "\\u0026").replace("<", "\\u003c").replace(">", "\\u003e")
            .replace("\u2028", "\\u2028").replace("\u2029", "\\u2029"))


def _table(header: Iterable[str], rows: Iterable[Iterable[Any]], raw: bool = False) -> str:
    head = "".join(f"<th>{esc(h)}</th>" for h in header)
    body = "".join("<tr>" + "".join(f"<td>{c if raw else esc(c)}</td>" for c in row) + "</tr>" for row in rows)
    return f"<table><thead><tr>{head}</tr></thead><tbody>{body}</tbody></table>"


def figures(doc: dict[str, Any]) -> list[tuple[str, dict[str, Any]]]:
    """The run's charts (engine stats, probe timelines) as figure dicts, when there is data for them."""
    out = []
    if doc.get("samples"):
        out.append(("Engine stats", charts.engine_stats_figure(rows.document_samples(doc))))
    if any((p.get("detail") or {}).get("samples") for p in doc.get("probes") or []):
        out.append(("Probe timelines", charts.probe_timeline_figure(rows.document_probe_series(doc))))
    return [(title, svg_only(fig)) for title, fig in out]


def svg_only(fig: go.Figure) -> dict[str, Any]:
    """WebGL traces drawn as SVG: a report must render without a GPU (headless, print to PDF), and
    plotly's WebGL path compiles shaders with eval, which the page's CSP rightly forbids."""
    d = fig.to_dict()
    for trace in d.get("data", []):
        if trace.get("type") == "scattergl":
            trace["type"] = "scatter"
    return d


def _finding_rows(fs: list[dict[str, Any]], idx: Iterable[int]) -> str:
    return _table(["status", "check", "title"], [(badge(fs[i]["status"]), f"<code>{esc(fs[i]['check'])}</code>",
                                                   esc(fs[i]["title"])) for i in idx], raw=True)


def _group(g: FindingGroup, fs: list[dict[str, Any]]) -> str:
    """One root cause: what it is, how many findings show it, the fix once, the findings beneath."""
    facts = ([f"Affected: <code>{esc(g.mode.affected_text)}</code>"] if g.mode.affected else []) + (
        ["Refs: " + ", ".join(ref(r) for r in g.mode.refs)] if g.mode.refs else [])
    return (f"<div class=\"group\"><h3>{badge(g.status)} {esc(g.mode.title)} (<code>{esc(g.mode.id)}</code>): "
            f"shown by {g.count} finding(s)</h3><p>{esc(g.mode.mechanism)}</p>"
            + (f"<p>{' · '.join(facts)}</p>" if facts else "")
            + (f"<p><b>Fix:</b> {fixblocks.link_refs(esc(g.fix), 'html')}</p>" if g.fix else "")
            + _finding_rows(fs, g.indices) + "</div>")


def _detail(f: dict[str, Any], group_fix: str = "") -> str:
    inner = [f"<p>{esc(f['explanation'])}</p>" if f.get("explanation") else ""]
    if f.get("evidence"):
        inner.append("<pre>" + esc(json.dumps(f["evidence"], indent=2, sort_keys=True, default=str)) + "</pre>")
    if f.get("fix") and f["fix"] != group_fix:  # the root cause's fix stands once, in its headline
        inner.append(f"<p><b>Fix:</b> {esc(f['fix'])}</p>")
    if f.get("refs"):
        inner.append("<p>Refs: " + ", ".join(ref(r) for r in f["refs"]) + "</p>")
    return (f"<details><summary>{badge(f['status'])} {esc(f['title'])} "
            f"(<code>{esc(f['check'])}</code>)</summary>{''.join(inner)}</details>")


def ref(r: Any) -> str:
    """A reference as code; a vLLM issue/PR one is a link to it."""
    url = fixblocks.ref_url(str(r))
    if url and str(r).strip().lower().startswith("vllm"):
        return f'<a href="{esc(url)}"><code>{esc(r)}</code></a>'
    return f"<code>{esc(r)}</code>"


def fix_section(v: Verdict) -> str:
    """The verdict's fix as copyable blocks (triage.fixblocks), right under the verdict."""
    blocks = v.blocks
    if not blocks:
        return ""
    parts = ["<h2>Fix: copy and paste</h2>"]
    for b in blocks:
        parts.append(f"<p><b>{esc(b.title)}</b>" + (f" ({esc(b.note)})" if b.note else "") + "</p>"
                     f"<pre class=\"fix\"><code>{esc(b.code)}</code></pre>")
    return "".join(parts)


def _findings(doc: dict[str, Any]) -> str:
    fs = doc.get("findings") or []
    if not fs:
        return "<p>No findings recorded.</p>"
    grouped, rest = document_groups(doc)
    parts = [_group(g, fs) for g in grouped]
    if rest:
        parts.append(("<h3>Other findings</h3>" if grouped else "") + _finding_rows(fs, rest))
    parts.append("<h3>Finding details</h3>")
    parts += [_detail(fs[i], g.fix) for g in grouped for i in g.indices]
    parts += [_detail(fs[i]) for i in rest]
    return "".join(parts)


def _captures(doc: dict[str, Any]) -> str:
    parts = []
    for c in doc.get("captures") or []:
        content = c.get("content") or ""
        cut = content.encode()[:CAPTURE_PREVIEW_BYTES].decode("utf-8", "ignore")
        more = "" if len(cut) == len(content) else f"\n… ({len(content.encode())} bytes in all; see the bundle)"
        parts.append(f"<details><summary><code>{esc(c['kind'])}</code> {esc(c.get('name') or '')} "
                     f"({esc(c.get('created_at') or '')})</summary><pre>{esc(cut + more)}</pre></details>")
    return "".join(parts) or "<p>No raw captures.</p>"


def _verification(doc: dict[str, Any]) -> str:
    line, pairs = view.verification(doc)
    if not line:
        return ""
    return (f"<h2>Before and after</h2><p class=\"verification\">{esc(line)}</p>"
            + (_table(["probe or check", "before", "after", "result"], pairs) if pairs else ""))


def _body(doc: dict[str, Any], v: Verdict) -> tuple[str, str]:
    """(body HTML, chart data blocks) of the run and its one verdict; everything here is already escaped."""
    counts = ", ".join(f"{n} {s}" for s, n in v.counts.items()) or "no findings"
    charts_html, data_blocks = [], []
    for i, (title, fig) in enumerate(figures(doc)):
        cid = f"chart-{i}"
        charts_html.append(f"<h3>{esc(title)}</h3><div class=\"chart\" id=\"{cid}\"></div>")
        fig_json = safe_json(pio.to_json(fig, validate=False))
        data_blocks.append(f'<script type="application/json" data-chart="{cid}">{fig_json}</script>')
    probes = view.probe_rows(doc)
    stats = view.sample_summary(doc)
    config, conflicts, sources = view.config_rows(doc), view.conflict_rows(doc), view.source_rows(doc)
    meta = view.meta_rows(doc)
    body = "".join([
        f"<h1>vLLM embedding triage: run {esc(doc['run'].get('id'))}</h1>",
        f"<p class=\"verdict\">Verdict: {badge(v.status)} ({esc(counts)}): {esc(v.headline)}</p>",
        _table(["", ""], view.target_rows(doc)),
        ("<h2>What this verdict covers</h2>" + _table(["", "part", ""], view.scope_rows(doc, v))
         if view.scope_rows(doc, v) else ""),
        fix_section(v),
        "<h2>Findings</h2>", _findings(doc),
        "<h2>Charts</h2>", "".join(charts_html) or "<p>No metric samples or probe timelines in this run.</p>",
        _verification(doc),
        "<h2>Probes</h2>",
        _table(["probe", "outcome", "HTTP", "duration s", "verdict after s", "recovery"],
               [(p["probe"], p["outcome"], p["http_status"], p["duration_s"], p["time_to_verdict_s"], p["recovery"])
                for p in probes]) if probes else "<p>No probes ran.</p>",
        ("<h2>Engine stats</h2>" + _table(["", ""], stats.items())) if stats else "",
        "<h2>Effective config</h2>",
        _table(["key", "value", "source", "detail"], config) if config else "<p>No effective config recorded.</p>",
        ("<h3>Conflicting evidence</h3>" + _table(["key", "chosen", "others"], conflicts)) if conflicts else "",
        ("<h3>Evidence sources</h3>" + _table(["source", "state"], sources)) if sources else "",
        "<h2>Raw captures</h2>", _captures(doc),
        ("<h2>Run details</h2>" + _table(["", ""], meta)) if meta else "",
        "<h2>Versions</h2>", _table(["component", "version"], view.versions(doc)),
    ])
    return body, "".join(data_blocks)


def _sha256(script: str) -> str:
    return "'sha256-" + base64.b64encode(hashlib.sha256(script.encode("utf-8")).digest()).decode() + "'"


@functools.cache
def _plotly_js() -> tuple[str, str]:
    """plotly.js from the installed package (no CDN: the report works offline) and its CSP hash."""
    js = get_plotlyjs()
    return js, _sha256(js)


def render_document(doc: dict[str, Any], secrets: Iterable[str] = ()) -> bytes:
    secrets = tuple(s for s in secrets if s)
    v = view.verdict(doc)  # the one verdict (triage.headline): laid out here, never recomputed
    body, data = _body(doc, v)
    body, data = redact_text(body, secrets), redact_text(data, secrets)
    plotly_js, plotly_hash = _plotly_js()
    csp = (f"default-src 'none'; script-src {plotly_hash} {_sha256(_BOOT)}; style-src 'unsafe-inline'; "
           "img-src data: blob:; font-src data:; connect-src 'none'; base-uri 'none'; form-action 'none'")
    title = esc(f"vLLM triage run {doc['run'].get('id')}: {v.status}")
    page = (f"<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">"
            f"<meta http-equiv=\"Content-Security-Policy\" content=\"{csp}\">"
            f"<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">"
            f"<title>{title}</title><style>{_CSS}</style>"
            f"<script>{plotly_js}</script></head>\n<body>{body}\n{data}<script>{_BOOT}</script></body></html>\n")
    return page.encode("utf-8")
