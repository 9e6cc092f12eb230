"""The lab's one exception: a message an SRE can act on, never a bare traceback."""
from __future__ import annotations


class LabError(RuntimeError):
    """A lab step failed; str() says which step, why, and where the log is."""
