"""The two errors a page can receive from ui.services; their text is the message shown, never a traceback."""
from __future__ import annotations


class ServiceError(Exception):
    """Something the user must read: unreachable server, 401, a log that is not a vLLM log."""


class NotAvailable(ServiceError):
    """The engine part behind this feature is not in the tree yet."""
