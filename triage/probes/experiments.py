"""The experiment, run: which probe sets an ambiguous diagnosis asks for, and which of them may run now.

A "one of" diagnosis (``triage.differential``) names, per candidate, the probe set that tells it apart
(``FailureMode.experiment_probe``). ``experiment_sets`` picks those the probe registry knows, leaves out the sets
already run whole, and refuses a set that can hang a server unless the user allowed the hang (``--allow-hang``): the
refused ones come back with the reason, for the finding to say.
"""
from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

from triage.probes.registry import PROBE_SETS

_BY_ID = {p.id: p for p in PROBE_SETS}
# the cases of a set that make its experiment (``only`` globs; a set not named runs whole): the seed matrix's
# [SHORT, LONG] at max_model_len, max_model_len - 1 and -1 tell the livelock from the rest in three requests
EXPERIMENT_ONLY: dict[str, tuple[str, ...]] = {"seed": ("seed-short-long-t*",)}


@dataclass(frozen=True)
class ExperimentPlan:
    """The sets to run (in the order the diagnoses ask), and those refused: set id -> why."""

    run: tuple[str, ...] = ()
    refused: dict[str, str] = field(default_factory=dict)


def asked(diagnoses: Iterable[Any]) -> list[str]:
    """The probe sets the ambiguous diagnoses' experiments name, each once, in order."""
    out: list[str] = []
    for f in diagnoses:
        ev = f.get("evidence") if isinstance(f, dict) else getattr(f, "evidence", None)
        for e in (ev or {}).get("experiments") or []:
            probe = e.get("probe") if isinstance(e, dict) else None
            if probe and probe not in out:
                out.append(probe)
    return out


def experiment_sets(diagnoses: Iterable[Any], ran: Iterable[str] = (), allow_hang: bool = False) -> ExperimentPlan:
    done = set(ran)
    run: list[str] = []
    refused: dict[str, str] = {}
    for probe in asked(diagnoses):
        ps = _BY_ID.get(probe)
        if ps is None:
            refused[probe] = "no such probe set"
        elif probe in done:
            continue
        elif ps.can_hang and not allow_hang:
            refused[probe] = f"{ps.title} can hang the server until the probe aborts it: allow the hang to run it"
        else:
            run.append(probe)
    return ExperimentPlan(tuple(run), refused)
