"""No secret leaves in any exported byte: API keys, Authorization headers, *_KEY/*_TOKEN values."""
from __future__ import annotations

import io
import zipfile

import export_runs
import pytest

from triage.export import FORMATS, render
from triage.store import RunRecord

SECRETS = (export_runs.API_KEY.encode(), export_runs.HF_TOKEN.encode())


def exported_bytes(record: RunRecord, fmt: str, secrets: tuple[str, ...] = ()) -> dict[str, bytes]:
    """The export, and for a bundle every member unzipped as well."""
    data = render(record, fmt, secrets=secrets)
    out = {fmt: data}
    if fmt == "bundle":
        with zipfile.ZipFile(io.BytesIO(data)) as zf:
            out.update({name: zf.read(name) for name in zf.namelist()})
    return out


@pytest.mark.parametrize("fmt", FORMATS)
def test_secrets_in_cmdline_log_and_probe_never_exported(hostile_record: RunRecord, fmt: str) -> None:
    files = exported_bytes(hostile_record, fmt)
    for name, data in files.items():
        for secret in SECRETS:
            assert secret not in data, f"{secret!r} in {name}"
    joined = b"".join(files.values())
    assert b"--api-key [REDACTED]" in joined
    if fmt in ("json", "bundle"):  # the formats that carry the raw log
        assert b"Authorization: Bearer [REDACTED]" in joined and b"HF_TOKEN=[REDACTED]" in joined


@pytest.mark.parametrize("fmt", FORMATS)
def test_exporter_redacts_what_the_store_did_not(fmt: str) -> None:
    """A record holding raw secrets (an older database, another writer): patterns catch the shaped ones,
    the exact secret catches the bare ones."""
    record = export_runs.unredacted_record()
    shaped = exported_bytes(record, fmt)
    for name, data in shaped.items():
        assert export_runs.HF_TOKEN.encode() not in data, name
        for context in (b"--api-key " + SECRETS[0], b"Authorization: Bearer " + SECRETS[0]):
            assert context not in data, f"{context!r} in {name}"
    for name, data in exported_bytes(record, fmt, secrets=(export_runs.API_KEY,)).items():
        for secret in SECRETS:
            assert secret not in data, f"{secret!r} in {name}"
