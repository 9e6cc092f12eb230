"""Pure verdicts of the conformance set: recorded exchanges in, a Finding out (no I/O here).

Each finding cites the deployment-guide claim it confirms or refutes (shared/reference/
vllm-embedding-facts.md §5) and carries the server's own responses as evidence. The
functions take ``Reply`` values, so tests feed them responses recorded from real servers.
"""
from __future__ import annotations

import base64
import math
import struct
from collections.abc import Sequence
from typing import Any, Optional

from triage.catalogue import POOLING_LIVELOCK
from triage.catalogue.features import CHUNKED_PROCESSING
from triage.catalogue.records import EMBEDDINGS_ROUTE_REFUSED
from triage.catalogue.refusal_clues import (
    REJECT_CONTEXT_LENGTH,
    REJECT_MESSAGE,
    REJECT_STATUS,
    SERVER_MAX_MODEL_LEN,
    context_length_of,
)
from triage.findings import Finding, Status
from triage.http import Reply

CLAIMS = {
    "v1": "the endpoint is `/embeddings` without `/v1`; OpenAI API is off by default",
    "entrypoint": "`vllm-entrypoint api_server` starts the server",
    "array": "the embeddings API rejects array input with 422",
    "prefix": 'task prefixes "Retrieve: " map to ids [151644, …]',
    "batch_flag": "`--embedding-batch-size` sets the embedding batch size",
    "remote_code": 'Qwen3-Embedding needs `--trust-remote-code`, "Qwen3EmbeddingModel" not registered',
    "kv": "KV cache reserves 4.2 GB for max_model_len 32768",
    "chunked": "chunked prefill must be disabled for embedding models or shapes mismatch",
}
FACTS = "shared/reference/vllm-embedding-facts.md"


def ev(*exchanges: Reply, **more: Any) -> dict[str, Any]:
    """Evidence: the exchanges as the server answered them (vectors trimmed), plus named values."""
    return {"exchanges": [x.to_dict() for x in exchanges], "source": "live probe", **more}


def vectors(ex: Reply) -> list[list[float]]:
    """Embeddings of a 200 response in index order (base64 decoded as little-endian float32)."""
    if not ex.ok or not isinstance(ex.body, dict):
        return []
    out = []
    for d in sorted(ex.body.get("data") or [], key=lambda d: d.get("index", 0)):
        e = d.get("embedding")
        out.append(decode_base64(e) if isinstance(e, str) else list(e or []))
    return out


def decode_base64(s: str) -> list[float]:
    raw = base64.b64decode(s)
    return list(struct.unpack(f"<{len(raw) // 4}f", raw))


def norm(v: Sequence[float]) -> float:
    return math.sqrt(sum(x * x for x in v))


def cosine(a: Sequence[float], b: Sequence[float]) -> float:
    na, nb = norm(a), norm(b)
    if not (na and nb and len(a) == len(b)):
        return float("nan")
    return sum(x * y for x, y in zip(a, b, strict=True)) / (na * nb)


def _claim(key: str, verdict: str, **more: Any) -> dict[str, Any]:
    return {"guide_claim": CLAIMS[key], "verdict": verdict, "facts": FACTS, **more}


def v1_prefix(v1: Reply, bare: Reply) -> Finding:
    if v1.ok:
        return Finding("conformance-v1-prefix", Status.PASS,
                       f"POST /v1/embeddings answers 200; POST /embeddings answers {bare.status}",
                       {**ev(v1, bare), **_claim("v1", "refuted")}, refs=["OpenAI-compatible server"])
    return Finding.of(EMBEDDINGS_ROUTE_REFUSED, "conformance-v1-prefix", Status.FAIL,
                      f"POST /v1/embeddings answered {v1.status or v1.error}",
                      {**ev(v1, bare), **_claim("v1", "confirmed" if bare.ok else "undecided")})


def openai_server(models: Reply, version: Optional[str]) -> Finding:
    ok = models.ok and isinstance(models.body, dict) and models.body.get("object") == "list"
    return Finding("conformance-openai-server", Status.PASS if ok else Status.UNKNOWN,
                   "the server speaks the OpenAI API (GET /v1/models lists models)" if ok
                   else f"GET /v1/models answered {models.status or models.error}",
                   {**ev(models, vllm_version=version), **_claim("entrypoint", "refuted" if ok else "undecided"),
                    "why": "`vllm serve` is the OpenAI-compatible server; there is no `vllm-entrypoint` command"},
                   "Start the server with `vllm serve MODEL --runner pooling`." if not ok else "")


def array_input(lst: Reply, n: int) -> Finding:
    got = len(vectors(lst))
    ok = lst.ok and got == n
    return Finding("conformance-array-input", Status.PASS if ok else Status.FAIL,
                   f"a list of {n} strings is accepted ({got} vectors)" if ok
                   else f"a list of {n} strings answered {lst.status}: {lst.error_message()[:120]}",
                   {**ev(lst), **_claim("array", "refuted" if ok else "confirmed" if lst.status == 422
                                        else "undecided")})


def token_ids(single: Reply, many: Reply) -> Finding:
    ok = single.ok and many.ok and len(vectors(many)) == 2
    return Finding("conformance-token-ids", Status.PASS if ok else Status.FAIL,
                   "token-id input (one list and a list of lists) is accepted" if ok
                   else f"token-id input answered {single.status}/{many.status}",
                   {**ev(single, many), **_claim("array", "refuted" if ok else "undecided")})


def index_order(batch: Reply, singles: list[Reply]) -> Finding:
    bv = vectors(batch)
    idx = [d.get("index") for d in batch.obj().get("data", [])] if batch.ok else []
    cos = [round(cosine(bv[i], vectors(s)[0]), 6) if i < len(bv) and vectors(s) else None
           for i, s in enumerate(singles)]
    ok = idx == list(range(len(singles))) and all(c is not None and c > 0.999 for c in cos)
    return Finding("conformance-index-order", Status.PASS if ok else Status.FAIL,
                   "data[i].index == i and each batch vector matches its input sent alone" if ok
                   else f"batch order mismatch: indexes {idx}, cosine to singles {cos}",
                   ev(batch, *singles, indexes=idx, cosine_batch_vs_single=cos),
                   "" if ok else "Match vectors by data[].index, not by position.")


def base64_equals_float(flt: Reply, b64: Reply) -> Finding:
    a, b = vectors(flt), vectors(b64)
    same_shape = bool(a and b and len(a[0]) == len(b[0]))
    diff = max((abs(x - y) for x, y in zip(a[0], b[0], strict=True)), default=None) if same_shape else None
    ok = diff is not None and diff < 1e-5
    return Finding("conformance-base64", Status.PASS if ok else Status.FAIL,
                   "encoding_format=base64 decodes (float32 LE) to the float vector" if ok
                   else f"base64 and float differ (max |diff| {diff})", ev(flt, b64, max_abs_diff=diff))


def dimension_norm(exchanges: list[Reply]) -> Finding:
    vs = [v for ex in exchanges for v in vectors(ex)]
    dims = sorted({len(v) for v in vs})
    norms = [round(norm(v), 6) for v in vs]
    if not vs:
        return Finding("conformance-dimension-norm", Status.UNKNOWN, "no vectors to measure", ev(*exchanges))
    if len(dims) != 1:
        return Finding("conformance-dimension-norm", Status.FAIL, f"vector dimensions differ: {dims}",
                       ev(*exchanges, dims=dims, norms=norms))
    unit = all(abs(n - 1) < 1e-3 for n in norms)
    return Finding("conformance-dimension-norm", Status.PASS if unit else Status.WARN,
                   f"dimension {dims[0]}; L2 norm " + ("1 (normalised)" if unit else f"not 1: {norms[:4]}"),
                   ev(*exchanges[:1], dimension=dims[0], norms=norms),
                   "" if unit else "Normalise vectors client-side before cosine/dot-product search, or check "
                   "the pooler config (use_activation).")


def determinism(first: Reply, second: Reply) -> Finding:
    a, b = vectors(first), vectors(second)
    c = cosine(a[0], b[0]) if a and b else float("nan")
    ok = c > 0.9999
    return Finding("conformance-determinism", Status.PASS if ok else Status.FAIL,
                   f"the same text twice gives cosine {c:.6f}", ev(first, second, cosine=c),
                   "" if ok else "Non-deterministic vectors: check the dtype, batch-dependent kernels, pooling.")


def usage_tokens(emb: Reply, tok: Reply) -> Finding:
    usage = (emb.obj().get("usage") or {}).get("prompt_tokens") if emb.ok else None
    count = tok.obj().get("count") if tok.ok else None
    ok = usage is not None and usage == count
    return Finding("conformance-usage-tokens", Status.PASS if ok else Status.WARN,
                   f"usage.prompt_tokens {usage} == /tokenize count {count}" if ok
                   else f"usage.prompt_tokens {usage} differs from /tokenize count {count}",
                   ev(emb, tok, usage_prompt_tokens=usage, tokenize_count=count))


def _reject_facts(ex: Reply, max_model_len: int) -> dict[str, Any]:
    """What the differential's clues read of a refusal (triage/catalogue/refusal_clues.py names the keys)."""
    msg = ex.error_message() if not ex.ok else ""
    facts: dict[str, Any] = {SERVER_MAX_MODEL_LEN: max_model_len}
    if not ex.ok:
        facts.update({REJECT_STATUS: ex.status, REJECT_MESSAGE: msg[:500],
                      REJECT_CONTEXT_LENGTH: context_length_of(msg)})
    return facts


def overlong_400(ex: Reply, max_model_len: int, tokens: int) -> Finding:
    """A longer input than max_model_len: 400 'maximum context length', or 200 where the server embeds it in chunks
    (--pooler-config enable_chunked_processing, issue 29: a feature, not a missing check). Chunks are told from a
    silent truncation by usage.prompt_tokens: the whole input counted (above max_model_len) was embedded."""
    msg = ex.error_message()
    facts = _reject_facts(ex, max_model_len)
    usage = (ex.obj().get("usage") or {}).get("prompt_tokens") if ex.ok and isinstance(ex.body, dict) else None
    if ex.ok and isinstance(usage, int) and usage > max_model_len and vectors(ex):
        return Finding.of(CHUNKED_PROCESSING, "conformance-overlong-400", Status.PASS,
                       f"a {tokens}-token input (max_model_len {max_model_len}) answered 200 with usage.prompt_tokens "
                       f"{usage}: the server embeds over-long inputs in chunks (chunked processing)",
                       ev(ex, max_model_len=max_model_len, input_tokens=tokens, usage_prompt_tokens=usage,
                          facts={**facts, "pooler_config.enable_chunked_processing": True}),
                          explanation=CHUNKED_PROCESSING.mechanism, failure_mode="")
    ok = ex.status == 400 and "maximum context length" in msg
    status = Status.PASS if ok else Status.WARN if ex.status == 400 else Status.FAIL
    return Finding("conformance-overlong-400", status,
                   f"a {tokens}-token input without truncation is rejected with 400 (max_model_len {max_model_len})"
                   if ok else f"a {tokens}-token input without truncation answered {ex.status}: {msg[:120]}",
                   ev(ex, max_model_len=max_model_len, input_tokens=tokens, facts=facts),
                   f"Send truncate_prompt_tokens (max_model_len - 1 on vLLM {POOLING_LIVELOCK.affected_text}) or split "
                   "long documents.")


def truncate_too_big_400(ex: Reply, max_model_len: int) -> Finding:
    msg = ex.error_message()
    ok = ex.status == 400 and "max_model_len" in msg
    return Finding("conformance-truncate-too-big-400", Status.PASS if ok else Status.WARN,
                   f"truncate_prompt_tokens = {max_model_len + 1} (> max_model_len) is rejected with 400"
                   if ok else f"truncate_prompt_tokens > max_model_len answered {ex.status}: {msg[:120]}",
                   ev(ex, max_model_len=max_model_len), "Keep truncate_prompt_tokens <= max_model_len - 1.")


def dimensions(ex: Reply, asked: int, declared: Optional[bool]) -> Finding:
    got = len(vectors(ex)[0]) if vectors(ex) else None
    if ex.ok and got == asked:
        return Finding("conformance-dimensions", Status.PASS, f"dimensions={asked} accepted (Matryoshka declared)",
                       ev(ex, dimensions=asked, returned=got, matryoshka_declared=declared))
    if ex.status == 400 and "matryoshka" in ex.error_message().lower():
        return Finding("conformance-dimensions", Status.PASS,
                       f"dimensions={asked} rejected: the model does not declare Matryoshka support",
                       ev(ex, dimensions=asked, matryoshka_declared=declared),
                       "To use `dimensions`, serve with --hf-overrides '{\"is_matryoshka\": true}' (or "
                       "matryoshka_dimensions in config.json) when the model was trained for it "
                       "(Qwen3-Embedding: 32-2560); otherwise omit `dimensions`.")
    return Finding("conformance-dimensions", Status.FAIL if ex.ok else Status.WARN,
                   f"dimensions={asked} answered {ex.status} with {got} values: {ex.error_message()[:120]}",
                   ev(ex, dimensions=asked, returned=got, matryoshka_declared=declared))


def normalize_removed(ex: Reply) -> Finding:
    removed = ex.status == 400 and "normalize" in ex.error_message()
    return Finding("conformance-normalize-removed", Status.PASS if removed or ex.ok else Status.WARN,
                   "`normalize` is rejected: removed, use `use_activation`" if removed
                   else "`normalize` is still accepted by this version" if ex.ok
                   else f"`normalize` answered {ex.status}: {ex.error_message()[:120]}",
                   ev(ex, removed=removed),
                   "Drop `normalize` from requests; send `use_activation` instead." if removed else "")


def query_instruction(prefix_tok: Reply, im_start_tok: Reply, query_tok: Reply,
                      with_instr: Reply, without: Reply) -> Finding:
    ids = prefix_tok.obj().get("tokens") if prefix_tok.ok else None
    im_ids = im_start_tok.obj().get("tokens") if im_start_tok.ok else None
    a, b = vectors(with_instr), vectors(without)
    cos = round(cosine(a[0], b[0]), 6) if a and b else None
    if ids is None:
        return Finding("conformance-query-instruction", Status.UNKNOWN, "/tokenize unavailable",
                       ev(prefix_tok, **_claim("prefix", "undecided")))
    verdict = "confirmed" if 151644 in ids else "refuted"
    return Finding("conformance-query-instruction", Status.PASS if verdict == "refuted" else Status.WARN,
                   f'"Retrieve: " tokenizes to {ids[:8]} (no 151644); queries want `Instruct: …\\nQuery:…`'
                   if verdict == "refuted" else f'"Retrieve: " tokenizes to {ids[:8]}, which includes 151644',
                   ev(prefix_tok, im_start_tok, query_tok, with_instr, without, retrieve_ids=ids,
                      im_start_ids=im_ids, cosine_with_vs_without_instruction=cos, **_claim("prefix", verdict)),
                   "Format queries as `Instruct: {task}\\nQuery:{query}` and send documents without an "
                   "instruction (Qwen3-Embedding model card: 1-5 % retrieval loss without it). 151644 is "
                   "`<|im_start|>` in the Qwen tokenizer, not a task prefix.")


def chunked_shapes(long_out: Any, short_ex: Reply, long_tokens: int) -> Finding:
    """long_out: the ProbeOutcome of a max_model_len - 1 request sent under watch."""
    exs = long_out.exchanges
    lv = vectors(exs[0]) if exs else []
    sv = vectors(short_ex)
    if long_out.outcome != "ok" or not lv or not sv:
        stalled = long_out.outcome in ("livelock", "stuck-waiting")
        return Finding("conformance-chunked-prefill-shapes", Status.FAIL if stalled else Status.UNKNOWN,
                       f"a {long_tokens}-token input (truncated to max_model_len - 1) did not embed: "
                       f"{long_out.outcome}",
                       {"probe": long_out.to_dict(), **_claim("chunked", "undecided")},
                       "The server cannot finish a prompt this long: the stall finding of this run names the cause "
                       "and its fix.")
    same = len(lv[0]) == len(sv[0])
    return Finding("conformance-chunked-prefill-shapes", Status.PASS if same else Status.FAIL,
                   f"a max_model_len - 1 input embeds to {len(lv[0])} values like a short one ({len(sv[0])})",
                   {**ev(exs[0], short_ex, long_dim=len(lv[0]), short_dim=len(sv[0])),
                    **_claim("chunked", "refuted" if same else "undecided"),
                    "why": "long prompts are prefilled in chunks (when the budget is below the prompt) and still pool "
                           "to one vector; the real chunked-prefill failure is the pooling livelock at max_model_len"})
