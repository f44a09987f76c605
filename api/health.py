"""GET /health: is the database up, is GDS there, does each model endpoint answer.

Model endpoints are asked `GET {base_url}/models` (every OpenAI-compatible server, vLLM
included, answers it) with a short timeout; roles sharing one endpoint are asked once.
An endpoint's key is sent but never shown.

Anyone may ask; only a caller with an accepted X-API-Key sees versions, base URLs, model
names and reasons (`check_health`); everyone else sees each component's status
(`public_view`). Driver errors (the Bolt address among them) go to the server log only.
"""

import logging
from dataclasses import dataclass
from typing import Any

import httpx

from crase.api.auth import API_KEY_HEADER
from crase.api.runs import DATABASE_DOWN
from crase.errors import DatabaseError
from crase.graph import Graph
from crase.neo4j_driver import AuthError, ServiceUnavailable, SessionExpired
from crase.settings import ModelEndpoint, Settings

log = logging.getLogger(__name__)

GDS_DOWN = ("Graph Data Science is not available (gds.version() failed); check that the "
            "GDS plugin is installed (`make jars`); the server log has the reason")
DATABASE_FAILED = ("the database answers but failed the health query; the server log has "
                   "the reason")
PUBLIC_DETAIL = (f"send an accepted {API_KEY_HEADER} header for versions, model endpoints "
                 "and reasons")


@dataclass(frozen=True)
class Health:
    ok: bool  # the database answers; models and GDS only degrade the status
    body: dict[str, Any]


def check_health(graph: Graph, settings: Settings) -> Health:
    database = check_database(graph)
    gds = check_gds(graph) if database["ok"] else {"ok": False, "detail": "database down"}
    models = check_models(settings)
    model_problems = [m for m in models.values() if m["status"] not in ("ok", "not configured")]
    if not database["ok"]:
        status = "unavailable"
    elif not gds["ok"] or model_problems:
        status = "degraded"
    else:
        status = "ok"
    return Health(database["ok"], {"status": status, "database": database, "gds": gds,
                                   "models": models})


def check_database(graph: Graph) -> dict[str, Any]:
    # A managed read retries an unreachable server for half a minute; a health check
    # should say "down" at once, so it asks the driver directly first.
    try:
        graph.driver.verify_connectivity()
    except (ServiceUnavailable, SessionExpired, AuthError) as err:
        log.warning("health: Neo4j is not reachable: %s", err)
        return {"ok": False, "detail": DATABASE_DOWN}
    try:
        row = graph.read("read_database_components", timeout_s=5.0)[0]
    except DatabaseError as err:  # DatabaseUnavailable included
        log.warning("health: the database failed: %s", err)
        return {"ok": False, "detail": DATABASE_FAILED}
    return {"ok": True, "version": row["version"], "edition": row["edition"]}


def check_gds(graph: Graph) -> dict[str, Any]:
    try:
        row = graph.read("read_gds_version", timeout_s=5.0)[0]
    except DatabaseError as err:
        log.warning("health: Graph Data Science is not available: %s", err)
        return {"ok": False, "detail": GDS_DOWN}
    return {"ok": True, "version": row["version"]}


def public_view(body: dict[str, Any]) -> dict[str, Any]:
    """What a caller without a key is shown: each component's status, nothing about
    where or what it runs."""
    return {"status": body["status"],
            "database": {"ok": body["database"]["ok"]},
            "gds": {"ok": body["gds"]["ok"]},
            "models": {role: {"status": public_status(model["status"])}
                       for role, model in body["models"].items()},
            "detail": PUBLIC_DETAIL}


def public_status(status: str) -> str:
    return status if status in ("ok", "not configured") else "down"


def check_models(settings: Settings) -> dict[str, dict[str, Any]]:
    answers: dict[tuple[str, str | None], dict[str, Any]] = {}
    report = {}
    for role in type(settings.models).model_fields:
        endpoint = getattr(settings.models, role)
        if not isinstance(endpoint, ModelEndpoint):
            continue
        if not endpoint.configured:
            report[role] = {"status": "not configured"}
            continue
        assert endpoint.base_url is not None
        key = (endpoint.base_url, endpoint.api_key)
        if key not in answers:
            answers[key] = probe_endpoint(endpoint, settings.api.health_timeout_s)
        report[role] = judge_role(endpoint, answers[key])
    return report


def judge_role(endpoint: ModelEndpoint, answer: dict[str, Any]) -> dict[str, Any]:
    """The endpoint's answer for one role: ok only if it serves the role's model."""
    role = {**answer, "base_url": endpoint.base_url, "model": endpoint.model}
    if answer["status"] == "ok" and endpoint.model not in answer["served"]:
        role["status"] = "error"
        role["detail"] = f"the endpoint does not serve {endpoint.model}"
    return role


def probe_endpoint(endpoint: ModelEndpoint, timeout_s: float) -> dict[str, Any]:
    url = f"{(endpoint.base_url or '').rstrip('/')}/models"
    headers = {"Authorization": f"Bearer {endpoint.api_key}"} if endpoint.api_key else {}
    try:
        response = httpx.get(url, headers=headers, timeout=timeout_s)
    except httpx.HTTPError as err:
        return {"status": "unreachable", "detail": f"{type(err).__name__}: {err}"}
    if response.status_code != 200:
        return {"status": "error", "detail": f"GET /models answered {response.status_code}"}
    try:
        served = [item.get("id") for item in response.json().get("data", [])]
    except (ValueError, AttributeError):
        return {"status": "error", "detail": "GET /models did not answer with a model list"}
    return {"status": "ok", "served": served}
