"""ui/components/deploy_upload.py: a dropped deployment file fills the Target page's command-line field (issue 31).

AppTest cannot drop a file on a file_uploader; what the drop does is `read_upload` (tested on the deployment
fixtures, tests/fixtures/deploy/) and the page's use of the file's name (tested through the page). The drop itself
runs in real Chromium: tests/ui/test_e2e_deploy_upload.py."""
from __future__ import annotations

from pathlib import Path

from ui.components import deploy_upload, session
from ui_apptest import no_exception, page
from ui_fakes import URL, FakeServices

DEPLOY = Path(__file__).resolve().parents[1] / "fixtures" / "deploy"


def test_manifest_is_read_and_its_choice_said() -> None:
    data = (DEPLOY / "seed-deployment.yaml").read_bytes()
    text, (kind, msg) = deploy_upload.read_upload("seed-deployment.yaml", data)
    assert text == data.decode() and kind == "success"
    assert "Deployment/qwen3-embedding container vllm" in msg and "vllm/vllm-openai" in msg


def test_several_servers_name_the_one_judged() -> None:
    text, (kind, msg) = deploy_upload.read_upload("values.yaml", (DEPLOY / "production-stack-values.yaml").read_bytes())
    assert text and kind == "success" and "judges the first" in msg and "--deploy-target" in msg


def test_a_command_line_file_is_read_as_one() -> None:
    text, (kind, _msg) = deploy_upload.read_upload("cmd.txt", b"vllm serve BAAI/bge-m3 --runner pooling")
    assert text == "vllm serve BAAI/bge-m3 --runner pooling" and kind == "info"


def test_too_big_is_refused_with_the_limit() -> None:
    text, (kind, msg) = deploy_upload.read_upload("big.yaml", b"a: 1\n" * (deploy_upload.MAX_BYTES // 5 + 1))
    assert text is None and kind == "error" and "KiB" in msg


def test_no_vllm_in_the_file_is_a_warning() -> None:
    pod = (b"apiVersion: v1\nkind: Pod\nmetadata:\n  name: x\nspec:\n  containers:\n    - name: web\n"
           b"      image: nginx:1.27\n")
    text, (kind, msg) = deploy_upload.read_upload("pod.yaml", pod)
    assert text is not None and kind == "warning" and "no vLLM container" in msg


def test_page_passes_the_file_name_with_the_text(use_services) -> None:  # type: ignore[no-untyped-def]
    use_services(FakeServices())
    at = page("target")
    at.session_state["deploy_upload.name"] = "seed-deployment.yaml"  # what a drop leaves (its own key)
    at.run()
    at.text_input(key="target.url").set_value(URL)
    at.text_area(key="target.cmdline").set_value((DEPLOY / "seed-deployment.yaml").read_text())
    at.button(key="target.use").click().run()
    no_exception(at)
    form = at.session_state[session.TARGET_KEY]
    assert form.cmdline_file == "seed-deployment.yaml" and "vllm/vllm-openai:v0.28.0" in form.cmdline
