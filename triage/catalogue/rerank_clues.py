"""The rerank and classify records' clues (issue 29): pure readers of a ``Case`` over the facts the rerank and
classify probes (triage/probes/rerank*.py, classify.py) and the rerank checklist step put in ``evidence["facts"]``.

Fact keys, declared once here and written by the probes under these names:
- ``rerank.served_task``: "classify" (a score head scores the pairs) | "embed" (embedding cosine) | None.
- ``rerank.overrides``: the classifier keys of --hf-overrides seen (cmdline, log, /v1/models): a dict, {} when
  the server is known to have none, None when unknown.
- ``rerank.score_range`` [lo, hi] and ``rerank.score_spread`` (the smallest max - min of a ranking case) of
  the scores as served; ``rerank.raw_range`` / ``rerank.raw_spread`` the same with ``use_activation: false``
  (the score head's raw logits); ``rerank.ranks``: the relevant document first in every case.
- ``rerank.use_activation``: whether the server applies the activation by default (the answer without the field
  equals the one with ``use_activation: true``: True; with ``false``: False); ``rerank.template_warning``.
- ``rerank.paths_ok``: a score path answered 200; ``classify.ok``: /classify answered 200.
- ``classify.use_activation``, ``classify.probs_range`` [lo, hi], ``classify.sum_error`` (max |sum(probs) - 1|),
  ``classify.num_classes``, ``classify.constant`` (the same probs for unrelated inputs).
"""
from __future__ import annotations

from typing import Any, Optional

from triage.catalogue.symptoms import Case, Clue, Weight, by_flag

SERVED_TASK, OVERRIDES = "rerank.served_task", "rerank.overrides"
SCORE_RANGE, SCORE_SPREAD = "rerank.score_range", "rerank.score_spread"
RAW_RANGE, RAW_SPREAD, RANKS = "rerank.raw_range", "rerank.raw_spread", "rerank.ranks"
USE_ACTIVATION, TEMPLATE_WARNING = "rerank.use_activation", "rerank.template_warning"
PATHS_OK, CLASSIFY_OK = "rerank.paths_ok", "classify.ok"
CLS_USE_ACTIVATION, CLS_RANGE, CLS_SUM_ERROR = "classify.use_activation", "classify.probs_range", "classify.sum_error"
CLS_NUM, CLS_CONSTANT = "classify.num_classes", "classify.constant"
POOLER_ACTIVATION, POOLER_ACTIVATION_SOURCE = "pooler.use_activation", "pooler.use_activation_source"  # the log's

FLAT = 0.05        # a ranking case whose scores span less than this does not separate documents
ZERO_HEAD = 1e-3   # raw logits within this of 0 for every pair: the score head is zero
SUM_TOL = 1e-3     # softmax probabilities sum to 1 within this


def _range(case: Case, key: str) -> Optional[tuple[float, float]]:
    v = case.fact(key)
    if isinstance(v, (list, tuple)) and len(v) == 2 and all(isinstance(x, (int, float)) for x in v):
        return float(v[0]), float(v[1])
    return None


def _num(case: Case, key: str) -> Optional[float]:
    v = case.fact(key)
    return float(v) if isinstance(v, (int, float)) and not isinstance(v, bool) else None


def _classifier_overrides(case: Case) -> Optional[bool]:
    ov: Any = case.fact(OVERRIDES)
    if not isinstance(ov, dict):
        return None
    return bool(ov.get("classifier_from_token") or ov.get("is_original_qwen3_reranker"))


def served_embed(case: Case) -> Optional[Weight]:
    """For overrides-missing: the pairs are scored as embedding cosines (task embed); against it: a score head."""
    task = case.fact(SERVED_TASK)
    if task == "embed":
        return Weight("for", "the server scores pairs as embedding cosines (task embed)", "probe", decisive=True)
    if task == "classify":
        return Weight("against", "a score head scores the pairs (task classify)", "probe", decisive=True)
    return None


def overrides_absent(case: Case) -> Optional[Weight]:
    """For overrides-missing: no classifier overrides on the server; decisive against when they are there."""
    return by_flag(_classifier_overrides(case),
                   Weight("against", f"the classifier overrides are given ({case.fact(OVERRIDES)})", "cmdline/log",
                          decisive=True),
                   Weight("for", "no classifier_from_token / is_original_qwen3_reranker in --hf-overrides",
                          "cmdline/log"))


def _mirror(reader: Any, name: str, doc: str) -> Any:
    """The reader's weight turned round: its decisive 'for' becomes a decisive 'against'; its 'against' a plain
    'for' (what rules the reader's record out does not single this one out)."""
    def read(case: Case) -> Optional[Weight]:
        w = reader(case)
        if w is None:
            return None
        return Weight("against" if w.direction == "for" else "for", w.seen, w.source, decisive=w.direction == "for")
    read.__name__, read.__doc__ = name, doc
    return read


served_classify = _mirror(served_embed, "served_classify", "For a score-head record: the pairs are scored by a head.")
overrides_present = _mirror(overrides_absent, "overrides_present", "For records that need the overrides given.")


def cosine_band(case: Case) -> Optional[Weight]:
    """For overrides-missing: every score in a narrow band near 1 (cosines of last-token states, 0.97-0.99 seen)."""
    r = _range(case, SCORE_RANGE)
    if r is None:
        return None
    lo, hi = r
    if lo >= 0.9 and hi <= 1.0 + 1e-6 and hi - lo < 0.1:
        return Weight("for", f"scores {lo:.3f}-{hi:.3f}: a narrow band near 1, like embedding cosines", "probe")
    return None


def scores_at_half(case: Case) -> Optional[Weight]:
    """For a flat score head: every served score is 0.5 (sigmoid of 0)."""
    r = _range(case, SCORE_RANGE)
    if r is None:
        return None
    lo, hi = r
    if abs(lo - 0.5) <= ZERO_HEAD and abs(hi - 0.5) <= ZERO_HEAD:
        return Weight("for", f"every score is 0.5 ({lo:.4f}-{hi:.4f}): sigmoid of a zero logit", "probe")
    return Weight("against", f"scores span {lo:.4f}-{hi:.4f}, not all 0.5", "probe")


def raw_logits_zero(case: Case) -> Optional[Weight]:
    """The experiment's answer: with use_activation false every raw logit is 0 (a zero score head), or they spread."""
    r, spread = _range(case, RAW_RANGE), _num(case, RAW_SPREAD)
    if r is None:
        return None
    lo, hi = r
    if max(abs(lo), abs(hi)) <= ZERO_HEAD:
        return Weight("for", f"raw logits (use_activation false) all {lo:.4g}..{hi:.4g}: the score head is zero",
                      "probe", decisive=True)
    if spread is not None and spread >= FLAT:
        return Weight("against", f"raw logits spread {spread:.3g}: the score head separates the documents", "probe",
                      decisive=True)
    return None


def raw_logits_spread(case: Case) -> Optional[Weight]:
    """For the template record: the head works (raw logits spread), the ranking is still wrong."""
    spread = _num(case, RAW_SPREAD)
    if spread is None:
        return None
    if spread >= FLAT:
        return Weight("for", f"raw logits spread {spread:.3g}: the head works, the prompt may not", "probe")
    return Weight("against", f"raw logits spread only {spread:.3g}: the head itself is flat", "probe")


def activation_off(case: Case) -> Optional[Weight]:
    """For scores-are-logits: the server's answer without the field is the raw logits (use_activation false)."""
    for key in (USE_ACTIVATION, CLS_USE_ACTIVATION):
        v = case.fact(key)
        if v is False:
            return Weight("for", f"{key}: the server answers raw logits by default", "probe", decisive=True)
        if v is True:
            return Weight("against", f"{key}: the server applies the activation by default", "probe", decisive=True)
    return None


def outside_unit(case: Case) -> Optional[Weight]:
    """For scores-are-logits: a score or probability below 0 or above 1 (no sigmoid/softmax gives one)."""
    for key in (SCORE_RANGE, CLS_RANGE):
        r = _range(case, key)
        if r is not None and (r[0] < -1e-6 or r[1] > 1 + 1e-6):
            return Weight("for", f"{key} {r[0]:.4g}..{r[1]:.4g}: outside [0, 1], not probabilities", "probe",
                          decisive=True)
    return None


def probs_not_summing(case: Case) -> Optional[Weight]:
    """For scores-are-logits on a classifier of 2+ labels: probs that do not sum to 1 (softmax's do).

    Each in [0, 1] but not summing to 1 is a multi-label (sigmoid) head: said, and not weighed for."""
    err, n, r = _num(case, CLS_SUM_ERROR), _num(case, CLS_NUM), _range(case, CLS_RANGE)
    if err is None or n is None or n < 2:
        return None
    if err <= SUM_TOL:
        return Weight("against", f"the {int(n)} probs sum to 1 (softmax)", "probe")
    if r is not None and r[0] >= 0 and r[1] <= 1:
        return None  # sigmoid per label (problem_type multi_label_classification): probabilities, not logits
    return Weight("for", f"the {int(n)} probs sum to 1 +- {err:.3g}", "probe")


def template_warned(case: Case) -> Optional[Weight]:
    v = case.fact(TEMPLATE_WARNING)
    return by_flag(v if isinstance(v, bool) else None,
                   Weight("for", "'without a --chat-template' in the start-up log", "log", decisive=True),
                   Weight("against", "no reranker-template warning in the start-up log", "log", decisive=True))


def score_paths_missing(case: Case) -> Optional[Weight]:
    """For classify-without-score-head: no score path answers while /classify does."""
    paths, cls = case.fact(PATHS_OK), case.fact(CLASSIFY_OK)
    if paths is False and cls is True:
        return Weight("for", "/score and /rerank answer 404 while /classify answers 200", "probe", decisive=True)
    if paths is True:
        return Weight("against", "a score path answers 200", "probe", decisive=True)
    return None


def classify_constant(case: Case) -> Optional[Weight]:
    if case.fact(CLS_CONSTANT) is True:
        return Weight("for", "/classify gives the same probs for unrelated inputs", "probe")
    return None


def finding_bad(check: str, seen: str) -> Clue:
    """A clue that reads one probe finding: for when it is fail/warn, against when it passed."""
    def read(case: Case) -> Optional[Weight]:
        f = case.finding(check)
        if f is None:
            return None
        status = str(f.get("status") if isinstance(f, dict) else getattr(f, "status", "")).lower()
        status = status.split(".")[-1]
        if status in ("fail", "warn"):
            return Weight("for", seen, "probe")
        if status == "pass":
            return Weight("against", f"{check} passed", "probe", decisive=True)
        return None
    return Clue(f"{check}-finding", read)


def clues(*readers: Any) -> tuple[Clue, ...]:
    """Clues named after their readers (a Clue given as is)."""
    return tuple(r if isinstance(r, Clue) else Clue(r.__name__.replace("_", "-"), r) for r in readers)
