"""Pure verdicts of the rerank set: recorded /rerank, /score, /v1/embeddings exchanges in, a Finding out.

Wording, refs and fixes are the catalogue's (triage/catalogue/rerank.py). The ranking check's evidence
carries ``cases: [{"query", "documents", "scores", "expected_order", "served_order"}]`` so the dashboard
can draw scores per document with the expected order beside the served one. One room (over 350 lines): one
verdict function per rerank check, each short, all reading the same exchanges and the same catalogue records.
"""
from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any, Optional

from triage.catalogue import get
from triage.catalogue import rerank_clues as k
from triage.catalogue.identity import identify
from triage.catalogue.rerank import UNDECIDED_RANKING_FIX
from triage.catalogue.rerank_families import CROSS_ENCODER_SERVED_AS_EMBEDDER
from triage.catalogue.model import FailureMode
from triage.catalogue.symptoms import REJECTED, SCORES_FLAT, SCORES_NOT_RANKING
from triage.http import Reply
from triage.findings import Finding, Status
from triage.textsafe import clipped, listed

FLAT_SPREAD = k.FLAT  # max - min score of a case whose one document repeats the query's words: below = no ranking
CONSISTENT_TOL = 1e-3  # /score vs /rerank for the same pair

# the request every rerank probe sends: the second document answers the query, by construction
QUERY = "how do I reset a forgotten password"
DOCS = ("bake bread with two cups of flour", "reset a forgotten password from the login page",
        "the stock market fell sharply today")


def _live(evidence: dict[str, Any]) -> dict[str, Any]:
    """What a live probe saw, marked as such."""
    return {**evidence, "source": "live probe"}


def _show(v: Any) -> str:
    return repr(v) if len(repr(v)) <= 40 else repr(v)[:39] + "…"


def _is_int(v: Any) -> bool:
    return isinstance(v, int) and not isinstance(v, bool)


def _is_score(v: Any) -> bool:
    return isinstance(v, (int, float)) and not isinstance(v, bool) and math.isfinite(v)


def rerank_problem(ex: Reply, n_inputs: Optional[int] = None) -> Optional[str]:
    """Why a /rerank answer is not a ranking of the ``n_inputs`` documents sent (None when it is one): an index
    that is not an integer, out of range or negative, repeated, or a score that is not a finite number (JSON's
    Infinity and NaN parse in Python). A server's answer, so a reason, never an exception (issue 33)."""
    res = ex.body.get("results") if ex.ok and isinstance(ex.body, dict) else None
    if not isinstance(res, list):
        return "no results[{index, relevance_score}]"
    seen: set[int] = set()
    for r in res:
        if not isinstance(r, dict):
            return f"a result is {_show(r)}, not an object"
        i, score = r.get("index"), r.get("relevance_score")
        if not _is_int(i):
            return f"index {_show(i)} is not an integer"
        if i < 0 or n_inputs is not None and i >= n_inputs:
            return f"index {i} is not one of the {n_inputs if n_inputs is not None else 'inputs'} inputs sent"
        if i in seen:
            return f"index {i} appears twice"
        seen.add(i)
        if not _is_score(score):
            return f"relevance_score {_show(score)} of index {i} is not a finite number"
    return None


def rerank_scores(ex: Reply) -> Optional[dict[int, float]]:
    """{input index: relevance_score} from a /rerank answer, or None when it is not one (rerank_problem says why)."""
    if rerank_problem(ex) is not None:
        return None
    return {r["index"]: float(r["relevance_score"]) for r in ex.body["results"]}


def score_scores(ex: Reply) -> Optional[list[float]]:
    """/score's data as a list in input order, or None when it is not a score answer."""
    data = ex.body.get("data") if ex.ok and isinstance(ex.body, dict) else None
    if not isinstance(data, list) or not all(isinstance(d, dict) and isinstance(d.get("score"), (int, float))
                                             for d in data):
        return None
    return [float(d["score"]) for d in sorted(data, key=lambda d: d.get("index", 0))]


def _num_classes(ex: Reply) -> Optional[int]:
    data = ex.body.get("data") if isinstance(ex.body, dict) else None
    n = data[0].get("num_classes") if isinstance(data, list) and data and isinstance(data[0], dict) else None
    return n if isinstance(n, int) else None


def check_paths(exs: dict[str, Reply], base: str, classify: Reply | None = None) -> Finding:
    """Which of /rerank, /v1/rerank, /v2/rerank, /score answer a valid request (one finding for all).

    None answering while /classify does: a classifier without a one-label score head (0.32.0 lab: --convert
    classify on a reranker checkpoint, vllm#43062)."""
    mode = get("rerank-api-contract")
    status = {p: x.status for p, x in exs.items()}
    ok = [p for p, x in exs.items() if x.ok]
    ev = {"status": status, "answers": {p: x.error_message()[:200] for p, x in exs.items() if not x.ok},
          "facts": {k.PATHS_OK: any(x.ok for x in exs.values()),
                    k.CLASSIFY_OK: classify.ok if classify is not None else None}}
    labels = _num_classes(classify) if classify is not None and classify.ok else None
    if not ok and labels is not None and labels != 2:
        return Finding("rerank-paths", Status.UNKNOWN, f"no score path answers ({status}): a classifier of {labels} "
                       "label(s), not a reranker deployment (vLLM serves /score and /rerank for one-label heads); "
                       "the classify probe set reads its probs", {**ev, "source": "live probe",
                                                                  "/classify": classify.to_dict()}, failure_mode="")
    if not ok and labels is not None:
        head = get("classify-without-score-head")
        ev["symptoms"] = [REJECTED]  # what the 404s show; the constant probs are the classify probe's to read
        return Finding.of(head, "rerank-paths", Status.FAIL, f"no score path answers ({status}) but /classify does: "
                          "a classifier without a one-label score head (--convert classify on a checkpoint without "
                          "one?)", _live({**ev, "/classify": classify.to_dict()}))
    if not ok:
        msgs = " ".join(x.error_message() for x in exs.values()).lower()
        why = ("the server has no score task (not a reranker or embedding deployment)"
               if "does not support" in msgs or "not found" in msgs else "every reranking path failed")
        return Finding.of(mode, "rerank-paths", Status.FAIL, f"no reranking endpoint answered: {why} ({status})",
                          _live(ev), cfg={"base": base})
    missing = [p for p in exs if p not in ok]
    if missing:
        return Finding.of(mode, "rerank-paths", Status.WARN, f"{', '.join(missing)} did not answer 200 ({status}): "
                          "clients configured with those paths fail", _live(ev), cfg={"base": base})
    return Finding.of(mode, "rerank-paths", Status.PASS, f"{', '.join(ok)} all answer 200", _live(ev))


def check_rerank_shape(ex: Reply, documents: Sequence[str]) -> Finding:
    mode = get("rerank-api-contract")
    ev = {"exchange": ex.to_dict()}
    if not ex.ok:
        return Finding.of(mode, "rerank-shape", Status.ERROR, f"/rerank failed: HTTP {ex.status or ex.error} "
                          f"{ex.error_message()[:200]}", _live(ev))
    res = ex.body.get("results") if isinstance(ex.body, dict) else None
    scores = rerank_scores(ex)
    problems = []
    why = rerank_problem(ex, len(documents))
    if scores is None or not isinstance(res, list) or why is not None:
        problems.append(why or "no results[{index, relevance_score}]")
    else:
        if sorted(scores) != list(range(len(documents))):
            problems.append(f"{len(scores):,} indices ({listed(sorted(scores))}) are not the {len(documents)} "
                            "inputs'")
        ordered = [float(r["relevance_score"]) for r in res]
        if ordered != sorted(ordered, reverse=True):
            problems.append("results are not sorted by relevance_score")
        for r in res:
            text = (r.get("document") or {}).get("text") if isinstance(r.get("document"), dict) else None
            if text is not None and 0 <= r["index"] < len(documents) and text != documents[r["index"]]:
                problems.append(f"results[index={r['index']}].document is not that input")
                break
    if problems:
        return Finding.of(mode, "rerank-shape", Status.FAIL, "/rerank answer: " + "; ".join(problems), _live(ev))
    return Finding.of(mode, "rerank-shape", Status.PASS, f"/rerank: {len(documents)} results, sorted by "
                      "relevance_score, each with its input index and text", _live(ev))


def check_score_consistent(score_ex: Reply, rerank_ex: Reply) -> Finding:
    """/score must give each pair the score /rerank gives it, in input order."""
    mode = get("rerank-api-contract")
    ev = {"score": score_ex.to_dict(), "rerank_scores": clipped(rerank_scores(rerank_ex))}
    s, r = score_scores(score_ex), rerank_scores(rerank_ex)
    if s is None or r is None:
        bad = score_ex if s is None else rerank_ex
        return Finding.of(mode, "score-shape", Status.ERROR,
                          f"{bad.path} gave no scores: HTTP {bad.status or bad.error} {bad.error_message()[:200]}",
                          _live(ev))
    diff = max((abs(s[i] - r.get(i, float("nan"))) for i in range(len(s))), default=0.0)
    if len(s) != len(r) or not diff <= CONSISTENT_TOL:
        return Finding.of(mode, "score-shape", Status.FAIL, f"/score and /rerank disagree on the same pairs "
                          f"(max difference {diff:.4g})", _live({**ev, "max_difference": diff}))
    return Finding.of(mode, "score-shape", Status.PASS, f"/score gives the same {len(s)} scores as /rerank, in input "
                      "order", _live({**ev, "max_difference": diff}))


def check_top_n(ex: Reply, full: Reply, top_n: int) -> Finding:
    mode = get("rerank-api-contract")
    got, all_ = rerank_scores(ex), rerank_scores(full)
    ev = {"top_n": top_n, "exchange": ex.to_dict()}
    if not ex.ok:
        return Finding.of(mode, "rerank-top-n", Status.ERROR, f"/rerank with top_n {top_n} failed: HTTP "
                          f"{ex.status or ex.error} {ex.error_message()[:200]}", _live(ev))
    full_why = rerank_problem(full, len(all_) if all_ is not None else None)
    if all_ is None or full_why is not None:
        return Finding.of(mode, "rerank-top-n", Status.UNKNOWN, f"top_n {top_n} not judged: the full /rerank answer "
                          f"is not a ranking of the inputs ({full_why or 'no scores'})", _live(ev))
    why = rerank_problem(ex, len(all_))
    if got is None or why is not None:
        return Finding.of(mode, "rerank-top-n", Status.FAIL, f"top_n {top_n} answer: {why}", _live(ev))
    best = sorted(all_, key=lambda i: -all_[i])[:top_n]
    if len(got) != top_n or list(got) != best:
        return Finding.of(mode, "rerank-top-n", Status.FAIL, f"top_n {top_n} returned {len(got)} results "
                          f"({listed(got)}; the best {top_n} are {listed(best)})", _live(ev))
    return Finding.of(mode, "rerank-top-n", Status.PASS, f"top_n {top_n} returns the best {top_n} of "
                      f"{len(all_)} (top_n 0 returns all)", _live(ev))


def check_long_document(plain: Reply, truncated: Reply, max_model_len: int, truncate: int) -> Finding:
    """A document over max_model_len: 400 without truncation is vLLM's contract; truncation must answer."""
    mode = get("rerank-long-document")
    ev = {"without_truncation": plain.to_dict(), "truncated": truncated.to_dict(), "max_model_len": max_model_len,
          "truncate_prompt_tokens": truncate}
    cfg = {"max_model_len": max_model_len}
    if not truncated.ok:
        return Finding.of(mode, "rerank-long-document", Status.FAIL, f"a long document with truncate_prompt_tokens "
                          f"{truncate} still fails: HTTP {truncated.status or truncated.error} "
                          f"{truncated.error_message()[:200]}", _live(ev), cfg=cfg)
    if plain.status == 400:
        return Finding.of(mode, "rerank-long-document", Status.WARN, "one document longer than max_model_len "
                          f"({max_model_len}) fails the whole rerank request with 400; truncate_prompt_tokens "
                          f"{truncate} answers 200: clients must truncate", _live(ev), cfg=cfg)
    return Finding.of(mode, "rerank-long-document", Status.PASS, f"a long document answers "
                      f"{plain.status} without truncation and 200 with truncate_prompt_tokens {truncate}", _live(ev))


def check_served_task(embed: Reply, classify: Reply, model: str, architectures: Sequence[str] | None,
                      tasks_from_log: Optional[list[str]] = None) -> Finding:
    """Which pooling task scores the pairs: a classifier (cross-encoder) or embedding cosine (bi-encoder)."""
    mode = get("reranker-overrides-missing")
    embeds = embed.ok or (tasks_from_log is not None and "embed" in tasks_from_log)
    classifies = classify.ok or (tasks_from_log is not None and "classify" in tasks_from_log)
    causal = any(a.endswith("ForCausalLM") for a in architectures or ())
    who = identify({"model": model, "architectures": list(architectures or [])})
    named = who.kind == "reranker"  # the family table (issue 42), no longer the word "rerank" alone
    ev = {"/v1/embeddings": embed.status, "/classify": classify.status, "supported_tasks_log": tasks_from_log,
          "architectures": list(architectures or []), "model": model}
    cfg = {"model": model}
    if classifies:
        return Finding.of(mode, "rerank-served-task", Status.PASS, "pairs are scored by a classifier head "
                          "(task classify: a cross-encoder)", _live(ev))
    if embeds and named and who.style in ("cross-encoder", "listwise"):
        return Finding.of(CROSS_ENCODER_SERVED_AS_EMBEDDER, "rerank-served-task", Status.FAIL,
                          f"{model} is a cross-encoder served as an embedding model (task embed): /score and "
                          "/rerank return cosine similarities, not its relevance score", _live(ev), cfg=cfg)
    if embeds and (named or causal and named):
        return Finding.of(mode, "rerank-served-task", Status.FAIL, f"{model} is served as an embedding model "
                          "(task embed, /v1/embeddings answers): /score and /rerank return cosine similarities, not "
                          "the reranker's relevance; its --hf-overrides are missing", _live(ev), cfg=cfg)
    if embeds:
        return Finding.of(mode, "rerank-served-task", Status.PASS, "pairs are scored as embedding cosine "
                          "similarity (bi-encoder): right for an embedding model, not a cross-encoder's relevance",
                          _live(ev))
    return Finding.of(mode, "rerank-served-task", Status.UNKNOWN, "neither /v1/embeddings nor /classify answered: "
                      "the scoring task is unknown", _live(ev))


def score_facts(scores: Sequence[Optional[Sequence[float]]], prefix: str = "score") -> dict[str, Any]:
    """{rerank.<prefix>_range: [lo, hi], rerank.<prefix>_spread: the smallest case spread} (None when a case has no
    scores): the facts the clues of triage/catalogue/rerank_clues.py read."""
    keys = (k.SCORE_RANGE, k.SCORE_SPREAD) if prefix == "score" else (k.RAW_RANGE, k.RAW_SPREAD)
    if not scores or any(not s for s in scores):
        return {keys[0]: None, keys[1]: None}
    flat = [x for s in scores for x in s or ()]
    return {keys[0]: [round(min(flat), 6), round(max(flat), 6)],
            keys[1]: round(min(max(s) - min(s) for s in scores if s), 6)}


def _same(a: Optional[Sequence[float]], b: Optional[Sequence[float]], tol: float = 1e-4) -> Optional[bool]:
    if not a or not b or len(a) != len(b):
        return None
    return all(abs(x - y) <= tol * max(1.0, abs(y)) for x, y in zip(a, b, strict=True))


def check_activation(default: Sequence[Optional[Sequence[float]]], raw: Sequence[Optional[Sequence[float]]],
                     on: Sequence[Optional[Sequence[float]]], errors: Sequence[str] = ()) -> Finding:
    """Are the scores probabilities? The same pairs without ``use_activation``, with false and with true.

    Per case, scores in input order (None when the request failed). The answer without the field equal to
    use_activation false (and unlike true): the server's default is no activation, the scores are logits
    (scores-are-logits). Equal to true: sigmoid probabilities. All three equal: an identity activation (a
    regression head, or an embedding cosine): the scores are what the head gives, judged by their range only."""
    mode = get("scores-are-logits")
    facts = {**score_facts(default), **score_facts(raw, "raw")}
    ev: dict[str, Any] = {"default": list(default), "use_activation_false": list(raw), "use_activation_true": list(on)}
    if any(s is None for s in default):
        return Finding.of(mode, "rerank-activation", Status.ERROR, "rerank requests failed: " + "; ".join(errors)[:300],
                          _live({**ev, "facts": facts}))
    if any(s is None for s in raw) or any(s is None for s in on):
        return Finding.of(mode, "rerank-activation", Status.UNKNOWN, "use_activation was not accepted on /rerank: "
                          "whether the scores are probabilities is not known (" + "; ".join(errors)[:200] + ")",
                          _live({**ev, "facts": {**facts, k.USE_ACTIVATION: None}}))
    as_raw = all(_same(d, r) for d, r in zip(default, raw, strict=False))
    as_on = all(_same(d, o) for d, o in zip(default, on, strict=False))
    use = True if as_on and not as_raw else False if as_raw and not as_on else None
    facts[k.USE_ACTIVATION] = use
    ev["facts"] = facts
    lo, hi = facts[k.SCORE_RANGE]
    if use is False:
        return Finding.of(mode, "rerank-activation", Status.WARN, f"relevance scores are raw logits ({lo:.4g} .. "
                          f"{hi:.4g}): the server's default is use_activation false; with use_activation true they "
                          "are sigmoid probabilities", _live(ev), cfg={"num_classes": 1})
    if use is None and (lo < 0 or hi > 1):
        return Finding.of(mode, "rerank-activation", Status.WARN, f"relevance scores {lo:.4g} .. {hi:.4g} are not "
                          "probabilities, and use_activation does not change them", _live(ev), cfg={"num_classes": 1})
    how = ("sigmoid of the head's logits (use_activation true by default)" if use
           else "the head's own values (use_activation changes nothing: an identity activation)")
    return Finding.of(mode, "rerank-activation", Status.PASS, f"relevance scores {lo:.4g} .. {hi:.4g} are {how}",
                      _live(ev))


def ranking_cause(facts: dict[str, Any], served_task_ok: Optional[bool], flat: bool = True,
                  findings: Sequence[Any] = ()) -> tuple[Optional[FailureMode], list[str]]:
    """(the record the differential's rule names for the symptom, the candidates that stand) on these facts: the
    same rule (triage.differential.judge) over every record that declares scores-flat or scores-not-ranking."""
    from triage import differential as dx
    from triage.catalogue.symptoms import Case
    case = Case(tuple(findings), facts={**facts, **({k.SERVED_TASK: "embed"} if served_task_ok is False else {})})
    j = dx.judge([dx.weigh(m, case) for m in dx.candidates_of(SCORES_FLAT if flat else SCORES_NOT_RANKING)])
    return (j.named.mode if j.named is not None else None), [c.mode.id for c in j.standing]


def check_ranking(cases: list[dict[str, Any]], untrained: Optional[str], served_task_ok: Optional[bool],
                  facts: Optional[dict[str, Any]] = None, model: str = "") -> Finding:
    """The relevant document (index 0 of each case's documents) must come first, with a visible margin.

    ``cases``: [{"query", "documents", "scores": [per document, input order] | None, "error"}]. ``untrained``:
    why the model's answer is unknown (random weights), or None. ``served_task_ok`` False: scored by cosine.
    ``facts``: what the other rerank probes measured (rerank_clues' keys); a failure names the record they
    single out (ranking_cause), else none, with the candidates. ``model``: the served id, for the fix's command.
    """
    facts = {**(facts or {}), **score_facts([c.get("scores") for c in cases])}
    mode = get("reranker-overrides-missing")
    shown = []
    for c in cases:
        sc = c.get("scores")
        served = sorted(range(len(sc)), key=lambda i: -sc[i]) if sc else []
        shown.append({**c, "expected_order": [0] + [i for i in range(1, len(c["documents"]))],
                      "served_order": served})
    ev: dict[str, Any] = {"cases": shown, "flat_spread": FLAT_SPREAD, "facts": facts}
    failed = [c for c in shown if not c.get("scores")]
    if failed:
        return Finding.of(mode, "rerank-ranking", Status.ERROR, f"ranking requests failed: {failed[0].get('error')}",
                          _live(ev))
    odd = [x for c in shown for x in c["scores"] if not _is_score(x)]
    if odd:  # inf - 0 = inf passed "spread >= inf": a spread is only a spread of finite numbers
        return Finding.of(mode, "rerank-ranking", Status.UNKNOWN, f"ranking not judged: score {_show(odd[0])} is not "
                          "a finite number", _live(ev))
    if untrained:
        return Finding.of(mode, "rerank-ranking", Status.UNKNOWN, f"ranking not judged: {untrained}", _live(ev))
    first = [c["served_order"][0] == 0 for c in shown]
    spreads = [max(c["scores"]) - min(c["scores"]) for c in shown]
    ev.update(spreads=[round(s, 5) for s in spreads])
    facts[k.RANKS] = all(first) and min(spreads) >= FLAT_SPREAD
    if facts[k.RANKS]:
        return Finding.of(mode, "rerank-ranking", Status.PASS, f"the relevant document ranks first in all "
                          f"{len(shown)} cases (score spread >= {min(spreads):.3f})", _live(ev))
    if all(first):
        why = (f"all scores within {max(spreads):.3f} of each other: the server does not separate a document that "
               "repeats the query's words from unrelated ones")
    else:
        why = f"the relevant document is not first in {first.count(False)} of {len(shown)} cases"
    if served_task_ok is False:
        why += " (scored as embedding cosine)"
    flat = all(first)
    symptom = SCORES_FLAT if flat else SCORES_NOT_RANKING
    cause, standing = ranking_cause(facts, served_task_ok, flat)
    facts[f"symptom.{symptom}"] = True  # shown to the differential whether or not a record is named here
    ev["symptoms"] = [symptom]
    if cause is None:
        return Finding("rerank-ranking", Status.FAIL, f"scores do not rank: {why}; the evidence does not single out "
                       f"a cause (one of {', '.join(standing)})", {**ev, "source": "live probe",
                                                                   "candidates": standing},
                       UNDECIDED_RANKING_FIX,
                       [r for m in standing for r in get(m).refs], failure_mode="")
    return Finding.of(cause, "rerank-ranking", Status.FAIL, f"scores do not rank: {why}", _live(ev),
                      cfg={**facts_cfg(facts), **({"model": model} if model else {})})


def facts_cfg(facts: dict[str, Any]) -> dict[str, Any]:
    """The config a fix reads from the facts (the overrides the server was given)."""
    ov = facts.get(k.OVERRIDES)
    return {"hf_overrides": ov} if isinstance(ov, dict) else {}
