"""A client library's error text that quotes vLLM's error body: which library, the HTTP status, vLLM's message.

LiteLLM (``litellm.BadRequestError: … OpenAIException - {…}``), openai-python and what is built on it (LangChain,
LlamaIndex: ``openai.BadRequestError: Error code: 400 - {'object': 'error', 'message': …}``), Milvus
(``pymilvus.exceptions.MilvusException: … {"object":"error",…}``), Go HTTP clients (``status code: 400, … body:
{…}``) print vLLM's ErrorResponse as JSON or as a Python dict's repr inside their own line. ``read`` finds the body
(the first balanced ``{…}`` that parses as JSON or a Python literal and carries vLLM's keys) and its message; the
readers that know vLLM's texts (the start-up event rules, the error rules of triage.logs.classify) read the line
itself, so a quoted body is read whatever wraps it.
"""

from __future__ import annotations

import ast
import json
from dataclasses import dataclass
from typing import Any, Optional

from triage.vllm import logformats as lf

_KEYS = ("message", "detail", "error", "object")
_LIBRARIES = {"litellm": "LiteLLM", "openai": "openai-python (LangChain, LlamaIndex)", "pymilvus": "Milvus",
              "headers": "the Cohere SDK"}
COHERE_SDK = _LIBRARIES["headers"]
MAX_BODY = 20_000


@dataclass(frozen=True)
class ClientError:
    """What one error line says: the library that raised it ('' unknown), the status, vLLM's body and message."""

    library: str
    status: Optional[int]
    body: Optional[dict[str, Any]]
    message: str

    def to_dict(self) -> dict[str, Any]:
        return {"library": self.library or None, "status": self.status, "message": self.message[:500],
                "body": {k: v for k, v in (self.body or {}).items() if k != "message"} or None}


def _balanced(text: str, start: int) -> Optional[str]:
    """The ``{…}`` that opens at ``start`` (quotes respected), None when it does not close within MAX_BODY."""
    depth, quote, esc = 0, "", False
    for i in range(start, min(len(text), start + MAX_BODY)):
        c = text[i]
        if quote:
            if esc:
                esc = False
            elif c == "\\":
                esc = True
            elif c == quote:
                quote = ""
            continue
        if c in "\"'":
            quote = c
        elif c == "{":
            depth += 1
        elif c == "}":
            depth -= 1
            if depth == 0:
                return text[start:i + 1]
    return None


def _parse(candidate: str) -> Optional[dict[str, Any]]:
    for parse in (json.loads, ast.literal_eval):
        try:
            got = parse(candidate)
        except (ValueError, SyntaxError, TypeError, MemoryError, RecursionError):
            continue
        if isinstance(got, dict):
            return got
    return None


def quoted_body(text: str) -> Optional[dict[str, Any]]:
    """The first ``{…}`` in ``text`` that is a dict with one of vLLM's error keys (message, detail, error, object)."""
    at = text.find("{")
    tries = 0
    while at >= 0 and tries < 20:
        tries += 1
        cand = _balanced(text, at)
        if cand is not None:
            got = _parse(cand)
            if got is not None and any(k in got for k in _KEYS):
                return got
        at = text.find("{", at + 1)
    return None


def _message(body: dict[str, Any]) -> str:
    for key in ("message", "detail", "error"):
        v = body.get(key)
        if isinstance(v, dict):
            return _message(v)
        if v is not None:
            return str(v)
    return ""


def read(text: str) -> Optional[ClientError]:
    """The client error a line states: its library and status (from the wrapper's words) and vLLM's quoted body;
    None when the line quotes no body."""
    body = quoted_body(text)
    if body is None:
        return None
    lib, status = "", None
    for rx in lf.CLIENT_WRAPPER_RES:
        m = rx.search(text)
        if m is None:
            continue
        got = m.groupdict()
        lib = _LIBRARIES.get(got.get("lib") or "", "")
        status = int(got["status"]) if got.get("status") else None
        break
    code = body.get("code")
    if status is None and isinstance(code, int) and 100 <= code < 600:
        status = code
    return ClientError(lib, status, body, _message(body))
