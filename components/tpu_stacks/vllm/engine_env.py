"""The environment the pinned vLLM TPU engine reads, from the spec: one list for every pod that runs it.

The engine is vLLM v0.29.0 on tpu-inference v0.29.0 (catalog/engines/vllm.py `VLLM`). What it reads, at that tag
(read again in PyPI's vllm-tpu 0.29.0 sdist and tpu-inference 0.29.0 wheel; unchanged since v0.23.0):

- `VLLM_XLA_CACHE_PATH`: tpu-inference hands it to JAX as `jax_compilation_cache_dir` unless
  `VLLM_DISABLE_COMPILE_CACHE` is set (tpu_inference/runner/compilation_manager.py, `CompilationManager`,
  [VLLM-TPU]; ledger: vllm.env.xla-cache-path, vllm.env.disable-compile-cache,
  tpu-inference.compile-cache.enabled, tpu-inference.compile-cache.dir); the variable keeps its vLLM name
  although the compiler is JAX now, not torch_xla (the GKE multi-host sample sets the same variable,
  ai-ml/gke-ray/rayserve/llm/tpu/Dockerfile). A local directory per pod, kept in GCS per model, slice and vLLM
  build by `k8s.compile_cache` (vllm/pod.py says why).
- `VLLM_ENGINE_READY_TIMEOUT_S` (default 600 s, vllm/envs.py): how long the front end waits, after the engine
  core's startup handshake, for each core to register on its input socket (vllm/v1/engine/core_client.py
  `MPClient.__init__`). It does NOT bound the weight loading or the XLA compile at v0.29.0, although its error
  message says "often caused by slow weight loading": the front end first waits in `launch_core_engines` ->
  `wait_for_engine_startup` (vllm/v1/engine/utils.py) for the core's READY handshake, which the core sends only
  after `EngineCore.__init__` loaded the model and compiled (vllm/v1/engine/core.py), and that loop polls every
  10 s with no overall limit; it ends early only when a core process dies (ledger:
  vllm.engine-ready-timeout, vllm.engine-startup-unbounded). So what bounds a cold start is the startup probe
  (single host) or Ray Serve LLM's own engine-start limit (multi-host, vllm/multihost_plan.py). It is kept at the
  startup budget: harmless, and right again should a release move the load inside the limited wait (tpu-inference's
  own multi-host benchmark sets it too, to 10800: scripts/multihost/nightly_benchmarking.sh).

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
