"""The session's current target (API key included, held only in this browser session) and open run."""
from __future__ import annotations

from typing import Optional

import streamlit as st

from triage.store.queries import is_row_id
from ui import services
from ui.components import md
from ui.services import Target, Truncation

TARGET_KEY = "triage.target"
OPEN_RUN_KEY = "triage.open_run"
LOADED_KEY = "triage.target_loaded"
CARRIED_KEY = "triage.carried_truncation"  # (url, Truncation) stored with the last target, not yet confirmed


def target() -> Optional[Target]:
    """The target chosen on the Target page (in this tab, else the last one chosen in any tab), or None.

    A new session opens on the last target's server, model and command line, but not on its stored
    truncation: that is an answer about the user's client, and an answer is never carried into a new
    session unconfirmed (issue 32: it ran as "stated by user"). The stored value waits in ``carried()``
    for the Target page to offer it."""
    t = st.session_state.get(TARGET_KEY)
    if t is None and not st.session_state.get(LOADED_KEY):
        st.session_state[LOADED_KEY] = True  # once per session: a new tab opens on the last target
        try:
            t = services.get().last_target()
        except Exception:  # noqa: BLE001 - a fake or a broken database: no target yet
            t = None
        if isinstance(t, Target):
            if t.truncation.known:
                st.session_state[CARRIED_KEY] = (t.url, t.truncation)
            t = t.with_(truncation=Truncation(), answers=None)  # Truncation(): not stated
            st.session_state[TARGET_KEY] = t
    return t if isinstance(t, Target) else None


def carried() -> Optional[Truncation]:
    """The truncation stored with the target this session opened on, awaiting the user's confirmation, or None."""
    c = st.session_state.get(CARRIED_KEY)
    t = st.session_state.get(TARGET_KEY)
    if not c or not isinstance(t, Target) or t.url != c[0] or t.truncation.known:
        return None
    return c[1]


def confirm_carried() -> Optional[Target]:
    """The user confirmed the stored truncation: the session's target states it from now on."""
    c, t = carried(), st.session_state.get(TARGET_KEY)
    st.session_state.pop(CARRIED_KEY, None)
    if c is None or not isinstance(t, Target):
        return None
    t = t.with_(truncation=c)
    set_target(t)
    return t


def set_target(form: Optional[Target]) -> None:
    st.session_state[TARGET_KEY] = form
    st.session_state[LOADED_KEY] = True


def open_on_target_page(url: str) -> None:
    """Another page (Fleet) hands a server to the Target page: its form opens with ``url``, models to be listed."""
    st.session_state["target.url"] = url
    st.session_state["target.models"] = None


def describe(t: Target) -> str:
    """The target in one Markdown line: the same words in the sidebar, a page's header and its banner."""
    return (f"**{md.text(t.url or 'no server')}** · model {md.code(t.model or '?')} · truncate_prompt_tokens "
            f"{md.code(t.truncation)}" + (" · API key set (this session only)" if t.api_key else ""))


def answers_line(t: Target) -> str:
    """The user's answers (stated by user), or ''."""
    a = dict(t.answers or {})
    shown = {k: f"{v / 2**30:g} GiB" if k.endswith("_bytes") and isinstance(v, int) else v for k, v in a.items()}
    return " · ".join(f"{md.code(k)} = {md.code(v)}" for k, v in shown.items())


def open_run() -> Optional[int]:
    """The run opened last (by a checklist, a probe run, a log import or History), or None."""
    v = st.session_state.get(OPEN_RUN_KEY)
    return int(v) if v is not None else None


def set_open_run(run_id: Optional[int]) -> None:
    st.session_state[OPEN_RUN_KEY] = run_id


RUN_PARAM = "run"  # ?run=N: a link to one run (History and Report open it)
URL_RUN_KEY = "triage.url_run"  # the ?run= value already applied (a later "Open run" click is not undone)


def open_run_from_url() -> str:
    """Apply ``?run=N`` once per value: run N becomes the open run. Returns a message when the value is no run
    number, else ''. Call at the top of a page that shows the open run."""
    raw = st.query_params.get(RUN_PARAM)
    if raw is None or st.session_state.get(URL_RUN_KEY) == raw:
        return ""
    st.session_state[URL_RUN_KEY] = raw
    shown = str(raw)[:40] + ("…" if len(str(raw)) > 40 else "")
    try:
        run_id = int(str(raw).strip().lstrip("#"))
    except ValueError:  # also 5,000 digits (Python's int() limit)
        return f"?run={shown} is not a run number: give one like ?run=7."
    if not is_row_id(run_id):  # a number no database holds (issue 43: an OverflowError text on the page)
        return f"?run={shown}: no such run (run numbers start at 1 and have at most 19 digits)."
    set_open_run(run_id)
    return ""


def link_open_run(run_id: int) -> None:
    """The address bar names the run shown (?run=N), so it can be copied as a link to it."""
    st.query_params[RUN_PARAM] = str(run_id)
    st.session_state[URL_RUN_KEY] = str(run_id)


# Form fields that must survive a visit to another page. Streamlit drops the state of widgets a run
# did not draw; writing the value back as plain session state on every run keeps it.
KEEP = ("target.url", "target.api_key", "target.model_manual", "target.model_pick", "target.tpt", "target.cmdline",
        "target.log", "target.label", "history.target", "history.status")


def keep_form_values(keys: tuple[str, ...] = KEEP) -> None:
    """Call once per run (app.py) before the page: the listed widget values outlive page switches."""
    for k in keys:
        if k in st.session_state:
            st.session_state[k] = st.session_state[k]


def require_target() -> Target | None:
    """The target, or an explicit empty state pointing at the Target page."""
    t = target()
    if t is None:
        st.info("No target yet. Open **Target** and enter the server URL first.")
        try:
            st.page_link("ui/pages/target_page.py", label="Go to Target", icon=":material/my_location:")
        except Exception:  # a page run alone (tests) has no navigation to link into
            pass
    return t


SETS_RUN_KEY = "triage.sets_run"  # {server URL: probe sets run against it in this session}


def note_sets_run(t: Target, sets: list[str] | tuple[str, ...]) -> None:
    """Probe sets that ran against ``t`` in this session (a healthy verdict says what they covered)."""
    done = st.session_state.setdefault(SETS_RUN_KEY, {})
    done[t.url] = sorted(set(done.get(t.url, ())) | set(sets))


def sets_run(t: Target) -> list[str]:
    return list((st.session_state.get(SETS_RUN_KEY) or {}).get(t.url, ()))
