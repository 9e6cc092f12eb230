"""What every page's service shares: the store (opened once, lazily), the error guard, small wording helpers."""
from __future__ import annotations

import threading
from collections.abc import Callable
from typing import Any

from triage.store import Store, default_db_url
from ui.adapters import plain_error
from ui.errors import ServiceError


def guard(feature: str) -> Callable[[Callable[..., Any]], Callable[..., Any]]:
    """Wrap a service method so any engine exception leaves as a ServiceError with a plain message."""

    def deco(fn: Callable[..., Any]) -> Callable[..., Any]:
        def wrapper(*a: Any, **kw: Any) -> Any:
            try:
                return fn(*a, **kw)
            except ServiceError:
                raise
            except Exception as e:
                raise ServiceError(f"{feature}: {plain_error(e)}") from e

        wrapper.__name__ = fn.__name__
        wrapper.__doc__ = fn.__doc__
        return wrapper

    return deco


def number(v: Any) -> str:
    """A gauge as shown in a line: ``?`` when missing."""
    return "?" if v is None else f"{v:g}"


class ServiceBase:
    """The database behind every page's service: one Store per services object, opened on first use."""

    def __init__(self, db: str | None = None) -> None:
        self._db = db
        self._store: Store | None = None
        self._lock = threading.Lock()

    @property
    def store(self) -> Store:
        with self._lock:
            if self._store is None:
                try:
                    self._store = Store(self._db)
                except Exception as e:
                    raise ServiceError(f"Cannot open the database {self._db or default_db_url()}: {e}") from e
            return self._store

    def db_url(self) -> str:
        return self.store.url
