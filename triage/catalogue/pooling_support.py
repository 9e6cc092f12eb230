"""Which vLLM release first served a model for pooling, read from the support table (issue 42: old releases).

One question, asked by every verdict that would otherwise say "not supported": does the deployment's release
predate the release that added pooling for this model? The answer comes from the family's row in families.toml
(``pooling_since``, ``pooling_ref``) or, for any embedder, from the first release with embeddings at all
(pooling_support.toml ``embedding_api``). A traceback whose release is not stated is dated by its frames (the table's
``frame`` rows); a version string with a vendor label (NGC's ``+….nvYY.MM``) is named as the vendor's build.
"""

from __future__ import annotations

import re
import tomllib
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import Any, Optional
from collections.abc import Iterable

from triage.catalogue.identity import ModelIdentity
from triage.versions import parse_version


@lru_cache(maxsize=1)
def table() -> dict[str, Any]:
    return tomllib.loads(Path(__file__).with_name("pooling_support.toml").read_text(encoding="utf-8"))


@dataclass(frozen=True)
class Support:
    """The first release that serves a model for pooling, the change that added it, and what it added."""

    since: str
    ref: str
    what: str
    family: str = ""  # the family's name ('' for the row that holds for every embedder)


def support_of(who: ModelIdentity) -> Optional[Support]:
    """The family's row, else the first release with embeddings at all for an embedder (None: nothing known)."""
    fam = who.family
    if fam is not None and fam.pooling_since:
        return Support(fam.pooling_since, fam.pooling_ref, fam.pooling_what, fam.name)
    if who.kind == "embedder":
        row = table()["embedding_api"]
        return Support(row["since"], row["ref"], row["what"])
    return None


def _lt(a: object, b: str) -> Optional[bool]:
    va, vb = parse_version(a), parse_version(b)
    if va is None or vb is None:
        return None
    return va < vb


def predates(version: object, support: Support) -> Optional[bool]:
    """Is the release older than the first one serving it (None: the release is not known)?"""
    return _lt(version, support.since)


def frame_release(modules_funcs: Iterable[tuple[str, str]]) -> Optional[tuple[str, str]]:
    """(the release the traceback predates, why) from its vLLM frames (module under vllm/, function); None when no
    frame dates it."""
    seen = set(modules_funcs)
    for row in table().get("frame", []):
        if any((row["module"], f) in seen for f in row["functions"]):
            return row["before"], row["why"]
    return None


def vendor_build(version: object) -> Optional[tuple[str, str, str]]:
    """(vendor's name, image, ref) when the version string carries a vendor build's label (NGC: '+….nv26.01')."""
    text = str(version or "")
    if "+" not in text:
        return None
    local = text.split("+", 1)[1]
    for row in table().get("vendor", []):
        m = re.search(row["label"], local)
        if m:
            return row["name"], row["image"].format(**m.groupdict()), row["ref"]
    return None


def runner_auto_ignores_convert(version: object) -> Optional[bool]:
    """Does this release resolve `--runner auto` to generate for a causal LM despite an explicit --convert (before
    vllm#42935)? None when the release is not known."""
    row = table()["runner_auto_convert"]
    v = parse_version(version)
    if v is None:
        return None
    low, fixed = parse_version(row["since"]), parse_version(row["fixed_in"])
    assert low is not None and fixed is not None
    return low <= v < fixed


def task_spelling(model: str) -> str:
    """How each release asks for the embedding task, the model filled in."""
    return (f"0.6.4 … 0.6.x `--task embedding`; 0.7 … 0.10.1 `vllm serve {model} --task embed`; >= 0.10.2 "
            f"`vllm serve {model} --runner pooling` (a *ForCausalLM checkpoint: also --convert embed)")


def upgrade_fix(who: ModelIdentity, support: Support, version: object = None) -> str:
    """Upgrade past the release that added it; no flag of the older release serves it. Then the task for what the
    model is: an embedder's spelling by release, a reranker's score head (never the embedding conversion), a reward
    model's pooling."""
    from triage.catalogue.identity import serve_fix  # noqa: PLC0415 - identity imports nothing of this module

    name = support.family or who.name
    model = who.model or "MODEL"
    older = f"vLLM {version}" if version else "a release before it"
    head = (f"Upgrade vLLM to >= {support.since} ({support.ref}: {support.what}); {older} cannot serve {name} for "
            "pooling and no flag changes that.")
    if who.kind == "reranker":
        return f"{head} Then: {serve_fix(who, model)}"
    if who.kind in ("classifier", "token-classifier"):
        return (f"{head} Then serve it for pooling as the release spells the task: 0.6.4 … 0.6.x the 'embedding' "
                "task (the only pooling task then); 0.7 … 0.10.1 the reward or classify task its card names; >= "
                "0.10.2 `--runner pooling` with the pooler config its card gives.")
    return f"{head} Then serve it for pooling as the release spells the task: {task_spelling(model)}."


def adapter_fix(model: str) -> str:
    """Upgrade to a release whose pooling adapter converts any causal LM (no family row to name a later one)."""
    row = table()["causal_adapter"]
    return (f"Upgrade vLLM to >= {row['since']} ({row['ref']}: {row['what']}) and serve it for pooling: "
            f"{task_spelling(model or 'MODEL')}; no flag of the older release adds the task.")


def no_adapter_fix() -> str:
    """The release has the adapter and still lists no pooling task: the class is one it cannot convert."""
    return ("Serve a checkpoint of an architecture this release lists for pooling (its supported models page, pooling "
            "section), or a newer release that lists this one; no flag adds the task.")


def convert_runner_fix(model: str, convert: str) -> str:
    """--runner pooling with the --convert given (0.14's `reward` is embed's deprecated spelling)."""
    row = table()["runner_auto_convert"]
    want = "embed" if convert in ("embed", "reward", "embedding") else convert
    return (f"Pass --runner pooling explicitly with the conversion: vllm serve {model or 'MODEL'} --runner pooling "
            f"--convert {want}" + (f" (--convert {convert} is the deprecated spelling of embed)" if want != convert
                                   else "")
            + f"; {row['ref']} makes --runner auto honour --convert from vLLM {row['fixed_in']}.")


def vendor_fix(vendor: Optional[tuple[str, str, str]]) -> str:
    """Compare with upstream vLLM when the build is a vendor's."""
    if vendor is None:
        return ""
    return (f" If it still fails on {vendor[0]}, run upstream vLLM (pip install vllm, or the vllm/vllm-openai image) "
            f"or a newer {vendor[1].split(':')[0]} image.")


def offline_pooling_fix(who: ModelIdentity, era: str, convert: str = "embed") -> str:
    """Load the model for pooling in the LLM class, as the era of the refusal's wording spells it."""
    from triage.catalogue.identity import serve_fix  # noqa: PLC0415 - identity imports nothing of this module

    model = who.model or "MODEL"
    if who.scoring:
        return f"Load it for scores, not as a generator: {serve_fix(who, model)}"
    if era == "runner":
        return (f"Load it as a pooling model: LLM(model='{model}', runner='pooling', convert='{convert}') (vllm "
                f"serve {model} --runner pooling --convert {convert})"
                + ("; a model that is not an embedder: its own conversion." if convert == "embed" else "."))
    if era == "task":
        return (f"Load it as a pooling model: LLM(model='{model}', task='embed') (0.6.x: task='embedding'; vllm serve "
                f"{model} --task embed).")
    return ("This release (0.4.3 … 0.6.3) loads a model for embedding only when its registry lists the architecture "
            "as an embedding model (MistralModel from 0.4.3, BERT-family encoders later): " + adapter_fix(model))


def start_with_task_fix(model: str) -> str:
    """The release serves it for pooling: start it with the pooling task."""
    return f"Start it with the pooling task: {task_spelling(model or 'MODEL')}."


def task_or_upgrade_fix(who: ModelIdentity, support: Optional[Support]) -> str:
    """The release is not known: the pooling task on a release that serves it, else the upgrade."""
    older = upgrade_fix(who, support) if support is not None and support.family else adapter_fix(who.model)
    return (f"On a release that serves it for pooling start it with the pooling task: "
            f"{task_spelling(who.model or 'MODEL')}; on an older one: {older}")
