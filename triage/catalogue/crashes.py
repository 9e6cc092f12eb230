"""Catalogue records for engine crashes read from a traceback and for client error texts that quote vLLM (issue 42).

The records are data (``triage/catalogue/data/crashes.toml``); here is what a reader needs to match them: each
crash record's signature (the exception, its message pattern, the vLLM frames or code lines that single it out),
written with the pattern names of triage/vllm/logformats.toml. triage/logs/crash_findings.py reads them.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from triage.catalogue.load import load
from triage.vllm import logformats as lf


@dataclass(frozen=True)
class Signature:
    """What a traceback shows for one record: the exception's class name, a pattern its message matches, and the
    frames (vLLM functions) or code lines of which one must be there; ``proven`` False: the match names the record
    among others ("one of"), as a CUDA fault has other causes."""

    record: str
    exceptions: tuple[str, ...]
    message: re.Pattern[str]
    functions: tuple[str, ...] = ()
    codes: tuple[re.Pattern[str], ...] = ()
    proven: bool = True


SIGNATURES: tuple[Signature, ...] = (
    Signature("pooling-chunked-prefill-keyerror", ("KeyError",), re.compile(r"^None$"),
              functions=("_prepare_inputs",), codes=(lf.NUM_SCHEDULED_NONE_CODE_RE,)),
    Signature("transformers-fallback-cannot-pool", ("ValueError",), lf.NO_MODULE_NAMED_RE),
    # a base-model (sentence-transformers) checkpoint loaded by the generator class: served for generation
    Signature("generate-runner", ("ValueError",), lf.GENERATOR_LOADS_BASE_RE),
    Signature("pooling-chunked-prefill-race", ("RuntimeError", "AcceleratorError", "CudaError"), lf.CUDA_FAULT_RE,
              proven=False),
)
# serving classes of vLLM whose methods wrappers call (NO_ATTRIBUTE_RE's class): an AttributeError on one of them is
# a wrapper built for another release
VLLM_SERVING_CLASS_RE = re.compile(r"^(?:OpenAI)?Serving\w+$")

RECORDS = load(__name__)  # triage/catalogue/data/crashes.toml
__getattr__, __dir__ = RECORDS.exports(globals())

CRASH_MODES = RECORDS.modes()
