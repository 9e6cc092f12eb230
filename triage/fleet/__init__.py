"""The fleet: triage many replicas through the Prometheus that already scrapes them.

`prom` reads Prometheus' HTTP API (chunked, concurrent, errors as values); `replicas` turns each
replica's series into engine samples and runs the one stall rule; `scan` adds the catalogue's
verdicts; `rules` writes the same rule as Prometheus alerting rules; `record` stores a scan as a Run.
"""
from __future__ import annotations

from triage.fleet.replicas import DEFAULT_STALL_S, Episode, episodes
from triage.fleet.scan import FleetScan, Replica, findings, scan, summary

__all__ = ["DEFAULT_STALL_S", "Episode", "FleetScan", "Replica", "episodes", "findings", "scan",
           "summary"]
