"""ui.services: the seam pages get (``get``) and tests replace (``override``)."""
from __future__ import annotations

from pathlib import Path


from ui import services
from ui.services import Services

FIXTURES = Path(__file__).resolve().parents[2] / "fixtures" / "real"


def test_override_is_restored():
    fake = object()
    with services.override(fake):
        assert services.get() is fake
    assert isinstance(services.get(), Services)
