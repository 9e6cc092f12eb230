"""The checklist's evidence sources as one ``Source`` each, in the order the checklist reads them.

Each wraps its module's ``collect`` (whose inputs differ: a client, a port, text, kubectl outputs, a recorded dict)
behind the one protocol, so the checklist runner iterates ``SOURCES`` and knows no source's signature.
"""
from __future__ import annotations

from urllib.parse import urlsplit

from triage.sources import Source, SourceInput, SourceResult, cmdline, kube, nvml, process, server, startup_log


class ServerSource:
    """The live API (``triage.sources.server``): when the target has a URL."""

    name = server.SOURCE

    def wanted(self, given: SourceInput) -> bool:
        return bool(given.target.url)

    def collect(self, given: SourceInput) -> SourceResult:
        from triage.http import VllmClient

        t = given.target
        client = VllmClient(t.url or "", api_key=t.api_key, verify_tls=t.verify_tls, timeout_s=t.timeout_s,
                            transport=given.transport)
        try:
            return server.collect(client, model=t.model, embed_probe=given.embed_probe)
        finally:
            client.close()


class ProcessSource:
    """The local server's process (``triage.sources.process``): its command line, found by the URL's port."""

    name = process.SOURCE

    def wanted(self, given: SourceInput) -> bool:
        return bool(given.target.url) and given.local_process

    def collect(self, given: SourceInput) -> SourceResult:
        url = given.target.url or ""
        port = urlsplit(url).port or (443 if url.startswith("https") else 80)
        return process.collect(port, release=given.release)


class StartupLogSource:
    """The pasted start-up log (``triage.sources.startup_log``)."""

    name = startup_log.SOURCE

    def wanted(self, given: SourceInput) -> bool:
        return bool(given.target.log_text)

    def collect(self, given: SourceInput) -> SourceResult:
        return startup_log.collect(given.target.log_text or "")


class CmdlineSource:
    """The pasted command line or deployment file (``triage.sources.cmdline``), judged against the deployment's own
    release: the server's /version, the log's, the user's answer, else the image tag on the line itself."""

    name = cmdline.SOURCE

    def wanted(self, given: SourceInput) -> bool:
        return bool(given.target.cmdline) or cmdline.in_log(given.target.log_text) is not None

    def collect(self, given: SourceInput) -> SourceResult:
        t = given.target
        if not t.cmdline:  # an orchestrator's log that carries the `vllm serve` line it started (GPUStack, issue 42)
            wrapped = cmdline.in_log(t.log_text)
            if wrapped is not None:
                return cmdline.collect_wrapped(wrapped, release=given.release)
        return cmdline.collect(t.cmdline or "", release=given.release, pick=t.deploy_target, file=t.cmdline_file)


class KubeSource:
    """kubectl outputs of the pod (``triage.sources.kube``)."""

    name = kube.SOURCE

    def wanted(self, given: SourceInput) -> bool:
        return bool(given.target.kube)

    def collect(self, given: SourceInput) -> SourceResult:
        return kube.collect(given.target.kube or ())


class GpuSource:
    """This host's GPUs (``triage.sources.nvml``: a recorded dict, else NVML, else amdsmi)."""

    name = nvml.SOURCE

    def wanted(self, given: SourceInput) -> bool:
        return given.local_gpu

    def collect(self, given: SourceInput) -> SourceResult:
        return nvml.collect(given.nvml_recorded)


SOURCES: tuple[Source, ...] = (ServerSource(), ProcessSource(), StartupLogSource(), CmdlineSource(), KubeSource(),
                               GpuSource())
