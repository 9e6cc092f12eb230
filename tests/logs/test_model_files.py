"""A pasted listing of a model directory (triage/logs/model_files.py), on vllm#10966's listing as posted."""
from __future__ import annotations

from pathlib import Path

from triage.logs import analyze_log
from triage.logs.model_files import model_files_finding

CASES = Path(__file__).resolve().parents[1] / "world" / "cases"


def _case(slug: str, name: str) -> str:
    return (CASES / slug / name).read_text()


def test_a_model_directory_without_its_pooling_folder() -> None:
    """vllm#10966: `ls -lh` of e5-mistral with modules.json and no 1_Pooling/."""
    listing = _case("vllm-10966-e5-mistral-missing-1-pooling", "log.txt")
    f = model_files_finding(listing)
    assert f is not None and f.failure_mode == "pooling-mismatch" and "1_Pooling" in f.fix
    whole = listing + "drwxr-xr-x 2 u g 4.0K Dec  7 10:58 1_Pooling\n"
    assert model_files_finding(whole) is None
    assert [g.check for g in analyze_log(listing).findings][0] == "log-model-files"


def test_a_listing_of_some_files_only_says_nothing() -> None:
    listing = _case("vllm-10966-e5-mistral-missing-1-pooling", "log.txt")
    assert model_files_finding("\n".join(x for x in listing.splitlines() if not x.startswith("total"))) is None

