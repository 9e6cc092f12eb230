"""The clues of the engine family (hangs, stalls, waits, start-up refusals): readers of a ``Case`` for the records
in ``triage.catalogue.records`` (issue 29). Pure functions; the records wire them in with their own version range.

The facts they read (put into a finding's ``evidence["facts"]`` by the probe, watch or log builder; a config value
of the plain name stands in where no fact says it):

- ``vllm.version`` (else config ``vllm_version``): the server's release;
- ``engine.max_model_len``, ``engine.max_num_batched_tokens``, ``engine.chunked_prefill`` (else config
  ``max_model_len``, ``max_num_batched_tokens``, ``enable_chunked_prefill``): what the engine ran with;
- ``request.prompt_tokens``: the prompt tokens of the request that hung or waited (after truncation);
- ``stall.recurring``: the stall episodes recur, each ended by a client abort (watch, log, fleet);
- ``stall.step_in_progress``: the engine was computing one step while no progress showed (vLLM's workers logged
  a long wait on a step: the log post-mortem's long-step lines; issue 21);
- ``matrix.hangs_at_max_model_len`` / ``matrix.workaround_ok``: the seed matrix hung a prompt of exactly
  max_model_len tokens / returned every max_model_len - 1 case;
- ``engine.kv_cache_tokens`` (else config ``kv_cache_size_tokens``): the KV cache's size in tokens;
- ``log.<check id>``-style evidence is read as the run's findings (``Case.finding``): a start-up refusal's line.
"""
from __future__ import annotations

from typing import Any, Optional

from triage.catalogue.symptoms import Case, Clue, Weight
from triage.catalogue.refusal_clues import REFUSAL_CHECKS

LOG_CAUSES = ("log-kv-cache-too-small", "log-unsupported-head-dim", "log-oom", "log-startup-oom", *REFUSAL_CHECKS)


def version_of(case: Case) -> Any:
    return case.fact("vllm.version") or case.get("vllm_version")


def _int(v: Any) -> Optional[int]:
    return v if isinstance(v, int) and not isinstance(v, bool) else None


def max_model_len(case: Case) -> Optional[int]:
    return _int(case.fact("engine.max_model_len")) or _int(case.get("max_model_len"))


def budget(case: Case) -> Optional[int]:
    return _int(case.fact("engine.max_num_batched_tokens")) or _int(case.get("max_num_batched_tokens"))


def chunked(case: Case) -> Optional[bool]:
    v = case.fact("engine.chunked_prefill")
    v = case.get("enable_chunked_prefill") if v is None else v
    return v if isinstance(v, bool) else None


def prompt_tokens(case: Case) -> Optional[int]:
    return _int(case.fact("request.prompt_tokens"))


def finding_failed(case: Case, check: str) -> bool:
    f = case.finding(check)
    status = (f.get("status") if isinstance(f, dict) else getattr(f, "status", None)) if f is not None else None
    return str(getattr(status, "value", status)) in ("fail", "warn")


# -- the pooling livelock (#55427) and what else holds a request running ----------------------------------------
def livelock_trigger(affects: Any, case: Case) -> Optional[Weight]:
    """The three preconditions at once: an affected release, chunked prefill on, a prompt of exactly max_model_len."""
    mml, n, on = max_model_len(case), prompt_tokens(case), chunked(case)
    if affects(version_of(case)) is True and on is True and mml is not None and n == mml:
        return Weight("for", f"vLLM {version_of(case)} is affected, chunked prefill is on and the held prompt has "
                      f"exactly max_model_len = {mml} tokens", "facts", decisive=True)
    return None


def release(affects: Any, name: str, case: Case, *, fixed_for: bool = False, shared: bool = False) -> Optional[Weight]:
    """An affected release weighs for ``name``'s bug; a release outside its range rules it out (``fixed_for``: the
    reverse, for the record of a stall on a release that carries the fix). ``shared``: the record shares its
    release range with another candidate, so an affected release says nothing between them (only "against")."""
    v = version_of(case)
    a = affects(v)
    if a is None or (a and shared):
        return None
    if a:  # not decisive alone: the trigger (livelock_trigger) is
        return Weight("against" if fixed_for else "for", f"vLLM {v} has {name}", "version")
    return Weight("for" if fixed_for else "against", f"vLLM {v} is outside {name}'s releases", "version",
                  decisive=True)


def livelock_explains(affects: Any, case: Case) -> Optional[Weight]:
    """The livelock's trigger holds: a stall of the engine's own is not what is left to explain."""
    w = livelock_trigger(affects, case)
    return None if w is None else Weight("against", f"the livelock's trigger holds ({w.seen})", w.source,
                                         decisive=True)


def prompt_below(case: Case, *, for_: bool) -> Optional[Weight]:
    """A held prompt shorter than max_model_len cannot be the livelock (it needs exactly max_model_len)."""
    mml, n = max_model_len(case), prompt_tokens(case)
    if mml is None or n is None:
        return None
    if n < mml:
        return Weight("for" if for_ else "against", f"the held prompt has {n} tokens, below max_model_len {mml}",
                      "facts", decisive=True)
    return None


def chunking_off(case: Case) -> Optional[Weight]:
    if chunked(case) is False:
        return Weight("against", "chunked prefill is off: a prompt is never split, so it cannot livelock", "config",
                      decisive=True)
    return None


def matrix(case: Case) -> Optional[Weight]:
    """The seed matrix, run: max_model_len hangs and max_model_len - 1 returns singles the livelock out."""
    hangs, ok = case.fact("matrix.hangs_at_max_model_len"), case.fact("matrix.workaround_ok")
    if hangs is True and ok is True:
        return Weight("for", "the seed matrix hung prompts of exactly max_model_len tokens and returned every "
                      "max_model_len - 1 case", "probe seed", decisive=True)
    if hangs is False:
        return Weight("against", "the seed matrix hung no prompt of exactly max_model_len tokens", "probe seed",
                      decisive=True)
    return None


def matrix_reproduces(case: Case) -> Optional[Weight]:
    """For a stall of the engine's own: the seed matrix reproducing #55427 on this server rules it out."""
    w = matrix(case)
    if w is not None and w.direction == "for":
        return Weight("against", "the seed matrix reproduces #55427 on this server", w.source, decisive=True)
    return None


def recurring(case: Case, *, for_: bool) -> Optional[Weight]:
    """Episodes that recur, each ended by a client: the client time-out form; one that lasts: the plain form."""
    r = case.fact("stall.recurring")
    if not isinstance(r, bool):
        return None
    if r:
        return Weight("for" if for_ else "against", "the stall episodes recur, each ended by a client abort",
                      "watch/log", decisive=True)
    return Weight("against" if for_ else "for", "the stall did not recur as client-ended episodes", "watch/log",
                  decisive=for_)


def step_in_progress(case: Case, *, for_: bool) -> Optional[Weight]:
    """vLLM's own workers said a step was being computed: a long step, not a stall of a scheduler."""
    if case.fact("stall.step_in_progress") is True:
        return Weight("for" if for_ else "against", "vLLM's workers waited on a step the engine was computing "
                      "(a step in progress)", "log", decisive=True)
    return None


def hang_clues(affects: Any, *, stall: bool) -> tuple[Clue, ...]:
    """The clues of a request held running: for the livelock (``stall`` False: ``affects`` is its release test) or
    for a stall of the engine's own on a release with the fix (``stall`` True: the same evidence read the other
    way)."""
    trigger = livelock_explains if stall else livelock_trigger
    own: tuple[Clue, ...] = () if stall else (
        Clue("chunked-prefill-off", chunking_off), Clue("recurring", lambda c: recurring(c, for_=False)))
    return (
        Clue("trigger", lambda c: trigger(affects, c)),
        Clue("release", lambda c: release(affects, "#55427", c, fixed_for=stall)),
        Clue("prompt-below-max-model-len", lambda c: prompt_below(c, for_=stall)),
        Clue("seed-matrix", matrix_reproduces if stall else matrix),
        Clue("step-in-progress", lambda c: step_in_progress(c, for_=False)),
        *own,
    )


# -- a request that waits forever -------------------------------------------------------------------------------
def budget_below_prompt(case: Case) -> Optional[Weight]:
    """Chunked prefill off and a prompt (or max_model_len) above the budget: never admitted."""
    b, mml, n, on = budget(case), max_model_len(case), prompt_tokens(case), chunked(case)
    if on is True:
        return Weight("against", "chunked prefill is on: a prompt above the budget is split, not refused", "config")
    if on is not False or b is None:
        return None
    if n is not None:
        if n > b:
            return Weight("for", f"chunked prefill is off and the waiting prompt's {n} tokens exceed the budget {b}",
                          "facts", decisive=True)
        return Weight("against", f"the waiting prompt's {n} tokens fit the budget {b}", "facts", decisive=True)
    if mml is not None and b < mml:
        return Weight("for", f"chunked prefill is off and the budget {b} < max_model_len {mml}: a prompt above {b} "
                      "tokens is never admitted", "config", decisive=True)
    if mml is not None:
        return Weight("against", f"the budget {b} >= max_model_len {mml}: every admissible prompt fits", "config",
                      decisive=True)
    return None


def kv_below_prompt(case: Case) -> Optional[Weight]:
    """A prompt larger than the whole KV cache (vllm#39734) waits forever; one that fits does not, for this."""
    kv = _int(case.fact("engine.kv_cache_tokens")) or _int(case.get("kv_cache_size_tokens"))
    n = prompt_tokens(case) or max_model_len(case)
    if kv is None or n is None:
        return None
    if n > kv:
        return Weight("for", f"{n} prompt tokens exceed the KV cache's {kv} tokens", "facts", decisive=True)
    return Weight("against", f"the KV cache holds {kv} tokens, more than the {n} the request needs", "facts",
                  decisive=True)


# -- start-up refusals and 5xx: the line that names the cause ---------------------------------------------------
def logged(check: str, what: str, case: Case) -> Optional[Weight]:
    if finding_failed(case, check):
        return Weight("for", f"the log says {what} ({check})", "log", decisive=True)
    return None


def root_cause_logged(case: Case) -> Optional[Weight]:
    """An EngineCore failure is a consequence when the log names what made it fail."""
    named = [c for c in LOG_CAUSES if finding_failed(case, c)]
    if named:
        return Weight("against", f"the log names the root cause ({', '.join(named)}); the dead engine follows it",
                      "log", decisive=True)
    return None


def dead_engine_logged(case: Case) -> Optional[Weight]:
    if finding_failed(case, "log-engine-dead") and root_cause_logged(case) is None:
        return Weight("for", "the log shows EngineCore failing with no other cause named before it", "log",
                      decisive=True)
    return None


def rejected_status(case: Case, statuses: tuple[int, ...]) -> Optional[Weight]:
    """A rejection's HTTP status (fact ``rejected.status``): one of ``statuses`` weighs for, a 4xx rules it out."""
    st = _int(case.fact("rejected.status"))
    if st is None:
        return None
    if st in statuses:
        return Weight("for", f"requests are answered HTTP {st}", "probe")
    if 400 <= st < 500:
        return Weight("against", f"HTTP {st} is the request's fault, not a dead engine's", "probe", decisive=True)
    return None
