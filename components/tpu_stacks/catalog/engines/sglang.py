"""SGLang-JAX at the pinned release: its server's command, the flags that size it, its user; no metrics."""

from __future__ import annotations

from tpu_stacks.catalog.engines.record import CommandMarker, EngineVersion, Flag, Served
from tpu_stacks.catalog.image_users import NONROOT_UID, ImageUser
from tpu_stacks.catalog.upstream import number, text

SGLANG_JAX_VERSION = "0.0.1.post1"
"""SGLang-JAX (github.com/sgl-project/sglang-jax): its newest release on PyPI (sglang-jax 0.0.1 and 0.0.1.post1 are
the releases there). The repository's tags v0.0.3rc0, v0.0.3rc1, v0.0.3rc97 and v0.0.3rc98 are trials of its release
pipeline ("TEMP(experiment)" in .github/workflows/release.yml at v0.0.3rc1) with no wheel on PyPI, and no Docker Hub
tag of lmsysorg/sglang-jax could be confirmed for any release (sgl-project/sglang-jax issue #348, "Support docker
image of release", still open in November 2025): the stack builds the image from the wheel (sglang/image/)."""
SGLANG = EngineVersion(
    engine="sglang",
    version=SGLANG_JAX_VERSION,
    images=("docker.io/lmsysorg/sglang-jax", "lmsysorg/sglang-jax"),
    workload="serve",
    # `python3 -m sgl_jax.launch_server` (sgl_jax/launch_server.py; ledger: sglang.server.module)
    commands=(CommandMarker(contains="sgl_jax.launch_server"),),
    flags=(
        Flag(name="--model-path", meaning="model", aliases=("--model",), note="Hugging Face id or local folder"),
        Flag(
            name="--tp-size",
            meaning="tensor_parallel",
            default="1",
            aliases=("--tensor-parallel-size",),
            note="JAX devices the model is sharded over (ledger: sglang.flag.tp-size)",
        ),
        Flag(
            name="--context-length",
            meaning="context",
            note="absent: the model's own context (config.json), at least the sizing default for catalogued models",
        ),
        Flag(name="--max-running-requests", meaning="max_sequences", note="an upper bound: the KV cache is paged"),
        Flag(
            name="--chunked-prefill-size",
            meaning="prefill_tokens",
            default=str(number("sglang.default.chunked-prefill-size")),
            note="tokens per prefill chunk",
        ),
        Flag(name="--kv-cache-dtype", meaning="kv_dtype", default="auto", note="auto: the model dtype"),
        Flag(name="--dtype", meaning="weight_dtype", default="auto", note="auto: bf16 for the catalogued models"),
        Flag(name="--quantization", meaning="quantization", note="a method the catalogue cannot size is advisory"),
    ),
    # No metrics: sglang-jax 0.0.1.post1 parses --enable-metrics but nothing reads it and no route serves /metrics
    # (sgl_jax/srt/entrypoints/http_server.py registers none; prometheus_client is not a requirement; ledger:
    # sglang.metrics.none). So no metric_prefix, metrics or metrics_port.
    user=ImageUser(
        NONROOT_UID,
        "our image (sglang/image/Dockerfile) sets USER 65532; the server writes only the Hugging Face cache "
        "(--download-dir, HF_HOME) and the JAX compile cache (JAX_COMPILATION_CACHE_DIR), all given writable "
        "volumes [I: not run here]",
    ),
    # The generation its own guides run: the install guide's SkyPilot example asks for `tpu-v6e-4`
    # (docs/get_started/install.md line 52 at tag v0.0.3rc1). Only v6e is offered until another is tried.
    serves=(
        Served(
            generation="v6e",
            source="https://github.com/sgl-project/sglang-jax/blob/v0.0.3rc1/docs/get_started/install.md#L52",
        ),
    ),
    source="sgl-project/sglang-jax sglang-jax 0.0.1.post1 wheel (PyPI): sgl_jax/srt/server_args.py (flags and "
    "defaults), sgl_jax/srt/entrypoints/http_server.py (routes: /health, /health_generate, /v1/completions; no "
    "/metrics), sgl_jax/srt/model_loader/loader.py (huggingface_hub snapshot_download into --download-dir)",
)

SGLANG_ARCHITECTURES = (text("sglang.model.qwen"), text("sglang.model.qwen3"), text("sglang.model.qwen3-moe"))
"""The model classes the pinned release has (config.json `architectures[0]`): its registry's three modules."""
