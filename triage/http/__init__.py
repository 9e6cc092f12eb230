"""The one HTTP package: every byte that enters from the network passes here, and no module outside it imports
httpx (an import-linter contract in pyproject.toml).

- ``errors``: the error kinds, the client's own cuts and the wording of every failure; ``proxy_of``.
- ``limits``: the byte cap, the total deadline and the parsed-size caps; the one capped, deadlined read.
- ``reply``: what a call answers (``Reply``, of both clients), never an exception.
- ``client``: ``VllmClient`` and ``ProbeClient``, bound to one vLLM server (key, TLS, no redirects).
- ``transport``: the same rules under other HTTP stacks (client libraries, Open WebUI's requests, Prometheus).
"""

from __future__ import annotations

from triage.http.client import (
    EMBEDDINGS_PATH,
    ProbeClient,
    ProbeSetupError,
    VllmClient,
    auth_headers,
    base_url_problem,
    origin_of,
    path_prefix_of,
    register_secrets,
    status_of,
)
from triage.http.errors import (
    ConnectError,
    HTTPError,
    HTTPStatusError,
    TimeoutException,
    cut_kind,
    cut_text,
    describe_failure,
    proxy_of,
    server_message,
    transport_text,
)
from triage.http.limits import MAX_BODY_BYTES, MAX_DIMENSIONS, get_within, read_json
from triage.http.reply import Reply, trim_for_storage
from triage.http.transport import (
    CappedTransport,
    HttpClient,
    HttpRequest,
    Transport,
    capped_client,
    service_client,
)

__all__ = [
    "EMBEDDINGS_PATH", "MAX_BODY_BYTES", "MAX_DIMENSIONS", "CappedTransport", "ConnectError",
    "HTTPError", "HTTPStatusError", "HttpClient", "HttpRequest", "ProbeClient", "ProbeSetupError", "Reply",
    "TimeoutException", "Transport", "VllmClient", "auth_headers", "base_url_problem", "capped_client", "cut_kind",
    "cut_text", "describe_failure", "get_within", "origin_of", "path_prefix_of", "proxy_of", "read_json",
    "register_secrets", "server_message", "service_client", "status_of", "transport_text", "trim_for_storage",
]
