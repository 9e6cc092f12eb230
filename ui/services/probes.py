"""The Probes page's service (also the Vectors and Rerank pages' probe runs): the sets, one recorded run, its chart."""
from __future__ import annotations

from collections.abc import Callable
from typing import Any

from triage import charts
from triage.differential import is_diagnosis
from triage.export.groups import groups
from triage.findings import Finding
from triage.probes import PROBE_SETS, HangNotAllowed, ProbeSet, run_probes
from triage.probes.experiments import asked
from triage.redact import redact_obj
from triage.stall import DEFAULT_STALL_S
from triage.target import Target
from ui.adapters import plain_error, probe_relay, probe_view
from ui.errors import ServiceError
from ui.services.base import ServiceBase
from ui.values import ProbeProgress, ProbeRunView

HANG_NOT_CONFIRMED = "The seed matrix can hang the server: confirm it before running."


class ProbesService(ServiceBase):
    """Probes page, and the probe sets the Vectors and Rerank pages run (ui.components.page.run_probe_sets)."""

    def probe_sets(self) -> tuple[ProbeSet, ...]:
        return PROBE_SETS

    def experiments_asked(self, findings: list[Finding]) -> list[str]:
        """The probe sets the run's "one of" diagnoses ask for (the page's "Run the experiments" button)."""
        return asked([f for f in findings if is_diagnosis(f) and not f.failure_mode])

    def run_probes(self, form: Target, sets: list[str], *, allow_hang: bool, stall_s: float = DEFAULT_STALL_S,
                   deadline_s: float = 30.0, on_event: Callable[[ProbeProgress], None] | None = None,
                   run_experiments: bool = False) -> ProbeRunView:
        """Run the chosen probe sets (the seed matrix only with allow_hang=True); progress goes to on_event.
        ``run_experiments``: then the sets an ambiguous diagnosis asks for (a hang-capable one only with
        allow_hang), and the diagnosis again.

        The engine's ``run_probes`` does it all once: the hang check, the Recorder in front of the page's
        progress (each event written before the page sees it), the run closed on an exception. The probes shown
        are the run's own outcomes, redacted as the store writes them."""
        try:
            res = run_probes(form, sets=list(sets), allow_hang=allow_hang, stall_s=stall_s, deadline_s=deadline_s,
                             store=self.store, on_event=probe_relay(on_event), run_experiments=run_experiments)
        except HangNotAllowed as e:
            raise ServiceError(HANG_NOT_CONFIRMED) from e
        except ServiceError:
            raise
        except Exception as e:
            raise ServiceError(f"Probes: {plain_error(e)}") from e
        probes = [probe_view(redact_obj(o.to_dict())) for o in res.outcomes]
        findings = list(res.findings)
        figure = None
        series = [o.series() for o in res.outcomes]  # the stream's EngineSamples, typed
        if any(x.samples for x in series):
            try:
                figure = charts.probe_timeline_figure(series)
            except Exception:  # noqa: BLE001 - the per-probe tables below still carry the samples
                figure = None
        grouped, rest = groups(findings, {"values": res.target})
        return ProbeRunView(res.run_id, probes, findings, figure, groups=tuple(grouped), ungrouped=tuple(rest),
                            sets=tuple(sets))

    def cosine_rows(self, findings: list[Finding]) -> list[dict[str, Any]]:
        """The Vectors page's bars: the cosine each vector or client check judged (triage.probes.vector_findings)."""
        from triage.probes.vector_findings import cosine_rows

        return cosine_rows(findings)

    def openwebui_check(self, base: str, api_key: str | None, model: str, batch: int,
                        server_url: str | None) -> tuple[Finding, str]:
        """Open WebUI's embedding settings checked as Open WebUI calls (triage.probes.openwebui): the finding and
        the settings as environment lines to copy."""
        from triage.probes import openwebui

        s = openwebui.OpenWebUISettings(base, api_key or None, model, int(batch))
        f, _ = openwebui.check(s, server_url)
        return f, s.env_lines()

    def throughput_figure(self, findings: list[Finding]) -> Any:
        """Requests/s and p50/p95 per concurrency from the ``throughput`` finding's rows, or None."""
        rows = next((f.evidence.get("rows") for f in findings if f.check == "throughput"
                     and isinstance(f.evidence.get("rows"), list)), None)
        if not rows:
            return None
        try:
            return charts.throughput_figure(rows)
        except Exception:  # noqa: BLE001 - the finding's table still carries the numbers
            return None
