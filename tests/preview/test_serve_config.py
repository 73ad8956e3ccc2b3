"""A RayService's serveConfigV2 is checked against the pinned Ray release's Serve config schema, not only its CRD."""

from __future__ import annotations

import copy
import csv
import hashlib
import json
from pathlib import Path
from typing import Any

import pytest
import yaml

from scripts import ray_serve_schema
from tpu_stacks.catalog.ray_serve import OPENAI_APP_IMPORT_PATH, RAY_SERVE_VERSION
from tpu_stacks_preview.schema import validate_objects
from tpu_stacks_preview.serve_schema import SCHEMA_DIR, schema_path, serve_config_problems

LLM_CONFIG: dict[str, Any] = {
    "model_loading_config": {
        "model_id": "meta-llama/Llama-3.1-405B-Instruct",
        "model_source": "/data/meta-llama/Llama-3.1-405B-Instruct",
    },
    "accelerator_type": "TPU-V6E",
    "accelerator_config": {"kind": "tpu", "topology": "4x8"},
    "engine_kwargs": {"tensor_parallel_size": 32, "max_model_len": 8192, "distributed_executor_backend": "ray"},
    "deployment_config": {"autoscaling_config": {"min_replicas": 1, "max_replicas": 2}},
    "runtime_env": {"env_vars": {"TPU_MULTIHOST_BACKEND": "ray"}},
}
SERVE: dict[str, Any] = {
    "http_options": {"host": "0.0.0.0", "port": 8000},
    "applications": [
        {
            "name": "llm",
            "route_prefix": "/",
            "import_path": OPENAI_APP_IMPORT_PATH,
            "args": {"llm_configs": [LLM_CONFIG]},
        }
    ],
}


def rayservice(serve: dict[str, Any] | str) -> dict[str, Any]:
    head = {"containers": [{"name": "ray-head", "image": "rayproject/ray:2.60.0-py312"}]}
    return {
        "apiVersion": "ray.io/v1",
        "kind": "RayService",
        "metadata": {"name": "llm", "namespace": "serving"},
        "spec": {
            "serveConfigV2": serve if isinstance(serve, str) else yaml.safe_dump(serve),
            "rayClusterConfig": {"headGroupSpec": {"rayStartParams": {}, "template": {"spec": head}}},
        },
    }


def problems(serve: dict[str, Any] | str) -> list[tuple[str, str]]:
    return [(p.path, p.message) for p in validate_objects([rayservice(serve)]).problems]


def test_the_multi_host_serve_config_validates_cleanly() -> None:
    assert problems(SERVE) == []


@pytest.mark.parametrize(
    ("edit", "path", "key"),
    [
        (lambda s: s["applications"][0].__setitem__("route_prefx", "/"), "applications/0", "route_prefx"),
        (lambda s: s.__setitem__("http_option", {}), "", "http_option"),
        (lambda s: s["applications"][0]["args"].__setitem__("llm_config", []), "applications/0/args", "llm_config"),
        (lambda s: _llm(s).__setitem__("engine_kwarg", {}), "applications/0/args/llm_configs/0", "engine_kwarg"),
        (
            lambda s: _llm(s)["model_loading_config"].__setitem__("modelid", "x"),
            "applications/0/args/llm_configs/0/model_loading_config",
            "modelid",
        ),
        (
            lambda s: _llm(s)["deployment_config"].__setitem__("num_replica", 2),
            "applications/0/args/llm_configs/0/deployment_config",
            "num_replica",
        ),
        (
            lambda s: _llm(s)["deployment_config"]["autoscaling_config"].__setitem__("max_replica", 2),
            "applications/0/args/llm_configs/0/deployment_config/autoscaling_config",
            "max_replica",
        ),
        (lambda s: _llm(s)["accelerator_config"].__setitem__("topolgy", "4x8"), "applications/0/args/llm_configs/0/accelerator_config", None),
    ],
    ids=["application", "top-level", "builder-args", "llm-config", "model-loading", "deployment", "autoscaling", "tpu-config"],
)  # fmt: skip
def test_a_misspelled_serve_key_is_a_schema_error(edit, path: str, key: str | None) -> None:
    """Ray's own models ignore most unknown keys (the default applies in silence); the plan refuses them."""
    serve = copy.deepcopy(SERVE)
    edit(serve)
    found = problems(serve)
    where = "/".join(p for p in ("spec/serveConfigV2", path) if p)
    assert [p for p, _ in found] == [where], found
    assert f"Ray Serve {RAY_SERVE_VERSION} schema" in found[0][1]
    if key is not None:
        assert f"'{key}' was unexpected" in found[0][1]


def _llm(serve: dict[str, Any]) -> dict[str, Any]:
    return serve["applications"][0]["args"]["llm_configs"][0]


def test_a_wrong_type_inside_the_config_is_reported_where_it_is() -> None:
    serve = copy.deepcopy(SERVE)
    _llm(serve)["deployment_config"]["autoscaling_config"]["min_replicas"] = "one"
    ((path, message),) = problems(serve)
    assert path.endswith("deployment_config/autoscaling_config/min_replicas") and "'one'" in message


def test_yaml_that_does_not_parse_is_one_line() -> None:
    ((path, message),) = problems("applications:\n  - name: llm\n    args: {llm_configs: [\n")
    assert path == "spec/serveConfigV2" and message.startswith("is not YAML:") and "\n" not in message
    ((_, message),) = problems("- one\n- two\n")
    assert message == "is a YAML list, not a mapping with `applications`"


def test_an_application_of_its_own_code_is_checked_at_the_serve_level_only() -> None:
    """A Python-file application (the GKE multi-host sample's shape): its args are its own, not LLMServingArgs."""
    serve = {"applications": [{"name": "llm", "import_path": "serve_tpu:deployment", "args": {"model": "x"}}]}
    assert problems(serve) == []
    serve["applications"][0]["runtime_env"] = {"env_vars": {"A": "1"}}  # free-form in Ray: additionalProperties
    assert problems(serve) == []


def test_a_rayservice_without_serve_config_or_of_another_kind_is_not_read() -> None:
    service = rayservice(SERVE)
    del service["spec"]["serveConfigV2"]
    assert serve_config_problems(service) == []
    cluster = {**rayservice("not: [yaml"), "kind": "RayCluster"}
    assert all("serveConfigV2" not in p.path for p in validate_objects([cluster]).problems)


def test_the_vendored_schema_is_the_pinned_release_and_matches_its_provenance() -> None:
    data = json.loads(schema_path().read_text(encoding="utf-8"))
    assert data["ray_version"] == RAY_SERVE_VERSION
    assert "llm_configs" in data["llm_serving_args_fields"] and "autoscaling_config" in data["deployment_options"]
    with (SCHEMA_DIR / "PROVENANCE.tsv").open(encoding="utf-8") as table:
        rows = list(csv.DictReader(table, delimiter="\t"))
    assert {row["file"] for row in rows} == {path.name for path in SCHEMA_DIR.glob("*.json")}
    for row in rows:
        digest = hashlib.sha256((SCHEMA_DIR / row["file"]).read_bytes()).hexdigest()
        assert row["sha256 prefix"] == f"sha256:{digest[:16]}", row["file"]
        assert row["file"] == f"ray-serve-{row['version']}.json" and len(row["commit"]) == 40
        assert json.loads((SCHEMA_DIR / row["file"]).read_text())["ray_commit"] == row["commit"]


def test_the_generator_writes_the_file_and_replaces_its_provenance_row(tmp_path: Path) -> None:
    """The part of scripts/ray_serve_schema.py that needs no PyPI: what it writes from the dumped schemas."""
    data = {"ray_version": "9.9.9", "ray_commit": "a" * 40, "serve_deploy_schema": {}, "llm_config": {}}
    first = ray_serve_schema.write({**data, "llm_serving_args_fields": ["llm_configs"]}, tmp_path)
    second = ray_serve_schema.write({**data, "llm_serving_args_fields": ["llm_configs", "x"]}, tmp_path)
    assert first == second == tmp_path / "ray-serve-9.9.9.json"
    with (tmp_path / "PROVENANCE.tsv").open(encoding="utf-8") as table:
        (row,) = list(csv.DictReader(table, delimiter="\t"))
    assert row["sha256 prefix"] == "sha256:" + hashlib.sha256(second.read_bytes()).hexdigest()[:16]
    assert row["version"] == "9.9.9" and row["source"].startswith("pypi ray[serve]==9.9.9")


def test_only_ray_serve_llms_builder_has_its_args_checked_as_llm_serving_args() -> None:
    own = copy.deepcopy(SERVE)
    own["applications"][0]["import_path"] = "my_app.serve:build"  # its own builder may take any args
    own["applications"][0]["args"]["replicas"] = 2
    assert problems(own) == []
    dotted = copy.deepcopy(SERVE)
    dotted["applications"][0]["import_path"] = "ray.serve.llm.build_openai_app"  # Serve accepts either form
    dotted["applications"][0]["args"]["replicas"] = 2
    assert [p for p, _ in problems(dotted)] == ["spec/serveConfigV2/applications/0/args"]


def test_an_llm_config_given_as_a_file_path_is_not_read() -> None:
    serve = copy.deepcopy(SERVE)
    serve["applications"][0]["args"]["llm_configs"] = ["/home/ray/llm_config.yaml", 7]
    assert problems(serve) == [
        (
            "spec/serveConfigV2/applications/0/args/llm_configs/1",
            f"7 is not of type 'object' (Ray Serve {RAY_SERVE_VERSION} schema)",
        )
    ]
