"""What each vLLM release's own code says, for verdicts judged against the deployment's release.

``for_version("0.28.0")`` answers which release's data a verdict uses (``Resolution``: the release,
whether it is that exact release, and why), and a ``Release`` view answers the questions the
checks ask: does ``vllm serve`` accept this option and what does this spelling set, the pooling
and batch-budget defaults, PoolerConfig's fields and refusals, metric names, log formats.
Data: ``releases.json`` (see store.py), read from each release's wheel by extract.py; rebuilt or
extended with ``python -m triage knowledge refresh --vllm X.Y.Z``.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache
from typing import Any

from triage.versions import Version, parse_version
from triage.vllm.knowledge.store import known_releases, materialize


@dataclass(frozen=True)
class Resolution:
    """Which release's code a verdict was judged against, and how sure that choice is."""

    asked: str | None  # what the evidence said ('0.28.0', 'v0.33.0', None)
    release: str  # the release whose data is used
    exact: bool  # the deployment runs exactly that release's code
    reason: str  # one line for the finding: why this release

    def to_dict(self) -> dict[str, Any]:
        return {"asked": self.asked, "release": self.release, "exact": self.exact, "reason": self.reason}


@dataclass(frozen=True)
class Option:
    canonical: str
    dest: str
    kind: str  # value | flag | bool-optional
    strings: tuple[str, ...]
    sets: dict[str, Any]  # for flags: option string -> the value the release's parser stores
    nargs: str | int | None = None
    choices: tuple[str, ...] | None = None
    default: Any = None
    deprecated: bool = False


def releases() -> list[str]:
    """Known releases, oldest first."""
    return known_releases()


def _key(r: str) -> Version:
    v = parse_version(r)
    assert v is not None
    return v


def for_version(asked: object) -> Resolution:
    """The release whose data judges a deployment that says it runs ``asked`` (None: not known)."""
    known = releases()
    oldest, newest = known[0], known[-1]
    text = None if asked is None else str(asked)
    v = parse_version(text)
    if v is None:
        return Resolution(text, newest, False,
                          f"the deployment's vLLM release is not known: checked against {newest}, the newest read "
                          f"(give the image tag, /version, the start-up log or answer vllm_version)")
    base = Version(v.base_version)
    pub = base.public
    if pub in known and not (v.is_prerelease or v.is_devrelease):
        note = f" ({v.public}: a rebuild of {pub})" if v.is_postrelease else ""
        return Resolution(text, pub, True, f"vLLM {pub}'s own parser and defaults{note}")
    if base > _key(newest):
        return Resolution(text, newest, False,
                          f"vLLM {v.public} is newer than the releases read (up to {newest}): checked against "
                          f"{newest}; run `python -m triage knowledge refresh --vllm {pub}` to read it")
    if base < _key(oldest):
        return Resolution(text, oldest, False,
                          f"vLLM {v.public} is older than the releases read (from {oldest}): checked against {oldest}")
    older = [r for r in known if _key(r) <= base]
    near = older[-1]
    what = "a pre-release/dev build" if (v.is_prerelease or v.is_devrelease) else "not a release that was read"
    return Resolution(text, near, False,
                      f"vLLM {v.public} is {what}: checked against {near}, the nearest older release")


class Release:
    """One release's knowledge (a materialized snapshot) with the questions checks ask of it."""

    def __init__(self, release: str) -> None:
        self.release = release
        self.snap = materialize(release)
        self._by_string: dict[str, Option] = {}
        for canonical, e in self.snap["options"].items():
            opt = Option(canonical, e["dest"], e["kind"], tuple(e["strings"]), dict(e.get("sets") or {}),
                         e.get("nargs"), tuple(e["choices"]) if e.get("choices") else None, e.get("default"),
                         bool(e.get("deprecated")))
            for s in opt.strings:
                self._by_string[s] = opt

    def lookup(self, option: str) -> Option | None:
        """The option a spelling belongs to (``--max_model_len`` = ``--max-model-len``), else None."""
        return self._by_string.get(normalize_option(option)) or self._by_string.get(option)

    def sets(self, option: str) -> Any:
        """What a flag spelling stores in its dest (the release's parser's own answer); None for value options."""
        opt = self.lookup(option)
        if opt is None or opt.kind == "value":
            return None
        return opt.sets.get(normalize_option(option), opt.sets.get(option))

    def option_strings(self) -> list[str]:
        return sorted(self._by_string)

    def pooling_default(self, case: str) -> dict[str, bool] | None:
        return self.snap["pooling_defaults"].get(case)

    @property
    def pooling_file(self) -> str:
        return str(self.snap["pooling_defaults"].get("_file", "vllm/config/model.py"))

    @property
    def batch_rule(self) -> dict[str, Any]:
        return self.snap["batch_rule"]

    @property
    def pooler_fields(self) -> list[str]:
        return list(self.snap["pooler_config"].get("fields") or [])

    def pooler_refusal(self, field: str, value: object) -> str | None:
        refused = self.snap["pooler_config"].get("refused") or {}
        return refused.get(f"{field}={value}")

    @property
    def metrics(self) -> dict[str, str]:
        return self.snap["metrics"]

    @property
    def log_formats(self) -> dict[str, list[dict[str, str]]]:
        return self.snap["log_formats"]

    @property
    def refusals(self) -> dict[str, str]:
        return self.snap["refusals"]

    @property
    def envs(self) -> dict[str, str]:
        return self.snap["envs"]


@lru_cache(maxsize=64)
def release(name: str) -> Release:
    return Release(name)


def normalize_option(option: str) -> str:
    """``--max_model_len`` -> ``--max-model-len`` (FlexibleArgumentParser accepts underscores)."""
    if option.startswith("--"):
        return "--" + option[2:].replace("_", "-")
    return option


def history(option: str) -> tuple[list[str], list[str]]:
    """(releases whose parser accepts this spelling, releases whose parser does not), oldest first."""
    has, lacks = [], []
    for r in releases():
        (has if release(r).lookup(option) is not None else lacks).append(r)
    return has, lacks


def added_in(option: str) -> str | None:
    """The first release, after one that lacked it, whose parser accepts the spelling (None: always or never)."""
    prev = None
    first = None
    for r in releases():
        ok = release(r).lookup(option) is not None
        if ok and prev is False:
            first = r
        prev = ok
    return first


def removed_in(option: str) -> str | None:
    """The release that dropped a spelling an earlier release accepted, when no later release brought it back."""
    prev, gone = None, None
    for r in releases():
        ok = release(r).lookup(option) is not None
        if prev and not ok:
            gone = r
        elif ok:
            gone = None
        prev = ok
    return gone
