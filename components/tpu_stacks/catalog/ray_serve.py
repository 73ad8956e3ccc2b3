"""The Ray release the multi-host serving mode pins, and what that release's Serve config accepts.

One constant, `RAY_SERVE_VERSION`: the planner validates every RayService's `serveConfigV2` against the
Serve config schema generated from this release (tools/preview/tpu_stacks_preview/ray_serve/, written by
scripts/ray_serve_schema.py), and the pack reads the same config's keys. Change the version here, rerun
the script, commit both.

Why 2.60.0: the newest Ray on PyPI (`pip index versions ray`, November 2026) and a release with Ray
Serve LLM's TPU support: `LLMConfig.accelerator_config` with `{"kind": "tpu", "topology": ...}`
(ray-project/ray#61906, merged 2026-04-25), which places one bundle per TPU host on one slice
(`ray.util.tpu.SlicePlacementGroup`), is in its wheel (ray/llm/_internal/serve/core/configs/accelerators.py).
Ray's TPU serving guide documents it: [RAY-SERVE-TPU]
(doc/source/serve/llm/user-guides/tpu.md, ray-project/ray#65026). The GKE multi-host sample predates a
release with it and installs a Ray master wheel instead (GoogleCloudPlatform/kubernetes-engine-samples
ai-ml/gke-ray/rayserve/llm/tpu/Dockerfile @ 744e5b3c); a pinned release replaces that here.
"""

from __future__ import annotations

RAY_SERVE_VERSION = "2.60.0"
"""The Ray release of the multi-host serving mode (Ray Serve, Ray Serve LLM)."""

RAY_LLM_VLLM = "0.29.0"
"""The vLLM this Ray release's Serve LLM is built against: the ray 2.60.0 wheel's METADATA says
`Requires-Dist: vllm[audio]==0.29.0; extra == "llm"`, and its ray/llm/_internal/serve imports vLLM modules
that v0.23.0 lacks (vllm.entrypoints.launchers.cli_args, vllm.entrypoints.serve.engine.protocol,
vllm.renderers.online_renderer). The engine catalogue's VLLM is this version (catalog/engines/vllm.py reads it
here), and the server image's build checks the same pin against the image's vLLM
(vllm/ray_serve_image/Dockerfile). Change it with RAY_SERVE_VERSION, after re-reading the new wheel."""

OPENAI_APP_IMPORT_PATH = "ray.serve.llm:build_openai_app"
"""Ray Serve LLM's OpenAI-compatible application builder: its `args` are `LLMServingArgs`
(`llm_configs`: a list of `LLMConfig`), python/ray/serve/llm/__init__.py at the pinned release. ledger:
ray.serve-llm.openai-app, ray.serve-llm.llm-configs."""

LLM_CONFIG_KEY = "llm_configs"
"""Where the builder's arguments list the models it serves."""
