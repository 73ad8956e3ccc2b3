"""SGLang-JAX as the engine catalogue knows it, declared in its own folder (descriptor.py `engine`): the pinned
release's record (its server's command, the flags that size it and the pack reads, its user; no metrics), its
traffic-model entry, its HTTP API, the model classes it serves, and the gateway's answer. Shared code collects this
through the registry (catalog/engines/declared.py) and never names the engine.
"""

from __future__ import annotations

from tpu_stacks.catalog.engine_models import likely_class
from tpu_stacks.catalog.engine_traffic import EngineTraffic
from tpu_stacks.catalog.engines.declared import EngineDeclaration, GatewaySupport
from tpu_stacks.catalog.engines.dtypes import DtypeRule
from tpu_stacks.catalog.engines.record import CommandMarker, EngineVersion, Flag, Served
from tpu_stacks.catalog.image_users import NONROOT_UID, ImageUser
from tpu_stacks.catalog.inference_gateway import ServingApi
from tpu_stacks.catalog.model_shape import Dtype, ModelArchitecture
from tpu_stacks.catalog.upstream import number, text
from tpu_stacks.errors import UserError

SGLANG_JAX_VERSION = "0.0.1.post1"
"""SGLang-JAX (github.com/sgl-project/sglang-jax): its newest release on PyPI (sglang-jax 0.0.1 and 0.0.1.post1 are
the releases there). The repository's tags v0.0.3rc0, v0.0.3rc1, v0.0.3rc97 and v0.0.3rc98 are trials of its release
pipeline ("TEMP(experiment)" in .github/workflows/release.yml at v0.0.3rc1) with no wheel on PyPI, and no Docker Hub
tag of lmsysorg/sglang-jax could be confirmed for any release (sgl-project/sglang-jax issue #348, "Support docker
image of release", still open in November 2025): the stack builds the image from the wheel (sglang/image/)."""
SGLANG_WEIGHT_DTYPES: dict[str, Dtype] = {
    "half": "fp16",
    "float16": "fp16",
    "float": "fp32",
    "float32": "fp32",
    "bfloat16": "bf16",
}
"""Its `--dtype` values besides `auto` (ledger: sglang.flag.dtype-choices) and the config `torch_dtype` names it
knows, one table (its _STR_DTYPE_TO_JAX_DTYPE; ledger: sglang.dtype.names)."""


def _served_dtype(architecture: ModelArchitecture) -> Dtype:
    """The dtype SGLang-JAX 0.0.1.post1 holds an unquantized model's weights and KV cache in at `--dtype auto`, its
    default, which the stack keeps: config.json's top-level `torch_dtype` as it is, fp32 when it names none of its
    table; never vLLM's downcast of fp32 to bf16 (ledger: sglang.default.dtype, sglang.dtype.auto-keeps-config,
    sglang.dtype.fp32-without-one, sglang.kv-dtype.auto-is-model). It reads `torch_dtype` only
    (ledger: sglang.dtype.reads-torch-dtype), and its pinned transformers 4.55 fills that from config.json's
    `torch_dtype` key alone (ledger: sglang-jax.requires.transformers, transformers-sglang.config.torch-dtype): a
    config that names only `dtype`, as transformers 5 writes it, is served in fp32. A quantized checkpoint keeps the
    sizing's defaults."""
    if architecture.quantized_dtype is not None:
        return "bf16"
    return SGLANG_WEIGHT_DTYPES.get(architecture.config_torch_dtype or "", "fp32")


SGLANG_DTYPES = DtypeRule(
    weights=SGLANG_WEIGHT_DTYPES,
    # --kv-cache-dtype: auto (the model's dtype) or bf16; its fp8 choices are refused by the model runner
    # (ledger: sglang.kv-dtype.auto-is-model, sglang.kv-dtype.bf16)
    kv={"auto": None, "bf16": "bf16"},
    quantization={},  # no --quantization method is sized: the catalogue knows none this release runs on TPU
    auto=_served_dtype,
    source="sglang-jax 0.0.1.post1 wheel: sgl_jax/srt/server_args.py, sgl_jax/srt/configs/model_config.py, "
    "sgl_jax/srt/model_executor/model_runner.py; transformers 4.55 configuration_utils.py",
)
"""SGLang-JAX's dtype flags as the memory model reads them (catalog/engines/dtypes.py): the plan and the pack."""


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
        Flag(
            name="--dtype",
            meaning="weight_dtype",
            default=text("sglang.default.dtype"),
            note="auto: the config's torch_dtype, fp32 when it names none (SGLANG_DTYPES)",
        ),
        Flag(name="--quantization", meaning="quantization", note="a method the catalogue cannot size is advisory"),
    ),
    # No metrics: sglang-jax 0.0.1.post1 parses --enable-metrics but nothing reads it and no route serves /metrics
    # (sgl_jax/srt/entrypoints/http_server.py registers none; prometheus_client is not a requirement; ledger:
    # sglang.metrics.none). So no metric_prefix, metrics or metrics_port.
    user=ImageUser(
        NONROOT_UID,
        "our image (sglang/image/Dockerfile) sets USER 65532, NONROOT_UID (tests/sglang/test_engine.py checks it); "
        "the server writes only the Hugging Face cache "
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


def check_architecture(model: ModelArchitecture, key: str, value: str) -> None:
    """Refuse a config.json whose class the pinned SGLang-JAX's model registry lacks (it has three)."""
    architecture = model.architecture
    if architecture is None or architecture in SGLANG_ARCHITECTURES:
        return
    close = likely_class(architecture, SGLANG_ARCHITECTURES)
    raise UserError(
        key,
        value,
        f"is a {architecture} (config.json architectures[0]): sglang-jax {SGLANG.version} serves only "
        + ", ".join(SGLANG_ARCHITECTURES),
        (f"did you mean a {close} model? " if close else "") + "serve it with vllm, or pick a Qwen/Qwen3 model",
    )


ENGINE = EngineDeclaration(
    versions=(SGLANG,),
    api=ServingApi(
        engine="sglang",
        openai=True,
        port_flag="--port",
        default_port=number("sglang.flag.port"),
        why="`python -m sgl_jax.launch_server` serves OpenAI's Completions and Chat (/v1/completions, "
        "/v1/chat/completions) beside SGLang's own /generate, and no /metrics (ledger: sglang.route.completions)",
        source="sgl-project/sglang-jax, the sglang-jax 0.0.1.post1 wheel: sgl_jax/srt/entrypoints/http_server.py",
        serves_models=True,
    ),
    # The endpoint picker scores replicas by the Model Server Protocol's queue and KV-cache gauges
    # (vllm/gateway_plan.py MODEL_SERVER_PROTOCOL), which this release does not export (ledger: sglang.metrics.none),
    # and prefill/decode apart needs a KV transfer it does not have (ledger: sglang.disaggregation.none).
    gateway=GatewaySupport(
        fronts=False,
        why=f"sglang-jax {SGLANG_JAX_VERSION} exports no metrics (no /metrics route), and the endpoint picker scores "
        "replicas by their queue and KV-cache gauges; reach it through its Service",
    ),
    # SGLang-JAX pages its KV cache (a token pool behind the radix cache, sgl_jax/srt/mem_cache) like vLLM. Its only
    # published numbers (https://lmsys.org/blog/2025-10-29-sglang-jax) measure a build the post does not pin, on slices
    # it does not fully state: no row here, so no calibration (flagged, never borrowed silently).
    traffic=EngineTraffic(
        sizing_engine="sglang",
        kv_cache="paged",
        # one token a page at the release's default (ledger: sglang.default.page-size), which the stack keeps: no
        # page rounding, where the model's fallback would round to 16. A hand-written server's `--page-size` is not
        # read (as vLLM's `--block-size` is not by the traffic model): it is modelled at the default
        page_tokens=lambda context, sequences: int(number("sglang.default.page-size")),
        builds=(SGLANG,),
        calibrations=(),
        uncalibrated="uncalibrated: no published row measures SGLang-JAX "
        f"{SGLANG.version} (the traffic model has no efficiency for it yet)",
    ),
    check_architecture=check_architecture,
    dtypes=SGLANG_DTYPES,
)
"""SGLang-JAX for the catalogue's shared tables (collected by catalog/engines/declared.py)."""
