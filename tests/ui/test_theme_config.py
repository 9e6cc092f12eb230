"""The dashboard's theme follows the system: no fixed `base`, a light and a dark theme, primary not FAIL red;
`vllm-triage dashboard` passes the sub-tables on as Streamlit flags."""
from __future__ import annotations

import tomllib

from triage.cli.dashboard import config_flags
from ui_apptest import ROOT

CONFIG = ROOT / ".streamlit" / "config.toml"


def test_theme_follows_the_system_and_primary_is_not_red() -> None:
    cfg = tomllib.loads(CONFIG.read_text())
    theme = cfg["theme"]
    assert "base" not in theme and set(theme) == {"light", "dark"}  # any top-level option would fix one theme
    for mode in ("light", "dark"):
        r, g, b = (int(theme[mode]["primaryColor"][i:i + 2], 16) for i in (1, 3, 5))
        assert b > r and b > g, theme[mode]


def test_dashboard_command_passes_the_theme_sub_tables() -> None:
    flags = config_flags(CONFIG)
    assert flags[flags.index("--theme.light.primaryColor") + 1].startswith("#")
    assert flags[flags.index("--theme.dark.primaryColor") + 1].startswith("#")
    assert not any(f.startswith("{") for f in flags)
