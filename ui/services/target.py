"""The Target page's service: which server (URL checked, models listed), saved targets, the last one used."""
from __future__ import annotations

from urllib.parse import urlsplit

from triage.target import Target
from ui.adapters import http_status_message
from ui.errors import ServiceError
from ui.services.base import ServiceBase, guard
from ui.values import ModelInfo, SavedTarget


def check_url(text: str) -> tuple[str, str]:
    """(the URL to use, a note on what was changed); a ServiceError says why a URL cannot be used."""
    from triage.http import base_url_problem

    raw = (text or "").strip().rstrip("/")
    if not raw:
        raise ServiceError("Give the server URL, for example http://127.0.0.1:8000.")
    if any(c.isspace() for c in raw):
        raise ServiceError(f"'{raw}' has spaces in it: give one URL, for example http://127.0.0.1:8000.")
    note = ""
    if "://" not in raw:
        raw, note = f"http://{raw}", f"No scheme given: using http://{raw}."
    parts = urlsplit(raw)
    if parts.scheme not in ("http", "https"):
        raise ServiceError(f"'{parts.scheme}://' is not a web address: a vLLM server answers on http:// or "
                           "https://.")
    try:
        port = parts.port
    except ValueError:
        raise ServiceError(f"The port in '{raw}' is not a number between 1 and 65535.") from None
    if not parts.hostname:
        raise ServiceError(f"'{raw}' names no host: give one like http://127.0.0.1:8000.")
    if port == 0:
        raise ServiceError(f"Port 0 in '{raw}' is not a port a server listens on.")
    why = base_url_problem(raw)
    if why is not None:
        raise ServiceError(f"'{raw}' cannot be used: {why}.")
    if parts.path.rstrip("/").endswith("/v1"):
        raw, note = raw[: raw.rstrip("/").rfind("/v1")], (note + " The server's root is used, without /v1.").strip()
    return raw, note


class TargetService(ServiceBase):
    """Target page (and the sidebar's session target)."""

    @guard("Listing models")
    def list_models(self, url: str, api_key: str | None = None, timeout_s: float = 5.0) -> list[ModelInfo]:
        """GET /v1/models through the engine's client: the model ids served, with their max_model_len."""
        from triage.http import VllmClient

        url, _note = self.check_url(url)
        with VllmClient(url, api_key=api_key or None, timeout_s=timeout_s) as client:
            r = client.get("/v1/models")
        if r.transport_failed:
            kinds = {"refused": "Cannot connect to the server (connection refused): is the URL right, the server up?",
                     "timeout": "The server did not answer /v1/models in time.",
                     "tls": "TLS error talking to the server: check https vs http and the certificate."}
            raise ServiceError(kinds.get(r.error_kind or "", f"Cannot reach the server: {r.error}"))
        if r.status != 200:
            raise ServiceError(http_status_message(r.status or 0, r.text, key_given=bool(api_key)))
        body = r.json()
        if not isinstance(body, dict):
            raise ServiceError("The server answered /v1/models with something that is not JSON: is it vLLM?")
        return [ModelInfo(str(m.get("id")), m.get("root"), m.get("max_model_len")) for m in body.get("data") or []]

    def check_url(self, text: str) -> tuple[str, str]:
        """(the URL to use, a note on what was changed); a ServiceError says why a URL cannot be used."""
        return check_url(text)

    def last_target(self) -> Target | None:
        """The target chosen last in any tab (the store remembers it; never its API key)."""
        try:
            t = self.store.last_used_target()
        except Exception:  # noqa: BLE001 - an old or unreachable database: start without one
            return None
        if t is None:
            return None
        return Target(url=t.url, model=t.model, truncation=t.truncation, cmdline=t.cmdline, label=t.label,
                      target_id=t.id)

    @guard("Saved targets")
    def saved_targets(self) -> list[SavedTarget]:
        return [SavedTarget(**vars(t)) for t in self.store.list_targets()]

    @guard("Saving the target")
    def save_target(self, form: Target) -> Target:
        """Remember the target (never its API key) and return it with its saved id."""
        t = self.store.find_or_add_target(form.url or "", form.model, form.truncation.request_value(),
                                          form.cmdline or None, form.label or None)
        self.store.mark_target_used(t.id)
        return form.with_(url=t.url, target_id=t.id)
