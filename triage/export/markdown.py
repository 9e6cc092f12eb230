"""Ticket-ready Markdown: verdict, findings by root cause (the fix once), every finding's evidence, config, probes.

Server-, log- and user-supplied strings go into code spans or fenced blocks (where Markdown
renders nothing) or are escaped, so a model named ``<script>`` stays text in any tracker.
"""
from __future__ import annotations

import json
import re
from collections.abc import Iterable
from typing import Any

from triage import fixblocks
from triage.export import view
from triage.export.groups import FindingGroup, document_groups
from triage.headline import Verdict
from triage.redact import redact_text

# Intraword "_" and "()" render as text in CommonMark/GFM, so they stay readable unescaped.
_MD_SPECIAL = re.compile(r"([\\`*\[\]<>|~]|(?<!\w)_|_(?!\w))")
_LINE_START = re.compile(r"^(\s*)([#>+=-]|\d+[.)])")


def text(s: Any, starts_line: bool = False) -> str:
    """Inline text: Markdown and HTML specials escaped, one line; at a line start it cannot open a block."""
    one_line = _MD_SPECIAL.sub(r"\\\1", str(s)).replace("\r", " ").replace("\n", " ")
    if not starts_line:
        return one_line
    return _LINE_START.sub(lambda m: m.group(1) + (m.group(2)[:-1] + "\\" + m.group(2)[-1] if m.group(2)[0].isdigit()
                                                   else "\\" + m.group(2)), one_line)


def code(s: Any) -> str:
    """An inline code span that survives any backticks inside and stays one table cell."""
    s = str(s).replace("\r", " ").replace("\n", " ").replace("|", "\\|")
    if not s:
        return ""
    ticks = "`" * (max((len(m) for m in re.findall(r"`+", s)), default=0) + 1)
    pad = " " if s.startswith("`") or s.endswith("`") else ""
    return f"{ticks}{pad}{s}{pad}{ticks}"


def block(s: str, lang: str = "") -> str:
    fence = "`" * max(3, max((len(m) for m in re.findall(r"`+", s)), default=0) + 1)
    return f"{fence}{lang}\n{s.rstrip()}\n{fence}"


def table(header: Iterable[str], rows: Iterable[Iterable[str]]) -> str:
    head = list(header)
    lines = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    lines += ["| " + " | ".join(row) + " |" for row in rows]
    return "\n".join(lines)


def _finding(f: dict[str, Any], group_fix: str = "") -> str:
    parts = [f"### {f['status'].upper()}: {text(f['title'])} ({code(f['check'])})"]
    if f.get("explanation"):
        parts.append(text(f["explanation"], starts_line=True))
    if f.get("evidence"):
        parts.append("Evidence:\n\n" + block(json.dumps(f["evidence"], indent=2, sort_keys=True, default=str), "json"))
    if f.get("fix") and f["fix"] != group_fix:  # the root cause's fix stands once, in its headline
        parts.append(f"**Fix:** {text(f['fix'])}")
    if f.get("refs"):
        parts.append("Refs: " + ", ".join(ref(r) for r in f["refs"]))
    return "\n\n".join(parts)


def _group(g: FindingGroup, findings: list[dict[str, Any]]) -> str:
    """One root cause: what it is, how many findings show it, the fix once, the findings beneath."""
    parts = [f"### {g.status.upper()}: {text(g.mode.title)} ({code(g.mode.id)}): shown by {g.count} finding(s)",
             text(g.mode.mechanism, starts_line=True)]
    facts = ([f"Affected: {code(g.mode.affected_text)}"] if g.mode.affected else []) + (
        ["Refs: " + ", ".join(ref(r) for r in g.mode.refs)] if g.mode.refs else [])
    if facts:
        parts.append(" · ".join(facts))
    if g.fix:
        parts.append(f"**Fix:** {fixblocks.link_refs(text(g.fix))}")
    parts.append(table(["status", "check", "title"], [(findings[i]["status"].upper(), code(findings[i]["check"]),
                                                        text(findings[i]["title"])) for i in g.indices]))
    return "\n\n".join(parts)


def ref(r: Any) -> str:
    """A reference in a code span; a vLLM issue/PR one is a link to it."""
    url = fixblocks.ref_url(str(r))
    return f"[{code(r)}]({url})" if url and re.fullmatch(r"vllm ?#\d+", str(r).strip()) else code(r)


def fix_section(v: Verdict) -> list[str]:
    """The verdict's fix as copyable fenced blocks (triage.fixblocks), right under the verdict."""
    blocks = v.blocks
    if not blocks:
        return []
    out = ["## Fix: copy and paste"]
    for b in blocks:
        out.append(f"**{text(b.title)}**" + (f" ({text(b.note)})" if b.note else ""))
        out.append(block(b.code, b.language))
    return out


def scope_section(doc: dict[str, Any], v: Verdict) -> list[str]:
    """What a healthy verdict covered and what not (the dashboard's "What this verdict covers")."""
    rows = view.scope_rows(doc, v)
    if not rows:
        return []
    return ["## What this verdict covers", table(["", "part", ""], [(c, text(p), text(h)) for c, p, h in rows])]


def render_document(doc: dict[str, Any], secrets: Iterable[str] = ()) -> bytes:
    v = view.verdict(doc)  # the one verdict (triage.headline): laid out here, never recomputed
    counts = ", ".join(f"{n} {s}" for s, n in v.counts.items())
    out = [f"# vLLM embedding triage: run {doc['run'].get('id')}",
           f"**Verdict: {v.status.upper()}** ({counts or 'no findings'}): {text(v.headline)}",
           table(["", ""], [(k, code(val)) for k, val in view.target_rows(doc)]),
           *scope_section(doc, v),
           *fix_section(v),
           "## Findings"]
    findings = doc.get("findings") or []
    grouped, rest = document_groups(doc)
    group_fix: dict[int, str] = {i: g.fix for g in grouped for i in g.indices}
    for g in grouped:
        out += [_group(g, findings)]
    if rest and grouped:
        out.append("### Other findings")
    if rest:
        out.append(table(["status", "check", "title"], [(findings[i]["status"].upper(), code(findings[i]["check"]),
                                                          text(findings[i]["title"])) for i in rest]))
    if findings:
        out.append("## Finding details")
        out += [_finding(findings[i], group_fix.get(i, "")) for g in grouped for i in g.indices]
        out += [_finding(findings[i]) for i in rest]
    else:
        out.append("No findings recorded.")
    out.append("## Effective config")
    rows = view.config_rows(doc)
    out.append(table(["key", "value", "source", "detail"],
                     [(code(k), code(val), code(src), text(det)) for k, val, src, det in rows])
               if rows else "No effective config recorded.")
    conflicts = view.conflict_rows(doc)
    if conflicts:
        out += ["### Conflicting evidence", table(["key", "chosen", "others"],
                                                  [(code(k), code(c), code(o)) for k, c, o in conflicts])]
    sources = view.source_rows(doc)
    if sources:
        out += ["### Evidence sources", table(["source", "state"], [(code(k), text(v)) for k, v in sources])]
    line, pairs = view.verification(doc)
    if line:
        out += ["## Before and after", text(line)]
        if pairs:
            out.append(table(["probe or check", "before", "after", "result"],
                             [(code(i), code(b), code(a), text(r)) for i, b, a, r in pairs]))
    out.append("## Probes")
    probes = view.probe_rows(doc)
    out.append(table(["probe", "outcome", "HTTP", "duration s", "verdict after s", "recovery"],
                     [(code(p["probe"]), code(p["outcome"]), p["http_status"], p["duration_s"],
                       p["time_to_verdict_s"], text(p["recovery"])) for p in probes])
               if probes else "No probes ran.")
    stats = view.sample_summary(doc)
    if stats:
        out += ["## Engine stats", table(["", ""], [(text(k), code(val)) for k, val in stats.items()])]
    caps = doc.get("captures") or []
    if caps:
        out += ["## Raw captures", table(["kind", "name", "captured", "bytes"],
                                         [(code(c["kind"]), code(c.get("name") or ""), c.get("created_at") or "",
                                           str(len((c.get("content") or "").encode()))) for c in caps])]
    meta = view.meta_rows(doc)
    if meta:
        out += ["## Run details", table(["", ""], [(code(k), code(val)) for k, val in meta])]
    out += ["## Versions", table(["component", "version"], [(code(k), code(val)) for k, val in view.versions(doc)])]
    body = "\n\n".join(out) + "\n"
    return redact_text(body, tuple(s for s in secrets if s)).encode("utf-8")
