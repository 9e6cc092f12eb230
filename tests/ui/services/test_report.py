"""ui.services.report against the real exporters and Store: every format, secrets redacted."""
from __future__ import annotations

from pathlib import Path

import pytest

from triage.findings import Finding, Status
from triage.store import Store
from ui.services import ServiceError, Services

FIXTURES = Path(__file__).resolve().parents[2] / "fixtures" / "real"


def test_export_real_formats_and_secret(temp_db):
    st = Store(temp_db)
    t = st.add_target("http://h:1", "m", 256)
    r = st.start_run(t.id, "check")
    st.add_finding(r.id, Finding("x", Status.WARN, "key sk-live-abcdefgh123 seen", {"note": "tok-777-secret"}))
    st.finish_run(r.id)
    svc = Services(temp_db)
    for fmt in ("md", "html", "json", "bundle"):
        data, name, mime = svc.export(r.id, fmt, secrets=("tok-777-secret",))
        assert data and name.startswith(f"triage-run-{r.id}.") and mime
        if fmt != "bundle":
            assert b"tok-777-secret" not in data and b"sk-live-abcdefgh123" not in data
    with pytest.raises(ServiceError, match="does not exist"):
        svc.export(999, "md")
