"""What every probe set gets: the client, the target's model and max_model_len, inputs, the monitor, and what the
caller knows beyond the API (the target's start-up log, command line, deployment file name, model directory).

``run_probes`` fills the last from the ``Target`` every face builds; a probe set reads them here and nowhere else.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Optional

from triage.http import ProbeClient
from triage.probes.inputs import LongText, long_text, new_salt, short_text
from triage.probes.runner import EventSink, MonitorConfig, ProbeOutcome, observe


@dataclass
class ProbeContext:
    pc: ProbeClient
    model: str
    max_model_len: int
    vllm_version: Optional[str]
    cfg: MonitorConfig
    on_event: Optional[EventSink] = None
    model_root: Optional[str] = None
    client_truncation: Optional[int] = None  # the target's truncate_prompt_tokens, when known
    log_text: Optional[str] = None  # the server's start-up log, as given (Target.log_text)
    cmdline: Optional[str] = None  # its command line or deployment file, as given (Target.cmdline)
    cmdline_file: Optional[str] = None  # the name of the file that came from (Target.cmdline_file)
    model_path: Optional[str] = None  # the model directory readable here, when /v1/models' root is not

    def short(self) -> str:
        return short_text()

    async def long(self, margin: int | None = None) -> LongText:
        """A fresh LONG text (new salt each call, so no two probes share a prefix)."""
        return await long_text(lambda t: self.pc.token_count(self.model, t), self.max_model_len,
                               salt=new_salt(), margin=margin)

    async def texts(self, kinds: tuple[str, ...]) -> tuple[list[str], list[int | None]]:
        """Texts for SHORT/LONG labels, with the LONG ones' token counts (None for SHORT)."""
        out: list[str] = []
        counts: list[int | None] = []
        for k in kinds:
            if k == "LONG":
                lt = await self.long()
                out.append(lt.text)
                counts.append(lt.token_count)
            else:
                out.append(self.short())
                counts.append(None)
        return out, counts

    def body(self, input_: Any, **params: Any) -> dict[str, Any]:
        return {"model": self.model, "input": input_, **{k: v for k, v in params.items() if v is not None}}

    def short_body(self) -> dict[str, Any]:
        return self.body(self.short())

    async def monitored(self, probe: str, set_name: str, bodies: list[dict[str, Any]],
                        description: str = "") -> ProbeOutcome:
        return await observe(self.pc, probe, set_name, bodies, self.cfg, self.short_body, self.on_event, description)

    def rerank_short_body(self) -> dict[str, Any]:
        return {"model": self.model, "query": self.short(), "documents": [self.short()]}

    async def monitored_path(self, probe: str, set_name: str, bodies: list[dict[str, Any]], description: str,
                             path: str) -> ProbeOutcome:
        """As ``monitored`` on another pooling path (/rerank, /score: the recovery request goes there too)."""
        short = self.short_body if path.endswith("embeddings") else self.rerank_short_body
        return await observe(self.pc, probe, set_name, bodies, self.cfg, short, self.on_event, description,
                             path=path)
