"""Secret redaction: API keys, Authorization headers and *_KEY/*_TOKEN values never leave memory."""
from __future__ import annotations

import re
from typing import Any

REDACTED = "[REDACTED]"

_PATTERNS = [
    # Authorization: Bearer xxx  /  "Authorization": "Bearer xxx"
    re.compile(r"(?i)(authorization[\"']?\s*[:=]\s*[\"']?\s*(?:bearer|basic|token)?\s*)([^\s\"',}]+)"),
    # --api-key VALUE / --api-key=VALUE (vllm serve flag) and api_key='...' in non-default args
    re.compile(r"(?i)(--api-key(?:\s+|=))([^\s\"']+)"),
    re.compile(r"(?i)([\"']?api_key[\"']?\s*[:=]\s*\[?\s*[\"']?)([^\"',}\s)\]]+)"),
    # FOO_KEY=value, FOO_TOKEN=value, FOO_SECRET=value (env dumps, docker -e)
    re.compile(r"(?i)(\b[A-Z0-9_]*(?:_KEY|_TOKEN|_SECRET|_PASSWORD)\b[\"']?\s*[:=]\s*[\"']?)([^\s\"',}\[]+)"),
    # credentials in a URL: scheme://user:password@host
    re.compile(r"(://[^/\s:@]+:)([^@\s/]+)(?=@)"),
    # OpenAI-style keys seen bare
    re.compile(r"()(\bsk-[A-Za-z0-9_\-]{8,})"),
]


_SECRET_KEY = re.compile(r"(?i)(api[_-]?key$|^authorization$|_token$|_key$|secret|password)")


def redact_text(text: str, secrets: list[str] | tuple[str, ...] = ()) -> str:
    """Replace known secret shapes, and any exact secret strings given, by [REDACTED]."""
    for s in secrets:
        if s:
            text = text.replace(s, REDACTED)
    for pat in _PATTERNS:
        text = pat.sub(lambda m: m.group(1) + REDACTED if REDACTED not in m.group(2) else m.group(0), text)
    return text


def redact_obj(obj: Any, secrets: list[str] | tuple[str, ...] = ()) -> Any:
    """Redact every string inside a JSON-like value; keys named like secrets lose their value."""
    if isinstance(obj, str):
        return redact_text(obj, secrets)
    if isinstance(obj, dict):
        out = {}
        for k, v in obj.items():
            # only string values are secrets: api_key_required=True / api_key_given=True stay readable
            if isinstance(k, str) and isinstance(v, str) and v and _SECRET_KEY.search(k):
                out[k] = REDACTED
            else:
                out[k] = redact_obj(v, secrets)
        return out
    if isinstance(obj, (list, tuple)):
        return [redact_obj(v, secrets) for v in obj]
    return obj
