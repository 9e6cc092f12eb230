"""What a verdict covered: each part checked by the sources that answered or the probe sets run, else not."""
from __future__ import annotations

import pytest

from triage.scope import PARTS, scope


@pytest.mark.parametrize("sources, sets, checked", [
    pytest.param({"server": "ok"}, (), {"setup"}, id="checklist-on-a-url"),
    pytest.param({"server": "connection refused", "cmdline": "ok", "log": "ok"}, (), {"setup", "log"},
                 id="offline-command-line-and-log"),
    pytest.param({"server": "connection refused"}, (), set(), id="nothing-answered"),
    pytest.param({"server": "ok"}, ("conformance", "throughput", "vectors"), {"setup", "probes", "load", "vectors"},
                 id="after-the-default-probes"),
    pytest.param(None, ("clients",), {"vectors"}, id="clients-alone-check-the-vectors"),
])
def test_scope_per_part(sources, sets, checked) -> None:  # type: ignore[no-untyped-def]
    got = scope(sources, sets)
    assert [c.part.id for c in got] == [p.id for p in PARTS]
    assert {c.part.id for c in got if c.checked} == checked
    assert all(c.how for c in got if c.checked) and not any(c.how for c in got if not c.checked)
