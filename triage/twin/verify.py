"""Verify a fix on the real server: rerun what a stored run found, plus the seed's load test, and store the pair.

``verify(store, N)`` reads run N (the "before"), reruns on the same server what showed its symptom — the same
probes by name when N was a probe run (hang-capable ones only with ``allow_hang``: skipped otherwise, and said),
the checklist when N was a checklist run — and, when the seed matrix is rerun, the seed's load test (a bounded
burst of length-sorted long documents, ``triage.probes.seed.load_case_name``). The new run (the "after") is stored
like any other, with ``meta.verifies = N`` and the pair; run N gets ``meta.verified_by``. Exporters and History
read the pair from there (``pair_rows``).

Outcome: ``verified`` True when everything that was bad before is now clear and nothing new went bad (the load test
included); False when something still fails; None when nothing could be compared (every failing probe skipped).
"""
from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, Optional

from triage.events import RunEvent
from triage.findings import Finding, Status
from triage.recorder import OFFLINE_URL
from triage.store import RunRecord, Store
from triage.store.documents import IMPORTED
from triage.target import Target

BAD = ("fail", "warn", "error")
OK_OUTCOMES = ("ok",)


class VerifyError(ValueError):
    """Nothing to verify (no such run, no server URL): the message says what."""


@dataclass
class VerifyResult:
    before: int
    after: Optional[int] = None
    kind: str = "probe"  # what was rerun: probe | check
    pairs: list[dict[str, Any]] = field(default_factory=list)  # {"item", "before", "after", "result"}
    skipped: list[str] = field(default_factory=list)
    verified: Optional[bool] = None

    def to_dict(self) -> dict[str, Any]:
        return {"before": self.before, "after": self.after, "kind": self.kind, "verified": self.verified,
                "pairs": self.pairs, "skipped": self.skipped}


def _probe_bad(outcome: Optional[str]) -> bool:
    return outcome is not None and outcome not in OK_OUTCOMES and outcome != "skipped"


def compare(before: dict[str, Optional[str]], after: dict[str, Optional[str]], bad: Callable[[Optional[str]], bool],
            ) -> tuple[list[dict[str, Any]], Optional[bool]]:
    """Pure: each item's before and after, and whether the fix is verified (see the module's docstring)."""
    rows: list[dict[str, Any]] = []
    for item in sorted(set(before) | set(after)):
        b, a = before.get(item), after.get(item)
        if a is None:
            result = "not rerun"
        elif bad(b) and not bad(a):
            result = "cleared"
        elif bad(b):
            result = "still failing"
        elif bad(a):
            result = "new failure" if b is not None else "fails"
        else:
            result = "ok"
        rows.append({"item": item, "before": b, "after": a, "result": result})
    compared = [r for r in rows if r["result"] != "not rerun"]
    if not any(r["result"] in ("cleared", "still failing") for r in compared):
        # nothing that was bad could be rerun: only a new failure says anything
        return rows, (False if any(r["result"] in ("new failure", "fails") for r in compared) else None)
    return rows, not any(r["result"] in ("still failing", "new failure", "fails") for r in compared)


def _probe_plan(rec: RunRecord, allow_hang: bool) -> tuple[list[str], list[str], list[str]]:
    """(sets, probe names, skipped names) to rerun run ``rec``'s probes; the load test joins a rerun seed matrix."""
    from triage.probes.registry import PROBE_SETS
    from triage.probes.seed import load_case_name

    hang_sets = {p.id for p in PROBE_SETS if p.can_hang}
    sets: list[str] = []
    names: list[str] = []
    skipped: list[str] = []
    trunc: Optional[int] = None
    run_sets = [str(x) for x in rec.meta.get("sets") or []] if isinstance(rec.meta.get("sets"), list) else []
    for p in rec.probes:
        s = str(p.detail.get("set") or "")
        if not s:  # a run stored before the set was kept: the run's only set, else the set its name starts with
            by_name = [x for x in sorted(run_sets, key=len, reverse=True) if p.probe.startswith(x + "-")]
            s = run_sets[0] if len(run_sets) == 1 else (by_name[0] if by_name else "")
        if not s:
            skipped.append(f"{p.probe} (its probe set is not stored)")
            continue
        if s in hang_sets and not allow_hang:
            skipped.append(f"{p.probe} (can hang the server: pass --allow-hang)")
            continue
        if s not in sets:
            sets.append(s)
        names.append(p.probe)
        if s == "seed" and _probe_bad(p.outcome) and trunc is None:
            t = p.detail.get("truncate_prompt_tokens")
            trunc = t if isinstance(t, int) else None
    if "seed" in sets:
        t = trunc if trunc is not None else rec.meta.get("max_model_len")
        if isinstance(t, int) and load_case_name(t) not in names:
            names.append(load_case_name(t))
    return sets, names, skipped


def _lab_log_text(url: str) -> Optional[str]:
    """The start-up log of a lab server at ``url`` (the probe sets judge against it), else None."""
    try:
        from triage.lab.server import log_path_of
        path = log_path_of(url)
        return path.read_text(errors="replace") if path else None
    except (OSError, ValueError, ImportError):
        return None


def verify(store: Store, run_id: int, *, allow_hang: bool = False, url: Optional[str] = None,
           api_key: Optional[str] = None, verify_tls: bool = True, deadline_s: float = 60.0,
           on_event: Optional[Callable[[RunEvent], object]] = None,
           progress: Callable[[str], None] = lambda _: None) -> VerifyResult:
    rec = store.get_run(run_id, with_samples=False)
    if rec is None:
        raise VerifyError(f"no run {run_id} in this database")
    server = url or (rec.target.url if rec.target else None)
    if not server or server == OFFLINE_URL:
        raise VerifyError(f"run {run_id} has no server URL (a log or command-line run): pass --url")
    if not url and (api_key or rec.meta.get(IMPORTED)):
        raise VerifyError(_url_from_you(run_id, server, bool(api_key), bool(rec.meta.get(IMPORTED))))
    tinfo = rec.target
    target = Target(url=server, model=tinfo.model if tinfo else None,
                    truncation=tinfo.truncate_prompt_tokens if tinfo else None,
                    cmdline=tinfo.cmdline if tinfo else None, api_key=api_key, verify_tls=verify_tls)
    out = VerifyResult(run_id)
    if rec.probes:
        from triage.probes import run_probes

        sets, names, out.skipped = _probe_plan(rec, allow_hang)
        if not names:
            out.pairs = [{"item": s, "before": None, "after": None, "result": "not rerun"} for s in out.skipped]
            return out
        progress(f"rerunning {len(names)} probes of run {run_id} on {server}: {', '.join(names)}")
        res = run_probes(target.with_(log_text=_lab_log_text(server)), sets, allow_hang=allow_hang,
                         deadline_s=deadline_s, store=store, on_event=on_event, only=names)
        out.after = res.run_id
        before = {p.probe: p.outcome for p in rec.probes if p.probe in names}
        after = {o.probe: o.outcome for o in res.outcomes}
        out.pairs, out.verified = compare(before, after, _probe_bad)
    else:
        from triage.checklist import run_checklist

        out.kind = "check"
        progress(f"rerunning the checklist of run {run_id} on {server}")
        res = run_checklist(target, store, on_event)
        out.after = res.run_id
        before = {f.check: f.status.value for f in rec.findings}
        after = {f.check: f.status.value for f in res.findings}
        out.pairs, out.verified = compare(before, after, lambda s: s in BAD)
    if out.after is not None:
        doc = out.to_dict()
        store.add_finding(out.after, _finding(out))
        store.update_meta(out.after, {"verifies": run_id, "verification": doc})
        store.update_meta(run_id, {"verified_by": out.after})
        store.finish_run(out.after, _summary(out))
    return out


def _url_from_you(run_id: int, server: str, key: bool, imported: bool) -> str:
    """Why the server must come from the user: a credential is sent only where the user said, and an imported run's
    URL is the file's (issue 43: a hostile document's URL got the key in 7 requests)."""
    from triage.textsafe import one_line  # noqa: PLC0415

    whose = "was imported from a file: its server URL is the file's" if imported else "names a stored server URL"
    what = "your API key (--api-key-env) and the probes" if key else "the probes"
    return (f"run {run_id} {whose} ({one_line(server, 120)}), not one you gave now; {what} go only to a server you "
            f"name: pass --url URL (--url {one_line(server, 120)} to confirm that one)")


def _summary(out: VerifyResult) -> str:
    cleared = sum(r["result"] == "cleared" for r in out.pairs)
    still = sum(r["result"] in ("still failing", "new failure", "fails") for r in out.pairs)
    word = {True: "fix verified", False: "fix NOT verified", None: "nothing to compare"}[out.verified]
    return f"{word} against run {out.before}: {cleared} cleared, {still} failing" + (
        f", {len(out.skipped)} not rerun" if out.skipped else "")


def _finding(out: VerifyResult) -> Finding:
    status = {True: Status.PASS, False: Status.FAIL, None: Status.UNKNOWN}[out.verified]
    return Finding("verify-fix", status, _summary(out), out.to_dict(),
                   "" if out.verified is not False else "The fix did not clear the symptom on the real server: "
                   "see the rows still failing, and the run's own findings for the cause.")


def pair_rows(meta: dict[str, Any]) -> list[dict[str, Any]]:
    """The before/after rows a stored run carries (``meta.verification``), for exporters and pages."""
    doc = meta.get("verification") if isinstance(meta, dict) else None
    rows = doc.get("pairs") if isinstance(doc, dict) else None
    return [r for r in rows if isinstance(r, dict)] if isinstance(rows, list) else []
