"""The twin's tests store runs and read them back: secrets an earlier test registered in this process (the redactor's
registry is process-wide, as in one CLI run) must not blank their keys ("truncate_prompt_tokens", "seed")."""
from __future__ import annotations

from collections.abc import Iterator

import pytest

from tests.redaction import forget_secrets


@pytest.fixture(autouse=True)
def _no_secrets_from_other_tests() -> Iterator[None]:
    forget_secrets()
    yield
