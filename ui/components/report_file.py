"""Deferred report files: the bytes are rendered when the download button is pressed, not on every rerun."""
from __future__ import annotations

from typing import Any, Optional
from collections.abc import Callable

from ui.services import ServiceError


def maker(svc: Any, run_id: int, fmt: str, api_key: Optional[str]) -> Callable[[], bytes]:
    """A no-argument callable for st.download_button(data=...); a failure becomes a readable file.

    Streamlit runs it on its own thread when the button is pressed, where no page element can be
    drawn, so the error message goes into the downloaded file instead of the page.
    """

    def render() -> bytes:
        try:
            data, _name, _mime = svc.export(run_id, fmt, secrets=(api_key,) if api_key else ())
            return data
        except ServiceError as e:
            return f"Export of run {run_id} as {fmt} failed: {e}\n".encode()

    return render
