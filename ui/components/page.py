"""The top of a dashboard page: its services, title and caption, and (for pages that need one) the target."""
from __future__ import annotations

from collections.abc import Callable
from typing import Any

import streamlit as st

from ui import services
from ui.components import md, session
from ui.services import Target


def header(title: str, caption: str) -> services.Services:
    """Draw the page's title and caption; return the dashboard's services."""
    svc = services.get()
    st.title(title)
    st.caption(caption)
    return svc


def target_or_stop(named: bool = False) -> Target:
    """The session's target; without one, the empty state pointing at the Target page, and the page stops.
    ``named``: say which target the page works on ("Target …")."""
    target = session.require_target()
    if target is None:
        st.stop()
    if named:
        st.markdown("Target " + session.describe(target))
    return target


def run_for_target(key: str, target: Target, run: Callable[[], Any]) -> None:
    """Call ``run`` (a service call that makes a run) and keep its result under ``key`` with the target's URL,
    opening its run; a ServiceError is shown and leaves nothing kept."""
    try:
        res = run()
        st.session_state[key] = (target.url, res)
        if getattr(res, "sets", ()):
            session.note_sets_run(target, res.sets)
        if res.run_id is not None:
            session.set_open_run(res.run_id)
    except services.ServiceError as e:
        st.session_state[key] = None
        st.error(md.text(e))


def kept_for_target(key: str, target: Target) -> Any:
    """The result kept under ``key``, or None when there is none or it was for another server."""
    kept = st.session_state.get(key)
    return kept[1] if kept and kept[0] == target.url else None


def run_probe_sets(key: str, target: Target, svc: services.Services, sets: list[str], *,
                   allow_hang: bool = False, model_path: str | None = None) -> None:
    """Run probe sets for the page under a spinner, keeping the result under ``key`` (``run_for_target``). The
    target carries its log and command line to the probe sets; ``model_path`` (the page's field) joins it."""
    form = target.with_(model_path=model_path) if model_path else target

    def run_sets() -> services.ProbeRunView:
        with st.spinner(f"Running {', '.join(sets)}…"):
            return svc.run_probes(form, sets, allow_hang=allow_hang)

    run_for_target(key, target, run_sets)


def stored_run_or_stop(svc: services.Services, run_id: int) -> services.RunDetail:
    """Run ``run_id`` read back from the store; a ServiceError or a run not in the database is shown and the page
    stops (the Diagnose and Report pages open their run this way)."""
    try:
        detail = svc.get_run(run_id)
    except services.ServiceError as e:
        st.error(md.text(e))
        st.stop()
    if detail is None:
        st.warning(f"Run #{run_id} is not in this database.")
        st.stop()
    return detail


def run_link(run_id: int | None) -> None:
    """A link to one stored run (History's ``?run=N``), under what a page just ran."""
    if run_id is None:
        return
    try:
        st.page_link("ui/pages/history_page.py", label=f"Run #{run_id} in History (link: /history?run={run_id})",
                     icon=":material/history:", query_params={"run": str(run_id)})
    except Exception:  # a page run alone (tests) has no navigation to link into
        st.caption(f"Saved as run #{run_id}: /history?run={run_id}")
