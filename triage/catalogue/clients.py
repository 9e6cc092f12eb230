"""Catalogue records for client libraries that fail against a healthy vLLM, and the facts a client call records.

Facts (measured here on real lab servers, tests/fixtures/real/clients/README.md): LiteLLM's ``openai/`` route and
LlamaIndex's ``OpenAIEmbedding``. The clients probe set (triage/probes/client_libraries.py) records, per route it
tried, the facts named below in its finding's ``evidence["facts"]``; the records' clues read them back (one reader per
fact, here), so the probe's verdict and the differential weigh the same evidence. LiteLLM's releases are LiteLLM's, not
vLLM's: the records are not version-bound (``affected`` is for vLLM releases) and keep the client's range as data.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Optional

from triage.catalogue.load import load
from triage.catalogue.model import ConfigLike
from triage.catalogue.symptoms import Case, Weight, by_flag
from triage.catalogue.versions import VersionRange, parse_version

# The facts one client call records (evidence["facts"] of its finding), namespaced "client.".
ROUTE = "client.route"                    # the provider route / class and setting, as the user configures it
LIBRARY = "client.library"                # the distribution name (openai, langchain-openai, litellm, llama-index-…)
LIBRARY_VERSION = "client.library_version"
STATUS = "client.status"                  # the HTTP status the client's request got (None: it never reached)
MESSAGE = "client.message"                # the client's error, as it raised it ('' when it worked)
ENCODING_SENT = "client.encoding_format_sent"  # what the body carried: "null", "absent", "float", "base64"
INPUT_KIND = "client.input_kind"          # "text" or "token ids"
MODEL_SENT = "client.model_sent"          # the model field of the body it sent
SERVED = "client.served_models"           # the server's /v1/models ids
PLAIN_STATUS = "client.plain_status"      # the plain request of the same texts (the probe's own client)
LENGTHS = "client.lengths"                # the vector lengths the client handed back
PLAIN_LENGTH = "client.plain_length"      # the plain request's vector length
COSINE = "client.cosine"                  # the lowest cosine of its vectors with the plain request's
QUERY_AS_GIVEN = "client.query_as_given"  # a query call's input went as the application wrote it (no instruction)
PROBLEM = "openwebui.problem"             # what Open WebUI's request showed (missing-v1, model-name, api-key, batch)
SAME_VECTORS = 0.99  # a client's vector of a text and the plain request's: the clients set's own threshold

# LiteLLM releases whose openai/ route writes encoding_format: null into the body when the caller sets none:
# measured on every release named in tests/fixtures/real/clients/README.md (1.80.10 sends base64, the OpenAI
# SDK's default; 1.80.11 to 1.83.14 null; 1.84.0 and later "float"; 1.110 omits the field).
LITELLM_NULL_FORMAT = VersionRange.of("1.80.11", "1.84.0")
LITELLM_FIXED = "1.84.0"
LLAMAINDEX_DEFAULT_MODEL = "text-embedding-ada-002"  # OpenAIEmbedding's model when none is given
LLAMAINDEX_ENUM_ERROR = "is not a valid OpenAIEmbeddingModelType"  # its refusal of a model= it does not know


def client_views(case: Case) -> list[Mapping[str, Any]]:
    """The facts of each client call the case holds (a finding's evidence["facts"] with a route), else the case's
    own facts when they are one call's (a case built from one finding's facts)."""
    views = []
    for f in case.findings:
        ev = f.get("evidence") if isinstance(f, dict) else getattr(f, "evidence", None)
        facts = ev.get("facts") if isinstance(ev, dict) else None
        if isinstance(facts, dict) and facts.get(ROUTE):
            views.append(facts)
    if not views and case.facts.get(ROUTE):
        views.append(case.facts)
    return views


def failed(v: Mapping[str, Any]) -> bool:
    """A call that did not hand back vectors: an HTTP error, or the library's own refusal."""
    status = v.get(STATUS)
    return bool(v.get(MESSAGE)) or (isinstance(status, int) and status >= 400)


def _failing(case: Case) -> list[Mapping[str, Any]]:
    return [v for v in client_views(case) if failed(v)]


def bad(v: Mapping[str, Any]) -> bool:
    """A call that failed, or handed back vectors of another length or direction than the plain request's."""
    cos, lens, plain = v.get(COSINE), v.get(LENGTHS), v.get(PLAIN_LENGTH)
    return failed(v) or (isinstance(cos, (int, float)) and cos < SAME_VECTORS) or (
        bool(lens) and plain is not None and list(lens) != [plain])


def _libs(views: list[Mapping[str, Any]]) -> str:
    return ", ".join(sorted({str(v.get(LIBRARY)) for v in views}))


def _failing_of(case: Case, prefix: str, name: str) -> tuple[list[Mapping[str, Any]], Optional[Weight]]:
    """The failing calls of the library (distribution names starting ``prefix``); when calls failed and none is
    its, the decisive 'against' that says whose they are."""
    views = _failing(case)
    mine = [v for v in views if str(v.get(LIBRARY) or "").startswith(prefix)]
    if views and not mine:
        return [], Weight("against", f"the failing calls are {_libs(views)}'s, not {name}", "clients", decisive=True)
    return mine, None


def plain_request_refused(case: Case) -> Optional[Weight]:
    """Against any client-side cause: the probe's own plain request of the same texts was refused too."""
    status = case.fact(PLAIN_STATUS)
    if not isinstance(status, int):
        return None
    if status >= 400:
        return Weight("against", f"a plain request of the same texts was refused too (HTTP {status}): the server "
                      "refuses it, not the client", "clients", decisive=True)
    return Weight("for", f"a plain request of the same texts answered {status}: the server takes text", "clients")


# LiteLLM: encoding_format null


def _litellm_sent_null(case: Case) -> Optional[Weight]:
    lite, other = _failing_of(case, "litellm", "LiteLLM's")
    if not lite:
        return other
    null = [v for v in lite if v.get(ENCODING_SENT) == "null"]
    if null:
        return Weight("for", f"{null[0].get(ROUTE)} sent encoding_format: null and got HTTP "
                      f"{null[0].get(STATUS)}", "clients", decisive=True)
    sent = {str(v.get(ENCODING_SENT)) for v in lite if v.get(ENCODING_SENT)}
    if sent:
        return Weight("against", f"LiteLLM's failing body carried encoding_format {', '.join(sorted(sent))}, not "
                      "null", "clients", decisive=True)
    return None


def _litellm_release(case: Case) -> Optional[Weight]:
    lite = [v for v in client_views(case) if v.get(LIBRARY) == "litellm" and v.get(LIBRARY_VERSION)]
    if not lite:
        return None
    version = str(lite[0].get(LIBRARY_VERSION))
    v = parse_version(version)
    return by_flag(LITELLM_NULL_FORMAT.contains(v) if v is not None else None,
                   Weight("for", f"LiteLLM {version} is a release that sends null ({LITELLM_NULL_FORMAT})", "clients"),
                   Weight("against", f"LiteLLM {version} is outside the releases that send null "
                          f"({LITELLM_NULL_FORMAT})", "clients"))


def _litellm_fix(cfg: ConfigLike) -> str:
    hosted = f"model='hosted_vllm/{cfg.get('model') or '<served model id>'}', api_base=<server>/v1"
    ways = (f"reach vLLM through LiteLLM's hosted_vllm/ provider ({hosted}), which sends no encoding_format",
            "pass encoding_format='float' on every embedding call (LiteLLM proxy: in the model's litellm_params)",
            f"upgrade LiteLLM to >= {LITELLM_FIXED}")
    text = "; or ".join(ways)
    return text[0].upper() + text[1:] + "."


# LlamaIndex: OpenAIEmbedding's model names


def _llamaindex_model(case: Case) -> Optional[Weight]:
    li, other = _failing_of(case, "llama-index", "LlamaIndex's")
    if not li:
        return other
    for v in li:
        served = v.get(SERVED) or []
        sent = v.get(MODEL_SENT)
        if LLAMAINDEX_ENUM_ERROR in str(v.get(MESSAGE) or ""):
            return Weight("for", f"{v.get(ROUTE)} refused the model name before sending anything "
                          f"({LLAMAINDEX_ENUM_ERROR})", "clients", decisive=True)
        if sent and served and sent not in served:
            return Weight("for", f"{v.get(ROUTE)} sent model {sent!r}, which the server does not "
                          f"serve ({', '.join(map(str, served))}), and got HTTP {v.get(STATUS)}", "clients",
                          decisive=True)
        if sent and sent in served:
            return Weight("against", f"LlamaIndex sent the served model {sent!r}", "clients", decisive=True)
    return None


def _llamaindex_fix(cfg: ConfigLike) -> str:
    model = cfg.get("model") or "<served model id>"
    return (f"Use OpenAILikeEmbedding(model_name='{model}', api_base=<server>/v1, api_key=…) "
            "(llama-index-embeddings-openai-like), which takes any model name; with OpenAIEmbedding pass "
            f"model_name='{model}' (its model= accepts only OpenAI's own names), never leave it out (it then sends "
            f"{LLAMAINDEX_DEFAULT_MODEL}); or serve with --served-model-name {LLAMAINDEX_DEFAULT_MODEL}.")


# The clues of the client records kept in triage/catalogue/vectors.py (token ids, base64, Open WebUI).


def token_ids_sent(case: Case) -> Optional[Weight]:
    """For the token-ids record: a bad call whose body carried token ids; against: the bad calls all sent text."""
    views = [v for v in client_views(case) if bad(v) and v.get(INPUT_KIND)]
    if not views:
        return None
    ids = [v for v in views if v.get(INPUT_KIND) == "token ids"]
    if ids:
        return Weight("for", f"{ids[0].get(ROUTE)} sent token ids for text it was given", "clients", decisive=True)
    return Weight("against", f"the calls that went wrong ({_libs(views)}) sent text, not token ids", "clients",
                  decisive=True)


def base64_length(case: Case) -> Optional[Weight]:
    """For the base64 record: a vector of a quarter or a half of the plain length; against: a refused request."""
    views = [v for v in client_views(case) if bad(v)]
    if not views:
        return None
    for v in views:
        lens, plain = v.get(LENGTHS) or [], v.get(PLAIN_LENGTH)
        if plain and lens and all(n * 4 == plain or n * 2 == plain for n in lens):
            return Weight("for", f"{v.get(ROUTE)} handed back {list(lens)} values for {plain}-dim vectors: bytes "
                          "decoded as another type", "clients", decisive=True)
    if all(failed(v) and not v.get(LENGTHS) for v in views):
        return Weight("against", "the calls that went wrong got no vectors at all (refused), while cut base64 "
                      "answers 200", "clients", decisive=True)
    b64 = [v for v in views if v.get(ENCODING_SENT) == "base64" and not failed(v)]
    if b64:
        return Weight("for", f"{b64[0].get(ROUTE)} asked for base64 and its vectors differ", "clients")
    return None


def openwebui_problem(case: Case) -> Optional[Weight]:
    """For the Open WebUI record: what Open WebUI's own request showed; against: the failing calls are others'."""
    mine, other = _failing_of(case, "open-webui", "Open WebUI's request")
    if not mine:
        return other
    problem = next((v.get(PROBLEM) for v in mine if v.get(PROBLEM)), None)
    if problem:
        return Weight("for", f"Open WebUI's request got HTTP {mine[0].get(STATUS)}: {problem}", "clients",
                      decisive=True)
    return None


RECORDS = load(__name__)  # triage/catalogue/data/clients.toml
__getattr__, __dir__ = RECORDS.exports(globals())

CLIENT_MODES = RECORDS.modes()
