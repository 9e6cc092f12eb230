"""The differential diagnosis: for every symptom a run shows, the records that can produce it, weighed by evidence.

``diagnose(findings, config, facts)`` returns one finding per shown symptom (check id ``diagnosis-<symptom>``,
declared in ``triage.catalogue.check_ids``). A symptom is *shown* when a FAIL or WARN finding reports a record that
declares it (``catalogue.mode_of``; a finding's ``evidence["symptoms"]`` list narrows its record's symptoms to
those this finding shows: an engine failure at start-up is no rejected request), or when a fact
``symptom.<name>`` is true. Its candidates are every record in ``catalogue.MODES`` that declares it; each
candidate's clues read the run's ``Case`` (its findings, config and the merged ``evidence["facts"]`` of its
findings, plus ``facts``).

The rule that names a cause (``judge``; tests/test_differential.py tables it):

- a candidate is *ruled out* when a clue reads a decisive "against" for it;
- a candidate *stands* otherwise; it is *proven* when it stands and a clue reads a decisive "for" it;
- the diagnosis NAMES a candidate X only when X is proven and every other candidate is ruled out or has no
  "for" at all (a proven X outweighs a candidate nothing speaks for); with two proven, or one proven beside
  another that something speaks for, nothing is named;
- otherwise it says "one of A or B" over the candidates that stand (those with a "for" first), and gives each
  one's ``experiment`` (with its ``experiment_probe`` when the tool can run it) instead of any single fix;
- when every candidate is ruled out it names none: "no known cause fits" (a cause the catalogue lacks);
- when no clue of any candidate read anything (nothing weighed for or against any record), the "one of" lists only
  the records that contributing findings of a text reader report (a ``log``-sourced check: it matched the
  release's own words for its record, e.g. "maximum context length is N tokens"): a list of every record that declares
  the symptom, none of them weighed, is no diagnosis. When those are all the contributing findings' records, the
  readers have named the cause themselves and a "one of" would only repeat them: no diagnosis finding for that
  symptom (the readers' findings carry their records' fixes). A probe's or a watch's finding keeps the whole list:
  it saw the symptom (a hang, a wait), and its record is the builder's first guess, not a reading of the cause.

A diagnosis never comes from missing data: a clue that lacks its fact says nothing, so with no evidence the
candidates all stand and the answer is "one of". The finding's status is its worst contributing finding's (a
symptom shown only by a fact is WARN); its fix is the named record's ``fix(config)``, else the experiments.
Findings of a previous diagnosis (``diagnosis-*``) are never read as symptoms, so re-diagnosing is idempotent.
A checklist verdict read from the config alone (a risk, nothing seen: its id's only source is the checklist and
its step is not the server's) shows no symptom: the differential weighs what was seen, and the risk's own
finding already carries its record's fix.
"""
from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any, Optional

from triage.catalogue import MODES, FailureMode, mode_of
from triage.catalogue.check_ids import CHECKLIST, CHECKS, LOG
from triage.catalogue.symptoms import SYMPTOMS, Case, Weight
from triage.findings import Finding, Status, worst

PREFIX = "diagnosis-"
NAMED, RULED_OUT, STANDS = "named", "ruled out", "stands"
_SHOWING = (Status.FAIL, Status.WARN)


def check_id(symptom: str) -> str:
    return f"{PREFIX}{symptom}"


def is_diagnosis(finding: Any) -> bool:
    return str(_get(finding, "check") or "").startswith(PREFIX)


@dataclass(frozen=True)
class Weighed:
    """One candidate record and what its clues read on the case."""

    mode: FailureMode
    weights: tuple[Weight, ...]

    @property
    def for_(self) -> tuple[Weight, ...]:
        return tuple(w for w in self.weights if w.direction == "for")

    @property
    def against(self) -> tuple[Weight, ...]:
        return tuple(w for w in self.weights if w.direction == "against")

    @property
    def ruled_out(self) -> bool:
        return any(w.decisive for w in self.against)

    @property
    def proven(self) -> bool:
        return not self.ruled_out and any(w.decisive for w in self.for_)


@dataclass(frozen=True)
class Judgement:
    """The rule's answer for one symptom: the named record (or None), the candidates that stand, those ruled out."""

    named: Optional[Weighed]
    standing: tuple[Weighed, ...]
    ruled_out: tuple[Weighed, ...]


def _get(f: Any, key: str) -> Any:
    return f.get(key) if isinstance(f, Mapping) else getattr(f, key, None)


def _status(f: Any) -> Optional[Status]:
    try:
        return Status(_get(f, "status"))
    except ValueError:
        return None


def merged_facts(findings: Iterable[Any], facts: Optional[Mapping[str, Any]] = None) -> dict[str, Any]:
    """The findings' ``evidence["facts"]`` merged in order (a later finding's value wins), then ``facts``."""
    out: dict[str, Any] = {}
    for f in findings:
        ev = _get(f, "evidence")
        got = ev.get("facts") if isinstance(ev, Mapping) else None
        if isinstance(got, Mapping):
            out.update({k: v for k, v in got.items() if v is not None})
    out.update({k: v for k, v in (facts or {}).items() if v is not None})
    return out


def weigh(mode: FailureMode, case: Case) -> Weighed:
    """Read every clue of ``mode``; a clue that raises says nothing (bad data is never evidence)."""
    weights: list[Weight] = []
    for clue in mode.clues:
        try:
            w = clue.read(case)
        except Exception:  # noqa: BLE001 - a clue on malformed evidence is silent, never a traceback or a verdict
            w = None
        if isinstance(w, Weight):
            weights.append(w)
    return Weighed(mode, tuple(weights))


def judge(candidates: Iterable[Weighed]) -> Judgement:
    """The naming rule of this module's docstring, on weighed candidates."""
    cands = tuple(candidates)
    out = tuple(c for c in cands if c.ruled_out)
    standing = tuple(c for c in cands if not c.ruled_out)
    proven = [c for c in standing if c.proven]
    named = None
    if len(proven) == 1 and all(c is proven[0] or not c.for_ for c in standing):
        named = proven[0]
    ordered = tuple(sorted(standing, key=lambda c: (not c.for_, not c.proven)))  # stable: catalogue order kept
    return Judgement(named, ordered, out)


def shown_symptoms(findings: Iterable[Any], facts: Mapping[str, Any]) -> dict[str, list[Any]]:
    """symptom -> the FAIL/WARN findings whose record declares it (in the run's order; [] when shown by a fact)."""
    shown: dict[str, list[Any]] = {}
    for f in findings:
        if is_diagnosis(f) or _status(f) not in _SHOWING or _predicted(f):
            continue
        mode = mode_of(f)
        ev = _get(f, "evidence")
        said = ev.get("symptoms") if isinstance(ev, Mapping) else None  # the builder's narrowing, when it knows
        for s in mode.symptoms if mode is not None else ():
            if not isinstance(said, list) or s in said:
                shown.setdefault(s, []).append(f)
    for key, val in facts.items():
        if key.startswith("symptom.") and val is True:
            shown.setdefault(key.removeprefix("symptom."), [])
    return shown


def candidates_of(symptom: str) -> list[FailureMode]:
    return [m for m in MODES.values() if symptom in m.symptoms]


def experiments(standing: Iterable[Weighed]) -> list[dict[str, Any]]:
    """Per standing candidate: its experiment and the probe set that runs it ('' when none). Whether a set may
    run (it can hang a server) is the probe registry's to say (``triage.probes.experiments``), not this module's:
    the probes import the differential, never the reverse."""
    return [{"mode": c.mode.id, "title": c.mode.title, "experiment": c.mode.experiment,
             "probe": c.mode.experiment_probe} for c in standing]


def _lines(ws: Iterable[Weight]) -> list[dict[str, Any]]:
    return [{"seen": w.seen, "source": w.source, "decisive": w.decisive} for w in ws]


def _why_out(c: Weighed) -> str:
    return "; ".join(w.seen for w in c.against if w.decisive)


def _predicted(f: Any) -> bool:
    """A checklist verdict read from the config alone (a risk, nothing seen): it shows no symptom."""
    d = CHECKS.get(str(_get(f, "check")))
    return d is not None and d.sources == (CHECKLIST,) and d.step not in (None, "server")


def _one_of(names: list[str]) -> str:
    if not names:
        return "no known cause fits"
    if len(names) == 1:
        return f"one of {names[0]} or a cause the catalogue does not know"
    return "one of " + ", ".join(names[:-1]) + f" or {names[-1]}"


def _seen(f: Any, record_title: str) -> str:
    """What a contributing finding says beyond its record's title ('' when it only repeats it)."""
    title = str(_get(f, "title") or "")
    if record_title not in title:
        return title
    rest = title.replace(f"({record_title})", "").replace(record_title, "").strip(" —:-()")
    return title.replace(f" ({record_title})", "") if len(rest) >= 12 else ""


def evidenced(weighed: Iterable[Weighed], j: Judgement,
              contributing: Iterable[Any]) -> tuple[tuple[Weighed, ...], bool]:
    """The standing candidates a "one of" lists (module docstring), and whether the readers already named them all."""
    if any(c.weights for c in weighed):
        return j.standing, False
    contributing = list(contributing)
    if not contributing or not all(_read_from_text(f) for f in contributing):
        return j.standing, False
    reported = {str(_get(f, "failure_mode") or "") for f in contributing}
    spoken = tuple(c for c in j.standing if c.mode.id in reported)
    return (spoken, True) if spoken else (j.standing, False)


def _read_from_text(f: Any) -> bool:
    """A finding of a text reader (a log-sourced check) that reports a record: the cause read in vLLM's words."""
    d = CHECKS.get(str(_get(f, "check")))
    return d is not None and d.sources == (LOG,) and bool(_get(f, "failure_mode"))


def diagnose_symptom(symptom: str, contributing: list[Any], case: Case, config: Any = None) -> Optional[Finding]:
    """The diagnosis finding of one shown symptom (None when the readers' own findings already name its cause)."""
    weighed = [weigh(m, case) for m in candidates_of(symptom)]
    j = judge(weighed)
    if j.named is None and j.standing:
        spoken, redundant = evidenced(weighed, j, contributing)
        if redundant:
            return None
        j = Judgement(None, spoken, j.ruled_out)
    status = worst(s for s in (_status(f) for f in contributing) if s is not None) if contributing else Status.WARN
    what = SYMPTOMS.get(symptom, symptom)
    if j.named is not None:
        # the named record's own finding says what was seen (e.g. which option was removed): the title carries it
        seen = next((t for t in (_seen(f, j.named.mode.title) for f in contributing
                                 if _get(f, "failure_mode") == j.named.mode.id) if t), "")
        title = f"{what}: {j.named.mode.title}" + (f" — {seen}" if seen else "")
        fix = j.named.mode.fix(config if config is not None else {})
        mode_id = j.named.mode.id
    else:
        title = f"{what}: {_one_of([c.mode.id for c in j.standing])}"
        exps = experiments(j.standing)
        fix = " ".join(f"To tell {e['title']!r}: {e['experiment']}" + (f" (probe set {e['probe']})" if e["probe"]
                                                                        else "")
                       for e in exps if e["experiment"]) or ""
        mode_id = ""
    named_id = j.named.mode.id if j.named is not None else None
    rows = []
    for c in weighed:
        verdict = NAMED if c.mode.id == named_id else RULED_OUT if c.ruled_out else STANDS
        rows.append({"mode": c.mode.id, "title": c.mode.title, "verdict": verdict,
                     "for": _lines(c.for_), "against": _lines(c.against),
                     "experiment": c.mode.experiment, "experiment_probe": c.mode.experiment_probe})
    evidence: dict[str, Any] = {
        "symptom": symptom,
        "symptom_text": what,
        "named": named_id,
        "candidates": rows,
        "ruled_out": [f"{c.mode.title} — {_why_out(c)}" for c in j.ruled_out],
        "experiments": [] if j.named is not None else experiments(j.standing),
        "contributing": [{"check": _get(f, "check"), "status": getattr(_status(f), "value", None),
                          "title": _get(f, "title"), "failure_mode": _get(f, "failure_mode") or ""}
                         for f in contributing],
    }
    refs = list(j.named.mode.refs) if j.named is not None else []
    return Finding(check_id(symptom), status, title, evidence, fix, refs, failure_mode=mode_id)


def diagnose(findings: Iterable[Any], config: Any = None, facts: Optional[Mapping[str, Any]] = None) -> list[Finding]:
    """One ``diagnosis-<symptom>`` finding per symptom the findings show (module docstring: the rule)."""
    fs = [f for f in findings if not is_diagnosis(f)]
    merged = merged_facts(fs, facts)
    cfg = config if config is not None else {}
    case = Case(tuple(fs), cfg, merged)
    out = (diagnose_symptom(s, contributing, case, cfg) for s, contributing in shown_symptoms(fs, merged).items())
    return [d for d in out if d is not None]
