"""Entry point for ``python -m triage``."""
from __future__ import annotations

import sys

from triage.cli import main

sys.exit(main())
