"""Validate a RayService's `serveConfigV2` against the pinned Ray release's Serve config schema.

The KubeRay CRD declares `serveConfigV2` as a plain string, so the CRD check passes any text; Ray's
dashboard agent parses it only after the cluster is up (minutes of TPU node provisioning later). Here
it is parsed (tpu_stacks.serving.serve_config) and checked against JSON schemas generated from the release
`tpu_stacks.catalog.ray_serve.RAY_SERVE_VERSION` pins (ray_serve/, written by
scripts/ray_serve_schema.py; ray_serve/PROVENANCE.tsv says from what):

- the whole config against `ServeDeploySchema`;
- each `applications[].args` of an application built by `ray.serve.llm:build_openai_app` against
  `LLMServingArgs`'s fields, each `llm_configs[]` mapping against `LLMConfig` (a string is a path to a
  YAML file in the image, not readable here), its `model_loading_config` against
  `ModelLoadingConfig` (LLMConfig's validator does that in Ray), its `deployment_config` keys against
  the parameters of `ray.serve.deployment` (which they are passed to) and its `autoscaling_config`
  against Serve's `AutoscalingConfig`.

Stricter than Ray on purpose: Serve's pydantic models ignore keys they do not know (pydantic's
default; `ServeDeploySchema` says so for forward compatibility), so a misspelled `route_prefx` or
`autoscaling_config.max_replica` is dropped in silence and the default applies. As for CRDs
(schema.py), an object that lists `properties` accepts no other key unless its schema says
`additionalProperties`. LLMConfig itself forbids unknown keys in Ray too (`extra="forbid"`).
"""

from __future__ import annotations

import copy
import functools
import json
from pathlib import Path
from typing import Any

import jsonschema

from tpu_stacks.catalog.ray_serve import LLM_CONFIG_KEY, RAY_SERVE_VERSION
from tpu_stacks.serving.serve_config import SERVE_CONFIG_FIELD, ServeConfigError, is_openai_app, parse

SCHEMA_DIR = Path(__file__).resolve().parent / "ray_serve"


def schema_path(version: str = RAY_SERVE_VERSION) -> Path:
    return SCHEMA_DIR / f"ray-serve-{version}.json"


def strict(node: Any) -> Any:
    """A pydantic JSON schema where every object with `properties` and no `additionalProperties` is closed."""
    if isinstance(node, list):
        return [strict(item) for item in node]
    if not isinstance(node, dict):
        return node
    out = {key: strict(value) for key, value in node.items()}
    if "properties" in out and "additionalProperties" not in out:
        out["additionalProperties"] = False
    return out


@functools.cache
def _schemas(version: str) -> dict[str, Any]:
    return json.loads(schema_path(version).read_text(encoding="utf-8"))


def _definition(document: dict[str, Any], name: str, required: bool = True) -> dict[str, Any]:
    """One `$defs` entry of a generated schema as a schema of its own (its siblings kept for `$ref`s)."""
    found = copy.deepcopy(document["$defs"][name])
    if not required:
        found.pop("required", None)
    return strict({**found, "$defs": document["$defs"]})


@functools.cache
def _validators(version: str) -> dict[str, jsonschema.protocols.Validator]:
    data = _schemas(version)
    serve, llm = data["serve_deploy_schema"], data["llm_config"]
    args = {"type": "object", "properties": {name: {} for name in data["llm_serving_args_fields"]}}
    options = {"type": "object", "properties": {name: {} for name in data["deployment_options"]}}
    schemas = {
        "serve": strict(serve),
        "llm_serving_args": strict(args),
        "llm_config": strict(llm),
        "model_loading_config": _definition(llm, "ModelLoadingConfig"),
        "deployment_config": strict(options),
        "autoscaling_config": _definition(serve, "AutoscalingConfig", required=False),
    }
    return {name: jsonschema.Draft202012Validator(schema) for name, schema in schemas.items()}


def _errors(name: str, instance: Any, where: str, version: str) -> list[tuple[str, str]]:
    validator = _validators(version)[name]
    return [
        ("/".join([where, *(str(p) for p in error.absolute_path)]), error.message)
        for error in validator.iter_errors(instance)
    ]


def serve_config_problems(obj: dict[str, Any], version: str = RAY_SERVE_VERSION) -> list[tuple[str, str]]:
    """(path, message) for every way a RayService's `spec.serveConfigV2` breaks the pinned Serve schemas."""
    spec = obj.get("spec")
    text = spec.get(SERVE_CONFIG_FIELD) if isinstance(spec, dict) else None
    if not isinstance(text, str):
        return []  # absent, or not a string: the CRD check reports the type
    base = f"spec/{SERVE_CONFIG_FIELD}"
    try:
        config = parse(text)
    except ServeConfigError as error:
        return [(base, str(error))]
    label = f" (Ray Serve {version} schema)"
    problems = _errors("serve", config, base, version)
    applications = config.get("applications")
    for index, application in enumerate(applications if isinstance(applications, list) else []):
        if not isinstance(application, dict) or not is_openai_app(application.get("import_path")):
            continue  # an application of its own code: its args are its builder's own
        args = application.get("args")
        where = f"{base}/applications/{index}/args"
        problems += _errors("llm_serving_args", args if args is not None else {}, where, version)
        configs = args.get(LLM_CONFIG_KEY) if isinstance(args, dict) else None
        for position, llm_config in enumerate(configs if isinstance(configs, list) else []):
            at = f"{where}/{LLM_CONFIG_KEY}/{position}"
            if isinstance(llm_config, str):
                continue  # a path to an LLMConfig YAML file inside the image: not readable here
            problems += _errors("llm_config", llm_config, at, version)
            if not isinstance(llm_config, dict):
                continue
            if isinstance(llm_config.get("model_loading_config"), dict):
                loading = llm_config["model_loading_config"]
                problems += _errors("model_loading_config", loading, f"{at}/model_loading_config", version)
            deployment = llm_config.get("deployment_config")
            if isinstance(deployment, dict):
                problems += _errors("deployment_config", deployment, f"{at}/deployment_config", version)
                if isinstance(deployment.get("autoscaling_config"), dict):
                    scaling = deployment["autoscaling_config"]
                    at_scaling = f"{at}/deployment_config/autoscaling_config"
                    problems += _errors("autoscaling_config", scaling, at_scaling, version)
    return [(path, message + label) for path, message in problems]
