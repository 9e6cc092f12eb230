"""The error a page can receive from ui.services; its text is the message shown, never a traceback."""
from __future__ import annotations


class ServiceError(Exception):
    """Something the user must read: unreachable server, 401, a log that is not a vLLM log."""
