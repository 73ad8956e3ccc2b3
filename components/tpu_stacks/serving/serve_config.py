"""A RayService's Serve config (`spec.serveConfigV2`), read one way for the planner and the policy pack.

KubeRay keeps the Serve config as a YAML string (`serveConfigV2: string` in the RayService CRD,
ray-project/kuberay v1.7.0 ray-operator/apis/ray/v1/rayservice_types.go) and hands it to Ray's
dashboard agent, which validates it only once the cluster is up. What it says decides whether the
replica fits its slice: Ray Serve LLM's applications (`import_path: ray.serve.llm:build_openai_app`)
take `args.llm_configs[]`, each an `LLMConfig` with `model_loading_config` (`model_id`, `model_source`),
`engine_kwargs` (vLLM's engine arguments: `tensor_parallel_size`, `pipeline_parallel_size`,
`max_model_len`, ...), `accelerator_type` and `accelerator_config` (`{kind: tpu, topology: 4x4}`)
(python/ray/llm/_internal/serve/core/configs/llm_config.py at the release
tpu_stacks.catalog.ray_serve pins; [RAY-SERVE-TPU]).

Here: parse the string once, list the LLM configs with where they are, and spell their engine
arguments as vLLM flags, so the pack sizes them with the same code as a vLLM command line
(`engine_args.py`). Pure: no provider SDK.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import yaml

from tpu_stacks.catalog.ray_serve import LLM_CONFIG_KEY, OPENAI_APP_IMPORT_PATH

SERVE_CONFIG_FIELD = "serveConfigV2"


class ServeConfigError(ValueError):
    """The Serve config is not a YAML mapping: one line that says where."""


def parse(text: str) -> dict[str, Any]:
    """The Serve config as data; a ServeConfigError (one line) when it is not a YAML mapping."""
    try:
        config = yaml.safe_load(text)
    except yaml.YAMLError as error:
        mark = getattr(error, "problem_mark", None)
        where = f" at line {mark.line + 1}, column {mark.column + 1}" if mark is not None else ""
        problem = getattr(error, "problem", None) or str(error).splitlines()[0]
        raise ServeConfigError(f"is not YAML: {problem}{where}") from None
    if not isinstance(config, dict):
        raise ServeConfigError(f"is a YAML {type(config).__name__}, not a mapping with `applications`")
    return config


@dataclass(frozen=True)
class LlmApp:
    """One `LLMConfig` of a Serve application, with its place in the config."""

    where: str
    """`applications[0].args.llm_configs[0]`, for messages (keys as the user wrote them)."""
    config: dict[str, Any]

    def _mapping(self, key: str) -> dict[str, Any]:
        value = self.config.get(key)
        return value if isinstance(value, dict) else {}

    @property
    def engine_kwargs(self) -> dict[str, Any]:
        return self._mapping("engine_kwargs")

    @property
    def accelerator_type(self) -> str | None:
        value = self.config.get("accelerator_type")
        return value if isinstance(value, str) and value else None

    @property
    def topology(self) -> str | None:
        """`accelerator_config.topology` of a TPU accelerator config (the slice one replica reserves)."""
        accelerator = self._mapping("accelerator_config")
        value = accelerator.get("topology")
        if accelerator.get("kind", "tpu") != "tpu" or not isinstance(value, str) or not value:
            return None
        return value

    def model_names(self) -> list[tuple[str, str]]:
        """(key as written, name) to look the model up by, in order: `model_loading_config.model_source` (the
        weights: a Hugging Face id, a path, or a mirror's `bucket_uri`), then `model_id` (the name clients
        call, often the Hugging Face id), then a path's last two parts (`/data/meta-llama/Llama-3.1-405B`:
        the Hugging Face layout a download into a bucket keeps)."""
        loading = self._mapping("model_loading_config")
        prefix = f"{self.where}.model_loading_config"
        source = loading.get("model_source")
        if isinstance(source, dict):  # CloudMirrorConfig: {bucket_uri: gs://...}
            source = source.get("bucket_uri")
        names: list[tuple[str, str]] = []
        if isinstance(source, str) and source:
            names.append((f"{prefix}.model_source", source))
        model_id = loading.get("model_id")
        if isinstance(model_id, str) and model_id:
            names.append((f"{prefix}.model_id", model_id))
        if isinstance(source, str) and ("://" in source or source.startswith("/")):
            parts = [p for p in source.split("://")[-1].split("/") if p]
            if len(parts) >= 2:
                names.append((f"{prefix}.model_source", "/".join(parts[-2:])))
        return names


def is_openai_app(import_path: Any) -> bool:
    """Whether an application's `import_path` is Ray Serve LLM's OpenAI builder (`module:attr` or `module.attr`,
    both of which Serve accepts), whose `args` are `LLMServingArgs`."""
    return isinstance(import_path, str) and import_path.replace(":", ".") == OPENAI_APP_IMPORT_PATH.replace(":", ".")


def llm_apps(config: dict[str, Any]) -> list[LlmApp]:
    """Every `args.llm_configs[]` mapping of every application (a path to a YAML file is not readable here)."""
    found: list[LlmApp] = []
    applications = config.get("applications")
    for index, application in enumerate(applications if isinstance(applications, list) else []):
        args = application.get("args") if isinstance(application, dict) else None
        configs = args.get(LLM_CONFIG_KEY) if isinstance(args, dict) else None
        for position, llm_config in enumerate(configs if isinstance(configs, list) else []):
            if isinstance(llm_config, dict):
                found.append(LlmApp(f"applications[{index}].args.{LLM_CONFIG_KEY}[{position}]", llm_config))
    return found


def cli_text(config: dict[str, Any]) -> list[tuple[str, str]]:
    """(`applications[i].args`, text) of applications that pass vLLM command-line style arguments, joined in
    order: a list of strings with a flag in it, whole (`["--tensor-parallel-size", "16"]`: values kept), and
    any other string that starts with `-` (a custom builder's `"--tensor-parallel-size=16"`)."""
    found: list[tuple[str, str]] = []
    applications = config.get("applications")
    for index, application in enumerate(applications if isinstance(applications, list) else []):
        args = application.get("args") if isinstance(application, dict) else None
        parts = _flag_text(args)
        if parts:
            found.append((f"applications[{index}].args", " ".join(parts)))
    return found


def _flag_text(value: Any) -> list[str]:
    if isinstance(value, str):
        return [value] if value.lstrip().startswith("-") else []
    if isinstance(value, dict):
        return [s for item in value.values() for s in _flag_text(item)]
    if isinstance(value, list):
        if value and all(isinstance(item, str) for item in value):
            return list(value) if any(item.lstrip().startswith("-") for item in value) else []
        return [s for item in value for s in _flag_text(item)]
    return []


def engine_flags(engine_kwargs: dict[str, Any]) -> dict[str, str]:
    """vLLM engine arguments as its command line spells them: `max_model_len: 8192` is `--max-model-len=8192`
    (vLLM's EngineArgs fields and CLI flags are the same names, vllm/engine/arg_utils.py `add_cli_args`)."""
    flags: dict[str, str] = {}
    for key, value in engine_kwargs.items():
        if value is None or isinstance(value, (dict, list)):
            continue
        shown = str(value).lower() if isinstance(value, bool) else str(int(value) if _whole(value) else value)
        flags["--" + str(key).replace("_", "-")] = shown
    return flags


def _whole(value: Any) -> bool:
    return isinstance(value, float) and value.is_integer()
