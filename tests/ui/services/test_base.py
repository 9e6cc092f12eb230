"""ui.services.base: the guard turns an engine exception into a plain ServiceError; the store opens once, lazily."""
from __future__ import annotations

import pytest

from ui.errors import ServiceError
from ui.services.base import ServiceBase, guard, number


def test_guard_words_an_engine_exception_and_lets_a_service_error_through():
    @guard("Opening")
    def boom(kind: str) -> None:
        if kind == "service":
            raise ServiceError("said already")
        raise KeyError("x")

    with pytest.raises(ServiceError, match="^said already$"):
        boom("service")
    with pytest.raises(ServiceError, match="^Opening: KeyError") as e:
        boom("engine")
    assert "Traceback" not in str(e.value) and boom.__name__ == "boom"


def test_the_store_opens_once_and_a_bad_database_is_a_message(temp_db, tmp_path):
    svc = ServiceBase(temp_db)
    assert svc.store is svc.store and svc.db_url() == svc.store.url
    (tmp_path / "a-file").write_text("not a directory")
    bad = ServiceBase(str(tmp_path / "a-file" / "triage.db"))
    with pytest.raises(ServiceError, match="Cannot open the database"):
        bad.store  # noqa: B018 - the property opens it


def test_number_says_missing():
    assert (number(None), number(2.0), number(0.5)) == ("?", "2", "0.5")
