"""A verdict's scope: the parts of a diagnosis (set-up, log, real requests, vectors, load) and which a run read.

A healthy verdict is only as wide as what was looked at: a checklist that passes has read the set-up
from the sources that answered, and said nothing about real requests, the vectors or the server under
load. ``scope`` turns what a run read (its effective config's sources, the probe sets run for the
same target) into one row per part, checked or not, so every face says the same scope. The faces map a
part's ``id`` to where it is checked (a dashboard page, a CLI command); the wording lives here, once.
"""
from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass


@dataclass(frozen=True)
class Part:
    """One part of a diagnosis: what it covers, and what reads it (config sources or probe sets)."""

    id: str
    title: str
    unchecked: str  # what is not known while it is unchecked
    sources: tuple[str, ...] = ()  # effective-config sources that read it ("ok" in config["sources"])
    probe_sets: tuple[str, ...] = ()  # probe sets that check it


PARTS: tuple[Part, ...] = (
    Part("setup", "The set-up (version, backend, GPU memory, flags, chunked prefill, truncation)",
         "the server's set-up was not read", sources=("server", "cmdline", "process", "nvml")),
    Part("log", "The server's log", "no log was read: start-up warnings and engine stats lines are unseen",
         sources=("log",)),
    Part("probes", "Real requests (conformance probes)",
         "no real request was sent: what clients send was not tried", probe_sets=("conformance",)),
    Part("vectors", "The vectors (are they the model's; do client libraries get the same)",
         "the vectors were not compared with the model's", probe_sets=("vectors", "clients")),
    Part("load", "Behaviour under load (throughput, concurrency)",
         "the server was not tried under concurrent load", probe_sets=("throughput",)),
)


@dataclass(frozen=True)
class Covered:
    """One part and whether the verdict covered it, with how (the sources read, or the probe sets run)."""

    part: Part
    checked: bool
    how: str = ""


def scope(sources: Mapping[str, str] | None, probe_sets_run: Iterable[str] = ()) -> list[Covered]:
    """Each part, checked or not: ``sources`` is the effective config's source -> "ok" or why it gave nothing;
    ``probe_sets_run`` the sets that ran for the same target."""
    ok = sorted(s for s, why in (sources or {}).items() if why == "ok")
    ran = set(probe_sets_run)
    out: list[Covered] = []
    for p in PARTS:
        read = [s for s in ok if s in p.sources]
        sets = [s for s in p.probe_sets if s in ran]
        how = ", ".join([*(f"read from {s}" for s in read), *(f"probe set {s} run" for s in sets)])
        out.append(Covered(p, bool(read or sets), how))
    return out
