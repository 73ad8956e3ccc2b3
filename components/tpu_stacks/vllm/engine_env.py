"""The environment the pinned vLLM TPU engine reads, from the spec: one list for every pod that runs it.

The engine is vLLM v0.29.0 on tpu-inference v0.29.0 (catalog/engines.py `VLLM`). What it reads, at that tag
(read again in PyPI's vllm-tpu 0.29.0 sdist and tpu-inference 0.29.0 wheel; unchanged since v0.23.0):

- `VLLM_XLA_CACHE_PATH`: tpu-inference hands it to JAX as `jax_compilation_cache_dir` unless
  `VLLM_DISABLE_COMPILE_CACHE` is set (tpu_inference/runner/compilation_manager.py, `CompilationManager`,
  [VLLM-TPU]; ledger: vllm.env.xla-cache-path, vllm.env.disable-compile-cache,
  tpu-inference.compile-cache.enabled, tpu-inference.compile-cache.dir); the variable keeps its vLLM name
  although the compiler is JAX now, not torch_xla (the GKE multi-host sample sets the same variable,
  ai-ml/gke-ray/rayserve/llm/tpu/Dockerfile). A local directory per pod, kept in GCS per model, slice and vLLM
  build by `k8s.compile_cache` (vllm/pod.py says why).
- `VLLM_ENGINE_READY_TIMEOUT_S`: the API server waits this long (default 600 s) for the engine core's READY
  message, which the core sends only after it loaded the weights and compiled (vllm/v1/engine/core_client.py
  and core.py `EngineCoreProc`, vllm/envs.py: "often caused by slow weight loading for large models",
  [VLLM-SRC]); ten minutes do not cover a first start that downloads 141 GB and compiles, so it is the
  startup probe's budget: the engine gives up when Kubernetes would restart it anyway, not before.
  tpu-inference's own multi-host benchmark raises it to 10800 (scripts/multihost/nightly_benchmarking.sh).

Gone: `VLLM_USE_V1` (the tutorial's). v0.29.0 has only the V1 engine and no such variable, and vLLM warns
of every `VLLM_*` variable it does not know ("Unknown vLLM environment variable detected", vllm/envs.py
`validate_environ`; an error with `--fail-on-environ-validation`). Pure: no provider SDK.
"""

from __future__ import annotations

from tpu_stacks.vllm.spec import VllmSpec

XLA_CACHE_DIR = "/xla-cache"
"""The per-pod compile cache (an emptyDir, restored from and saved to the bucket by `k8s.compile_cache`)."""


def engine_env(spec: VllmSpec) -> dict[str, str]:
    """The engine's variables, in the order the container lists them."""
    cache = {"VLLM_XLA_CACHE_PATH": XLA_CACHE_DIR} if spec.compile_cache else {"VLLM_DISABLE_COMPILE_CACHE": "1"}
    return {**cache, "VLLM_ENGINE_READY_TIMEOUT_S": str(spec.startup_minutes * 60)}
