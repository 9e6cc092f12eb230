"""What changed between two releases' snapshots that matters to an embedding server, as lines to print.

Options added, removed, renamed (one dest, new spelling) and new negation forms; pooling defaults;
the batch-budget statements; PoolerConfig fields and refusals; metric names; the log formats the
readers depend on; new start-up refusals. ``[]`` means nothing that matters changed.
"""

from __future__ import annotations

import difflib
from typing import Any


def _by_dest(options: dict[str, Any]) -> dict[str, set[str]]:
    out: dict[str, set[str]] = {}
    for e in options.values():
        out.setdefault(e["dest"], set()).update(e["strings"])
    return out


def option_changes(old: dict[str, Any], new: dict[str, Any]) -> list[str]:
    lines: list[str] = []
    n_strings = {s for e in new.values() for s in e["strings"]}
    o_dest = _by_dest(old)
    added = {k for k in new if k not in old}
    removed = {k for k in old if k not in new}
    renamed = set()
    for k in sorted(added):
        dest = new[k]["dest"]
        if dest in o_dest and not (o_dest[dest] & set(new[k]["strings"])):
            was = sorted(o_dest[dest] - n_strings)
            if was:
                lines.append(f"option renamed: {', '.join(was)} -> {k} (dest {dest})")
                renamed.add(k)
                renamed.update(c for c in removed if old[c]["dest"] == dest)
    for k in sorted(added - renamed):
        forms = new[k]["strings"]
        lines.append(f"option added: {k}" + (f" ({', '.join(forms)})" if len(forms) > 1 else ""))
    for k in sorted(removed - renamed):
        lines.append(f"option removed: {k}")
    for k in sorted(set(old) & set(new)):
        a, b = old[k], new[k]
        extra = sorted(set(b["strings"]) - set(a["strings"]))
        gone = sorted(set(a["strings"]) - set(b["strings"]))
        if extra:
            what = ", ".join(f"{s} (sets {b.get('sets', {}).get(s)!r})" if s in b.get("sets", {}) else s for s in extra)
            lines.append(f"new spelling for {k}: {what}")
        if gone:
            lines.append(f"spelling gone for {k}: {', '.join(gone)}")
        if a.get("kind") != b.get("kind"):
            lines.append(f"option {k}: kind {a.get('kind')} -> {b.get('kind')}")
        if a.get("default") != b.get("default") and k in _WATCHED_DEFAULTS:
            lines.append(f"option {k}: default {a.get('default')!r} -> {b.get('default')!r}")
        if a.get("choices") != b.get("choices") and k in _WATCHED_DEFAULTS:
            lines.append(f"option {k}: choices {a.get('choices')} -> {b.get('choices')}")
    return lines


# Options whose default or choices an embedding verdict reads.
_WATCHED_DEFAULTS = {
    "--max-model-len", "--max-num-batched-tokens", "--max-num-seqs", "--enable-chunked-prefill",
    "--enable-prefix-caching", "--runner", "--convert", "--dtype", "--kv-cache-dtype", "--gpu-memory-utilization",
    "--pooler-config", "--task", "--disable-log-stats", "--enable-log-requests", "--block-size",
}


def _keyed(section: str, old: dict[str, Any], new: dict[str, Any], label: str) -> list[str]:
    lines = [f"{label} added: {k}" for k in sorted(set(new) - set(old))]
    lines += [f"{label} removed: {k}" for k in sorted(set(old) - set(new))]
    return lines


def report(old: dict[str, Any], new: dict[str, Any]) -> list[str]:
    """Lines saying what changed from ``old`` to ``new`` (full snapshots)."""
    lines = option_changes(old.get("options", {}), new.get("options", {}))
    po, pn = old.get("pooling_defaults", {}), new.get("pooling_defaults", {})
    for case in sorted(set(po) | set(pn)):
        if case.startswith("_"):
            continue
        if po.get(case) != pn.get(case):
            lines.append(f"pooling default, {case}: {po.get(case)} -> {pn.get(case)}")
    bo, bn = old.get("batch_rule", {}).get("source", ""), new.get("batch_rule", {}).get("source", "")
    if bo != bn:
        diff = [d for d in difflib.unified_diff(bo.splitlines(), bn.splitlines(), lineterm="", n=0)
                if d[:1] in "+-" and not d.startswith(("+++", "---"))]
        lines.append("default max_num_batched_tokens rule changed (vllm/engine/arg_utils.py):")
        lines += [f"    {d}" for d in diff]
    qo, qn = old.get("pooler_config", {}), new.get("pooler_config", {})
    for f in sorted(set(qn.get("fields", [])) - set(qo.get("fields", []))):
        lines.append(f"PoolerConfig field added: {f}")
    for f in sorted(set(qo.get("fields", [])) - set(qn.get("fields", []))):
        lines.append(f"PoolerConfig field removed: {f}")
    ro, rn = qo.get("refused", {}) or {}, qn.get("refused", {}) or {}
    for k in sorted(set(rn) - set(ro)):
        lines.append(f"PoolerConfig now refuses {k}: {rn[k][:160]}")
    for k in sorted(set(ro) - set(rn)):
        lines.append(f"PoolerConfig accepts again {k}")
    mo, mn = old.get("max_model_len", {}), new.get("max_model_len", {})
    for k in sorted(set(mo) | set(mn)):
        if k != "file" and mo.get(k) != mn.get(k):
            lines.append(f"max_model_len derivation, {k}: {mo.get(k)!r} -> {mn.get(k)!r}")
    so, sn = old.get("scheduler", {}), new.get("scheduler", {})
    if so.get("pooling_reserves_a_slot") != sn.get("pooling_reserves_a_slot") or so.get("slot") != sn.get("slot"):
        lines.append(f"scheduler: the sampled-token slot of a pooling request (the pooling livelock's mechanism): "
                     f"{so.get('slot')!r} -> {sn.get('slot')!r}")
    lines += _keyed("metrics", old.get("metrics", {}), new.get("metrics", {}), "metric")
    lo, ln = old.get("log_formats", {}), new.get("log_formats", {})
    for m in sorted(set(lo) | set(ln)):
        a = [x["text"] for x in lo.get(m, [])]
        b = [x["text"] for x in ln.get(m, [])]
        if a != b:
            if not b:
                lines.append(f"log format gone: no string with {m!r} any more")
            elif not a:
                lines.append(f"log format new: {m!r} in {ln[m][0]['file']}: {b[0][:160]}")
            else:
                for t in b:
                    if t not in a:
                        lines.append(f"log format changed for {m!r}: {t[:200]}")
    fo, fn = old.get("refusals", {}), new.get("refusals", {})
    for text in sorted(set(fn) - set(fo)):
        lines.append(f"new start-up refusal ({fn[text]}): {text[:240]}")
    return lines
