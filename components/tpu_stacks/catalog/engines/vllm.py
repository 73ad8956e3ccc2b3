"""vLLM at the pinned version: its flags, metrics (as vLLM exports them itself), image and user.

Sources: as the package says; per field below.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from tpu_stacks.catalog.engines.dtypes import DtypeRule
from tpu_stacks.catalog.engines.record import (
    CommandMarker,
    EngineVersion,
    Flag,
    Renamed,
    counters,
    gauges,
    histograms,
)
from tpu_stacks.catalog.image_users import NONROOT_UID, ImageUser
from tpu_stacks.catalog.ray_serve import RAY_LLM_VLLM
from tpu_stacks.catalog.upstream import number

if TYPE_CHECKING:
    from tpu_stacks.catalog.model_shape import Dtype, ModelArchitecture

STACK_BATCHED_TOKENS = 512
"""The stacks' `--max-num-batched-tokens` when `vllm.maxNumBatchedTokens` is unset (vllm/spec.py): a stack always
passes the flag. A vLLM server whose arguments give none runs vLLM's own default, per generation
(catalog/engine_traffic.py VLLM_DEFAULT_BATCHED_TOKENS), which is not this number."""

_VLLM_TAG = f"v{RAY_LLM_VLLM}"  # one vLLM for both modes: the one the pinned Ray's Serve LLM pins
_VLLM_LOGGERS = f"https://github.com/vllm-project/vllm/blob/{_VLLM_TAG}/vllm/v1/metrics/loggers.py"
_VLLM_RENAMES = (
    "vllm/v1/metrics/loggers.py of v0.9 to v0.12 ('Deprecated in 0.9 - Renamed as vllm:kv_cache_usage_perc')"
)

VLLM = EngineVersion(
    engine="vllm",
    # The released vLLM TPU image built on tpu-inference ([VLLM-TPU]; vLLM PR #27997 moved the vllm-tpu image build
    # there): vLLM v0.29.0 with tpu-inference v0.29.0 (PyPI vllm-tpu 0.29.0, requirements/tpu.txt:
    # tpu-inference==0.29.0). The version is the one Ray Serve LLM pins: the ray 2.60.0 wheel (catalog/ray_serve.py)
    # says `Requires-Dist: vllm[audio]==0.29.0; extra == "llm"`, and every `vllm.` module its
    # ray/llm/_internal/serve imports exists in this tree (v0.23.0 lacks vllm.entrypoints.serve.engine.protocol,
    # vllm.entrypoints.launchers.cli_args and vllm.renderers.online_renderer). One image serves single-host (the
    # Deployment) and multi-host slices (tpu-inference's Ray executor, `TPU_MULTIHOST_BACKEND=ray`,
    # tpu_inference/envs.py). The server command `python3 -m vllm.entrypoints.openai.api_server` still runs at this
    # tag, with a DeprecationWarning naming `vllm serve` (vllm/entrypoints/openai/api_server.py).
    version=_VLLM_TAG,
    images=("docker.io/vllm/vllm-tpu", "vllm/vllm-tpu"),
    workload="serve",
    # The server's commands: `python3 -m vllm.entrypoints.openai.api_server` and `vllm serve <model>` (the CLI's
    # subcommand, vllm/entrypoints/cli/serve.py), whose positional argument is the model.
    commands=(
        CommandMarker(contains="vllm.entrypoints.openai.api_server"),
        CommandMarker(program="vllm", then="serve"),
    ),
    model_after="serve",
    # FlexibleArgumentParser turns a flag name's underscores into dashes before parsing (ledger:
    # vllm.args.underscores-as-dashes), so `--max_num_seqs 64` is `--max-num-seqs 64` to the server.
    underscored_flags=True,
    flags=(
        Flag(name="--model", meaning="model", note="Hugging Face id; `vllm serve <model>` gives it positionally"),
        Flag(
            name="--tensor-parallel-size",
            meaning="tensor_parallel",
            default="1",
            note="JAX devices, not chips: tpu-inference shards over jax.devices()[:tensor parallel x other axes] "
            "(tpu_inference/worker/tpu_worker.py), 2 per tpu7x chip (its GKE example runs --tensor-parallel-size 8 "
            "on a 4-chip tpu7x 2x2x1 host, examples/offload/gke/benchmarks/deploy-baseline.yaml)",
        ),
        Flag(
            name="--max-model-len",
            meaning="context",
            note="absent: the model's own context, at least the sizing default 8192 for every catalogued model",
        ),
        Flag(
            name="--max-num-seqs",
            meaning="max_sequences",
            note="an upper bound: vLLM pages the KV cache, so one sequence of max-model-len is the floor it needs",
        ),
        Flag(name="--max-num-batched-tokens", meaning="prefill_tokens", note="tokens per engine step"),
        Flag(name="--kv-cache-dtype", meaning="kv_dtype", default="auto", note="auto: the model dtype"),
        Flag(name="--dtype", meaning="weight_dtype", default="auto", note="auto: bf16 for the catalogued models"),
        Flag(
            name="--quantization",
            meaning="quantization",
            aliases=("-q",),
            note="-q; tpu-inference maps fp8, awq, compressed-tensors, mxfp4, nvfp4 and DeepSeek V4 fp8 "
            "(tpu_inference/layers/vllm/quantization/__init__.py); torch_xla's tpu_int8 is gone; a method the "
            "catalogue cannot size is advisory",
        ),
    ),
    metric_prefix="vllm:",
    # PrometheusStatLogger at v0.29.0 (the tree of PyPI's vllm-tpu 0.29.0 sdist): what it registers unconditionally,
    # plus cache_config_info (log_metrics_info) and lora_requests_info (with LoRA). Not catalogued: corrupted_requests
    # (VLLM_COMPUTE_NANS_IN_LOGITS only), kv_block_* (--kv-cache-metrics only), spec-decode and KV-connector series.
    # tpu-inference is a platform plugin: the API server and its /metrics are vLLM's own ([VLLM-TPU] README: "keep
    # the same user experience, telemetry, and interface"). The server command: ledger: vllm.server.api-server-module.
    metrics=(
        *gauges(
            "vllm:num_requests_running",
            "vllm:num_requests_waiting",
            "vllm:num_requests_waiting_by_reason",
            "vllm:engine_sleep_state",
            "vllm:kv_cache_usage_perc",
            "vllm:cache_config_info",
            "vllm:lora_requests_info",
        ),
        *counters(
            "vllm:prefix_cache_queries_total",
            "vllm:prefix_cache_hits_total",
            "vllm:external_prefix_cache_queries_total",
            "vllm:external_prefix_cache_hits_total",
            "vllm:mm_cache_queries_total",
            "vllm:mm_cache_hits_total",
            "vllm:num_preemptions_total",
            "vllm:prompt_tokens_total",
            "vllm:prompt_tokens_by_source_total",
            "vllm:prompt_tokens_cached_total",
            "vllm:generation_tokens_total",
            "vllm:request_success_total",
        ),
        *histograms(
            "vllm:request_prompt_tokens",
            "vllm:request_generation_tokens",
            "vllm:iteration_tokens_total",
            "vllm:request_max_num_generation_tokens",
            "vllm:request_params_n",
            "vllm:request_params_max_tokens",
            "vllm:time_to_first_token_seconds",
            "vllm:inter_token_latency_seconds",
            "vllm:request_time_per_output_token_seconds",
            "vllm:e2e_request_latency_seconds",
            "vllm:request_queue_time_seconds",
            "vllm:request_inference_time_seconds",
            "vllm:request_prefill_time_seconds",
            "vllm:request_decode_time_seconds",
            "vllm:request_num_preemptions",  # registered unconditionally at v0.29.0; not in the v0.23.0 list
            "vllm:request_prefill_kv_computed_tokens",
        ),
    ),
    metrics_source=_VLLM_LOGGERS,
    # vLLM's deprecation policy (docs/usage/metrics.md at v0.29.0): deprecated in X.Y, hidden in X.Y+1, removed in
    # X.Y+2. The April 2025 image this replaced exported the old names; v0.29.0 registers none of them, and every
    # name of the v0.23.0 list above is still registered, under the same kind (no rename between 0.23 and 0.29).
    renamed=(
        Renamed(old="vllm:gpu_cache_usage_perc", new="vllm:kv_cache_usage_perc", since="0.9", source=_VLLM_RENAMES),
        Renamed(
            old="vllm:gpu_prefix_cache_queries_total",
            new="vllm:prefix_cache_queries_total",
            since="0.9",
            source=_VLLM_RENAMES,
        ),
        Renamed(
            old="vllm:gpu_prefix_cache_hits_total",
            new="vllm:prefix_cache_hits_total",
            since="0.9",
            source=_VLLM_RENAMES,
        ),
        Renamed(
            old="vllm:time_per_output_token_seconds",
            new="vllm:inter_token_latency_seconds",
            since="0.11",
            source="vllm/v1/metrics/loggers.py of v0.11 ('Deprecated in 0.11 - Renamed as "
            "vllm:inter_token_latency_seconds')",
        ),
    ),
    # `vllm serve --port` (default 8000): the OpenAI API server serves /metrics on its own port (ledger:
    # vllm.server.metrics-route)
    metrics_port=number("vllm.flag.port"),
    user=ImageUser(
        NONROOT_UID,
        "the image is built from tpu-inference's docker/Dockerfile (python:3.12-slim-bookworm, no USER: root by "
        "default, WORKDIR /workspace; read at tpu-inference v0.27.0: the Dockerfile is not in the 0.29.0 wheel); "
        "the server writes HOME (~/.cache/vllm, ~/.config/vllm, the Hugging Face "
        "config files), /tmp (libtpu logs, tpu-inference's /tmp/lock), /dev/shm and the JAX compile cache "
        "(VLLM_XLA_CACHE_PATH), all emptyDirs here, and the weights mount, which GCS FUSE mounts as this uid",
    ),
    source="[VLLM-TPU] docker/Dockerfile (image), tpu_inference/envs.py (TPU_MULTIHOST_BACKEND), "
    "runner/compilation_manager.py (VLLM_XLA_CACHE_PATH is JAX's compilation cache dir); [VLLM-SRC] "
    "vllm/engine/arg_utils.py (flags and defaults), vllm/v1/metrics/loggers.py (metric names), vllm/envs.py; "
    "[K-VLLM] vllm-hpa.yaml (the HPA's metric as the adapter names it); the ray 2.60.0 wheel's METADATA on PyPI "
    '(the tag: `Requires-Dist: vllm[audio]==0.29.0; extra == "llm"`)',
)


def _vllm_auto(architecture: ModelArchitecture) -> Dtype:
    """`--dtype auto`: a quantized checkpoint's dtype, else bf16 (an fp32 checkpoint is downcast, an fp16 one keeps
    its two bytes): ModelArchitecture.serving_dtype, which cites the ledger rows."""
    return architecture.serving_dtype


VLLM_DTYPES = DtypeRule(
    # --dtype: ModelDType at the pinned release (ledger: vllm.flag.dtype-choices); `bf16` is not one (vLLM refuses it)
    weights={"bfloat16": "bf16", "float16": "fp16", "half": "fp16", "float32": "fp32", "float": "fp32"},
    # --kv-cache-dtype: CacheDType (ledger: vllm.flag.kv-cache-dtype-choices); the others are not sized here
    kv={"auto": None, "float16": "fp16", "bfloat16": "bf16", "fp8": "fp8", "fp8_e4m3": "fp8", "fp8_e5m2": "fp8"},
    # torch_xla's `tpu_int8` is not a method of the tpu-inference image (the --quantization flag's note)
    quantization={"fp8": "fp8"},
    auto=_vllm_auto,
    source="vllm-project/vllm v0.29.0 vllm/config/model.py (ModelDType), vllm/config/cache.py (CacheDType)",
)
"""vLLM TPU's dtype flags as the memory model reads them (catalog/engines/dtypes.py)."""
