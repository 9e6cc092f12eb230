"""The one redaction point: every byte on its way to the store, stdout/stderr or an export passes here.

It knows the exact secrets of this process (``add_secret``: the HTTP client registers the API key
and a URL's password the moment it is built, the CLI the key it read) and the shapes of secrets
it was not told (``Authorization``/``Bearer`` values, ``--api-key`` in a pasted command line,
quoted, ``=``-joined, continued with a backslash or holding escaped spaces, ``*_KEY``/``*_TOKEN``
values, URL passwords, ``sk-…`` keys: ``triage.secret_shapes`` finds them). ``redact_text`` also neutralises
terminal escape sequences (a server-chosen model id could otherwise repaint the terminal or a Markdown viewer).
``jsonable`` turns NaN/±Infinity into null so JSON output stays JSON.
"""
from __future__ import annotations

import base64
import html
import json
import math
import re
from typing import Any
from urllib.parse import parse_qsl, quote, unquote

from triage.secret_docs import drop_secret_documents
from triage.secret_shapes import REDACTED, REGISTER_MIN, find_shapes, scan_secrets, secret_env_name, shell_split

MIN_SECRET_LEN = 4  # shorter "secrets" would blank every occurrence of a common substring

_SECRETS: set[str] = set()

# C0 controls but tab/newline/carriage return, DEL, and the C1 range (0x9b is a one-byte CSI)
_CONTROL = re.compile(r"[\x00-\x08\x0b\x0c\x0e-\x1f\x7f-\x9f]")
_SGR = re.compile(r"\x1b\[[0-9;]*m")  # colour codes: dropped (vLLM logs carry them), not shown

_SECRET_KEY = re.compile(r"(?i)(api[_-]?key$|^authorization$|_token$|_key$|secret|password)")

__all__ = ["REDACTED", "SafeStream", "add_secret", "add_url_secrets", "drop_secret_documents", "dumps_json",
           "jsonable", "known_secrets", "neutralise", "redact_exact", "redact_obj", "redact_text", "scan_secrets",
           "secret_env_name", "shell_split"]


def _redact_shapes(text: str, register: bool = True) -> str:
    found = find_shapes(text)
    if not found:
        return text
    out: list[str] = []
    last = 0
    for (a, b), v in found:
        if a < last:
            continue
        out.append(text[last:a])
        out.append(REDACTED)
        last = b
        if register and len(v) >= REGISTER_MIN:
            add_secret(v)
    out.append(text[last:])
    return "".join(out)


def add_secret(secret: str | None) -> None:
    """Make ``secret`` (and its JSON-, URL- and HTML-escaped forms) redacted wherever it appears."""
    if not secret or len(secret) < MIN_SECRET_LEN:
        return
    for form in (secret, json.dumps(secret)[1:-1], quote(secret, safe=""), html.escape(secret)):
        if len(form) >= MIN_SECRET_LEN:
            _SECRETS.add(form)


_QUERY_SECRET = re.compile(r"(?i)(password|passwd|pwd|secret|token|api_?key)$")


_DB_SCHEMES = frozenset({"postgresql", "postgres", "mysql", "mariadb", "sqlite"})


def add_url_secrets(url: str | None) -> None:
    """Register every credential a URL carries, whatever its shape: ``user:pw@``, ``:pw@``, a token alone
    (``token@``), an un-encoded ``@`` in the password (all up to the last ``@`` before the host, and its
    pieces), ``?password=PW`` in the query, and the Basic-auth header the userinfo turns into (a server
    may echo it)."""
    if not url or "://" not in url:
        return
    rest = url.split("://", 1)[1]
    netloc, _, tail = rest.partition("/")
    query = tail.partition("?")[2] if "?" in tail else netloc.partition("?")[2]
    netloc = netloc.partition("?")[0]
    if "@" in netloc:
        userinfo = netloc.rpartition("@")[0]
        user, colon, pw = userinfo.partition(":")
        scheme = url.split("://", 1)[0].split("+", 1)[0].lower()
        # a database user name alone (no password) is not a secret; the query is still read below
        if colon or scheme not in _DB_SCHEMES:
            secret = pw if colon else user  # token@host: the token is the secret
            for form in (secret, unquote(secret), *secret.split("@")):
                add_secret(form)
            pair = f"{unquote(user)}:{unquote(pw)}"
            add_secret(base64.b64encode(pair.encode()).decode())
    for k, v in parse_qsl(query, keep_blank_values=False):
        if _QUERY_SECRET.search(k):
            add_secret(v)
            add_secret(quote(v, safe=""))


def known_secrets() -> tuple[str, ...]:
    """The registered secrets, longest first (so a secret containing another is replaced whole)."""
    return tuple(sorted(_SECRETS, key=len, reverse=True))


def neutralise(text: str) -> str:
    """Colour codes dropped; every other control character shown as ``\\xNN`` instead of executed."""
    if "\x1b" in text:
        text = _SGR.sub("", text)
    return _CONTROL.sub(lambda m: f"\\x{ord(m.group()):02x}", text)


def redact_exact(text: str) -> str:
    """Only the registered exact secrets replaced, escapes neutralised: for text that is already
    structured (a JSON document whose strings were redacted one by one)."""
    for s in known_secrets():
        if s in text:
            text = text.replace(s, REDACTED)
    return neutralise(text)


def redact_text(text: str, secrets: list[str] | tuple[str, ...] = ()) -> str:
    """Replace the exact secrets (registered and given) and known secret shapes by [REDACTED];
    neutralise terminal escape sequences."""
    if not isinstance(text, str):
        return text
    extra = [s for s in secrets if s and s not in _SECRETS]
    for s in (*known_secrets(), *extra):
        if s in text:
            text = text.replace(s, REDACTED)
    return neutralise(_redact_shapes(text))


def _secret_key(k: str) -> bool:
    """A JSON key naming a secret: an upper-case one (an environment map's) by its parts (``secret_env_name``:
    HF_AUTH yes, DB_PASSWORD_FILE no), any other by its shape (``api_key``, ``*_token``, ``password``)."""
    if k[:1].isalpha() and k.isupper():
        return secret_env_name(k)
    return bool(_SECRET_KEY.search(k))


def redact_obj(obj: Any, secrets: list[str] | tuple[str, ...] = (), _depth: int = 0) -> Any:
    """Redact every string inside a JSON-like value (keys included); keys named like secrets lose their value."""
    if isinstance(obj, str):
        return redact_text(obj, secrets)
    if _depth > 64:
        return "[nested too deep]"
    if isinstance(obj, dict):
        out = {}
        for k, v in obj.items():
            key = redact_text(k, secrets) if isinstance(k, str) else k
            # only string values are secrets: api_key_required=True / api_key_given=True stay readable
            if isinstance(k, str) and isinstance(v, str) and v and _secret_key(k):
                out[key] = REDACTED
            else:
                out[key] = redact_obj(v, secrets, _depth + 1)
        return out
    if isinstance(obj, (list, tuple)):
        return [redact_obj(v, secrets, _depth + 1) for v in obj]
    return obj


def jsonable(obj: Any, _depth: int = 0) -> Any:
    """The value with NaN and ±Infinity as None (JSON has neither), nested values alike."""
    if isinstance(obj, float):
        return obj if math.isfinite(obj) else None
    if _depth > 64:
        return "[nested too deep]"
    if isinstance(obj, dict):
        return {k: jsonable(v, _depth + 1) for k, v in obj.items()}
    if isinstance(obj, (list, tuple)):
        return [jsonable(v, _depth + 1) for v in obj]
    return obj


def dumps_json(obj: Any, **kw: Any) -> str:
    """JSON text that is JSON: no NaN/Infinity, everything redacted."""
    return json.dumps(redact_obj(jsonable(obj)), allow_nan=False, default=str, **kw)


class SafeStream:
    """A text stream wrapper that redacts and neutralises each line before it reaches the real stream.

    Lines are held until their newline (a secret split over two writes is still caught); ``flush``
    writes any rest. ``buffer`` is the raw binary stream (exports written as bytes are redacted by
    their renderer).
    """

    def __init__(self, raw: Any) -> None:
        self._raw = raw
        self._pending = ""

    def write(self, s: str) -> int:
        self._pending += s
        if "\n" in self._pending:
            head, _, self._pending = self._pending.rpartition("\n")
            self._raw.write(redact_text(head + "\n"))
        if len(self._pending) > 1 << 20:  # no newline for a MiB: write it out anyway
            self._raw.write(redact_text(self._pending))
            self._pending = ""
        return len(s)

    def write_verbatim(self, s: str) -> int:
        """Write structured text (JSON) with only the exact secrets replaced: a pattern must not
        turn ``"kv_bytes_per_token": 1`` into something that is not JSON."""
        self.flush()
        self._raw.write(redact_exact(s))
        return len(s)

    def flush(self) -> None:
        if self._pending:
            self._raw.write(redact_text(self._pending))
            self._pending = ""
        self._raw.flush()

    def __getattr__(self, name: str) -> Any:  # encoding, isatty, fileno, buffer …
        return getattr(self._raw, name)
