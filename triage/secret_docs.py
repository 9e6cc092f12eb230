"""Kubernetes ``Secret`` objects dropped from a pasted or uploaded file before anything reads or stores it.

A manifest set often carries its ``Secret`` beside the Deployment (``stringData``, base64 ``data``, any key:
``token:``, ``hf_token:``): no shape scanner can know every key a user chose, and a base64 value is not a shape. So a
Secret is never kept at all (issue 43): each YAML/JSON document that is one (or a ``kind: List`` item that is one) is
replaced by one comment line that names it and by blank lines (the lines of what follows keep their numbers, which
the deployment facts cite). A document that cannot be read is dropped whole when a line of it is ``kind: Secret``.
Used through ``triage.redact`` (the one redaction point).
"""
from __future__ import annotations

import json
import re
from typing import Any

# a "kind: Secret" (YAML, any quoting) or "kind": "Secret" (JSON) anywhere: the cheap test before any parse
_NAMES_SECRET = re.compile(r"""["']?\bkind["']?[ \t]*:[ \t]*["']?Secret(?![\w.-])""")
# an unreadable document is dropped when a line of it is a Secret's kind (YAML) or it holds a JSON one: a log line
# that merely mentions "kind: Secret" mid-sentence is kept
_SECRET_LINE = re.compile(r"""(?m)^[ \t-]*["']?kind["']?[ \t]*:[ \t]*["']?Secret(?![\w.-])"""
                          r"""|"kind"[ \t]*:[ \t]*"Secret"(?![\w.-])""")
_DOC_START = re.compile(r"(?m)^---(?=[ \t]|\r?$)")
MAX_NODES = 200_000  # mappings and lists walked in one document at most (aliases are walked once)


def _is_secret(node: Any) -> bool:
    return isinstance(node, dict) and node.get("kind") == "Secret"


def _name(node: Any) -> str:
    meta = node.get("metadata") if isinstance(node, dict) else None
    name = meta.get("name") if isinstance(meta, dict) else None
    return json.dumps(str(name) if name is not None else "?", ensure_ascii=True)


def _strip(node: Any, dropped: list[str]) -> bool:
    """Remove every Secret inside ``node`` (list items, mapping values), in place; True when one was removed.
    Each container is walked once (an alias shares it), so a YAML bomb costs no more than its nodes."""
    seen: set[int] = set()
    stack = [node]
    changed = False
    while stack:
        cur = stack.pop()
        if id(cur) in seen:
            continue
        seen.add(id(cur))
        if len(seen) > MAX_NODES:
            raise ValueError("too many nodes")
        if isinstance(cur, list):
            keep = [x for x in cur if not _is_secret(x)]
            if len(keep) != len(cur):
                dropped += [f"Secret {_name(x)}" for x in cur if _is_secret(x)]
                cur[:] = keep
                changed = True
            stack += [x for x in cur if isinstance(x, (dict, list))]
        elif isinstance(cur, dict):
            for k in [k for k, v in cur.items() if _is_secret(v)]:
                dropped.append(f"Secret {_name(cur[k])}")
                del cur[k]
                changed = True
            stack += [v for v in cur.values() if isinstance(v, (dict, list))]
    return changed


def _blanked(chunk: str, note: str, inline: bool) -> str:
    """``chunk`` as one comment (on the ``---`` line when ``inline``) and as many line ends as it had: the lines of
    what follows keep their numbers."""
    return (" " if inline else "") + f"# {note}" + "\n" * chunk.count("\n")


def _document(chunk: str, dropped: list[str], inline: bool) -> str:
    import yaml  # noqa: PLC0415 - only for a text that names a Secret

    try:
        data = yaml.load(chunk, Loader=getattr(yaml, "CSafeLoader", yaml.SafeLoader))  # noqa: S506 - a safe loader
    except (yaml.YAMLError, RecursionError, ValueError):
        if not _SECRET_LINE.search(chunk):
            return chunk
        dropped.append("a document naming kind: Secret that could not be read")
        return _blanked(chunk, "vllm-triage dropped a document here: it names kind: Secret and could not be read",
                        inline)
    if _is_secret(data):
        name = f"Secret {_name(data)}"
        dropped.append(name)
        return _blanked(chunk, f"vllm-triage dropped {name} here: a Secret's data is never read or stored", inline)
    mine: list[str] = []
    try:
        changed = _strip(data, mine)
    except (ValueError, RecursionError):
        dropped.append("a document naming kind: Secret too large to walk")
        return _blanked(chunk, "vllm-triage dropped a document here: it names kind: Secret and is too large to walk",
                        inline)
    if not changed:
        return chunk
    dropped += mine
    head = (("\n" if inline else "") + f"# vllm-triage dropped {', '.join(mine)} from this document: a Secret's data "
            "is never read or stored\n")
    return head + yaml.safe_dump(data, sort_keys=False, default_flow_style=False, allow_unicode=False)


def drop_secret_documents(text: str) -> tuple[str, list[str]]:
    """``text`` without its Kubernetes Secrets, and what was dropped (``Secret "name"`` each); unchanged when it
    names none."""
    if not isinstance(text, str) or not _NAMES_SECRET.search(text):
        return text, []
    dropped: list[str] = []
    starts = [0] + [m.start() for m in _DOC_START.finditer(text)]
    chunks = [text[a:b] for a, b in zip(starts, [*starts[1:], len(text)], strict=True)]
    out: list[str] = []
    for chunk in chunks:
        inline = bool(_DOC_START.match(chunk))
        marker, body = ("---", chunk[3:]) if inline else ("", chunk)
        out.append(marker + (_document(body, dropped, inline) if _NAMES_SECRET.search(body) else body))
    return "".join(out), dropped
