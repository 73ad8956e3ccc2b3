"""The engine catalogue: per serving or training engine and pinned version, which container flags
size the workload and which metrics the engine exports, as frozen typed data with their sources.

Why: the policy pack must judge programs it did not write. A raw vLLM Deployment carries no
`tpu-stacks.dev/*` annotations, but its own arguments say what it serves (`--model`,
`--max-model-len`, ...); an HPA names the metric it scales on. This module is the one place that
says what those flags mean and which metric names exist, per engine version the components pin,
so the vLLM component's HPA and the pack's checks read the same list.

Sources, per entry (`source`): the tutorials' manifests ([K-VLLM], [K-JETSTREAM], [K-JETSTREAM-CONV],
[K-RAY]; keys resolve in docs/sources.md), the engines' own source at the pinned version, and the engines' docs.
Metric names are given as Managed Prometheus stores them: `prometheus.googleapis.com/<name>/<kind>`,
which the Custom Metrics Stackdriver Adapter spells `prometheus.googleapis.com|<name>|<kind>`
([K-VLLM] vllm-hpa.yaml). A Prometheus counter is exported with `_total` appended.
"""

from __future__ import annotations

import re
from typing import Literal

from pydantic import BaseModel, ConfigDict

from tpu_stacks.catalog.image_users import HELPER_IMAGE_USERS, NONROOT_UID, ImageUser
from tpu_stacks.catalog.ray_serve import RAY_LLM_VLLM, RAY_SERVE_VERSION
from tpu_stacks.catalog.upstream import number, text

MetricKind = Literal["gauge", "counter", "histogram"]
Meaning = Literal[
    "model",
    "model_name",
    "model_size",
    "tensor_parallel",
    "context",
    "input_length",
    "output_length",
    "batch",
    "max_sequences",
    "prefill_tokens",
    "kv_dtype",
    "weight_dtype",
    "quantization",
    "quantize_weights",
    "quantize_kv_cache",
    "per_device_batch",
    "parallelism",
]
MANAGED_PROMETHEUS_PREFIX = "prometheus.googleapis.com"


class Flag(BaseModel):
    """One container flag that sizes the workload."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    name: str
    """As written: `--max-model-len` (vLLM, JetStream) or `max_target_length` (a MaxText key=value)."""
    meaning: Meaning
    """What the sizing code reads it as."""
    default: str | None = None
    """The engine's default when the flag is absent (None: no default the sizing can use)."""
    aliases: tuple[str, ...] = ()
    """Other spellings the engine accepts (vLLM's `-q` for `--quantization`); the name wins when both are given."""
    note: str = ""


class Metric(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")

    name: str
    """The exported name (counters with `_total`)."""
    kind: MetricKind

    @property
    def managed_prometheus(self) -> str:
        """The name the Custom Metrics Stackdriver Adapter serves it under (an HPA's metric name)."""
        return f"{MANAGED_PROMETHEUS_PREFIX}|{self.name}|{self.kind}"


class Served(BaseModel):
    """A TPU generation an engine version is known to serve, and its own name for it where it needs one."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    generation: str
    """The catalogue's name (catalog/tpu.py); tests/catalog/test_engines.py checks it is one."""
    platform: str | None = None
    """The engine's name for the generation (Saxml's `--platform_chip`, Ray's accelerator type)."""
    source: str


class Renamed(BaseModel):
    """A metric the engine exported under another name before the pinned version (a user's old HPA or query)."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    old: str
    new: str
    since: str
    """The engine version that deprecated the old name (it was hidden, then removed, after it)."""
    source: str


class CommandMarker(BaseModel):
    """One way a container's command shows that it runs this engine (for a raw workload whose image is not
    catalogued): `contains` is text of its command line (the arguments joined by spaces); `program` a token that
    ends with it, followed by the token `then` when one is given."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    contains: str | None = None
    program: str | None = None
    then: str | None = None

    def marks(self, tokens: list[str]) -> bool:
        """Whether the command's tokens carry this marker."""
        if self.contains is not None and self.contains in " ".join(tokens):
            return True
        if self.program is None:
            return False
        if self.then is None:
            return any(t.endswith(self.program) for t in tokens)
        return any(t.endswith(self.program) and n == self.then for t, n in zip(tokens, tokens[1:], strict=False))


EngineName = Literal["vllm", "jetstream", "maxtext", "saxml", "ray", "epp", "sglang"]
"""The catalogued engines, for the type checker (a test checks it against `ENGINES`)."""


class EngineVersion(BaseModel):
    """One engine at one pinned version."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    engine: EngineName
    version: str
    """The image tag or source revision the components pin."""
    images: tuple[str, ...]
    """Image repositories (no tag) that run this engine; a raw workload is recognised by them."""
    flags: tuple[Flag, ...] = ()
    metric_prefix: str | None = None
    """Every metric this engine exports starts with it; None when no metrics are catalogued."""
    metrics: tuple[Metric, ...] = ()
    metrics_source: str | None = None
    """Where the metric names of this version are defined (a URL at the pinned revision where one exists)."""
    renamed: tuple[Renamed, ...] = ()
    """Metric names earlier versions exported that this one exports under a new name only."""
    metrics_port: int | None = None
    """The port its pods serve Prometheus metrics on, `/metrics` (None: it serves none at this version)."""
    user: ImageUser | None = None
    """Who its image runs as (k8s/security.harden applies it); None: it runs in another engine's image."""
    serves: tuple[Served, ...] | None = None
    """The TPU generations it is known to serve; None: every catalogued generation."""
    workload: Literal["serve", "train"] | None = None
    """What it runs: a model server or a trainer (None: neither, e.g. Ray's own or the endpoint picker's)."""
    arguments: Literal["flags", "settings"] = "flags"
    """How its container arguments are written: `--flag value` / `--flag=value`, or MaxText's `key=value`."""
    commands: tuple[CommandMarker, ...] = ()
    """How a container's command shows it runs this engine when its image is not catalogued."""
    model_after: str | None = None
    """The subcommand whose next argument is the model when no model flag is given (`vllm serve <model>`)."""
    source: str

    @property
    def served_generations(self) -> tuple[str, ...] | None:
        """The generations' names, in catalogue order as written (None: all of them)."""
        return None if self.serves is None else tuple(s.generation for s in self.serves)

    def serves_generation(self, name: str) -> bool:
        return self.serves is None or any(s.generation == name for s in self.serves)

    def platform(self, generation_name: str) -> str | None:
        """The engine's own name for a generation (None when it names none or does not serve it)."""
        return next((s.platform for s in self.serves or () if s.generation == generation_name), None)

    def image_user(self) -> ImageUser:
        """`user` for a pod that runs this engine's own image (ValueError when it has none)."""
        if self.user is None:
            raise ValueError(f"{self.engine} {self.version} has no image of its own")
        return self.user

    def scrape_port(self) -> int:
        """`metrics_port` where the caller knows the engine exports metrics (ValueError otherwise)."""
        if self.metrics_port is None:
            raise ValueError(f"{self.engine} {self.version} serves no metrics")
        return self.metrics_port

    def flag(self, meaning: Meaning) -> Flag | None:
        return next((f for f in self.flags if f.meaning == meaning), None)

    def metric(self, name: str) -> Metric | None:
        return next((m for m in self.metrics if m.name == name), None)

    def renamed_to(self, name: str) -> Renamed | None:
        """The rename of an old metric name this version no longer exports (None: never renamed)."""
        return next((r for r in self.renamed if r.old == name), None)


def _gauges(*names: str) -> tuple[Metric, ...]:
    return tuple(Metric(name=n, kind="gauge") for n in names)


def _counters(*names: str) -> tuple[Metric, ...]:
    return tuple(Metric(name=n, kind="counter") for n in names)


def _histograms(*names: str) -> tuple[Metric, ...]:
    return tuple(Metric(name=n, kind="histogram") for n in names)


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
        *_gauges(
            "vllm:num_requests_running",
            "vllm:num_requests_waiting",
            "vllm:num_requests_waiting_by_reason",
            "vllm:engine_sleep_state",
            "vllm:kv_cache_usage_perc",
            "vllm:cache_config_info",
            "vllm:lora_requests_info",
        ),
        *_counters(
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
        *_histograms(
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

_JETSTREAM_FLAGS = (
    Flag(name="--model_name", meaning="model_name", note="with --size: gemma 7b, llama-3 8b (converter flow)"),
    Flag(name="--size", meaning="model_size", default="tiny"),
    Flag(name="--model_id", meaning="model", note="`jpt serve` (v0.2.4): the Hugging Face id"),
    Flag(name="--batch_size", meaning="batch", default="32"),
    Flag(name="--override_batch_size", meaning="batch", note="`jpt serve` (v0.2.4)"),
    Flag(name="--max_cache_length", meaning="context", default="1024"),
    Flag(name="--max_input_length", meaning="input_length", default="1024", note="`jpt serve` (v0.2.4)"),
    Flag(name="--max_output_length", meaning="output_length", default="1024", note="`jpt serve` (v0.2.4)"),
    Flag(name="--quantize_weights", meaning="quantize_weights", default="False", note="True: int8 weights"),
    Flag(name="--quantize_kv_cache", meaning="quantize_kv_cache", default="False", note="True: int8 KV cache"),
)

JETSTREAM_METRICS_FLAG = "--prometheus_port"
"""v0.2.3's `run_server.py` flag (default 0: no metrics server); JetStream's `server_lib.run` then starts
prometheus_client's HTTP server on that port, which answers every path, `/metrics` included."""

JETSTREAM_USER = ImageUser(
    NONROOT_UID,
    "AI-Hypercomputer/jetstream-pytorch docker files set no USER; the server writes HOME, /tmp, the "
    "compile cache and (download flow) the weights directory, all emptyDirs here [I: not run here]",
)
# The TPU generations the pinned images are known to serve. GKE's JetStream-PyTorch tutorial and every
# upstream manifest ([K-JETSTREAM], [K-JETSTREAM-CONV]: `tpu-v5-lite-podslice`, ct5lp-hightpu-8t)
# run on v5e, and upstream's README only describes a v5e-8 VM. The v0.2.x images were built in 2024,
# before TPU7x (Ironwood); upstream was archived on 1 Feb 2026, so no later build will add it. Widen
# this only with a source that shows these images serving another generation.
JETSTREAM_SERVES = (
    Served(
        generation="v5e",
        source="[K-JETSTREAM], [K-JETSTREAM-CONV] (tpu-v5-lite-podslice, ct5lp-hightpu-8t); "
        "jetstream-pytorch README (v5e-8)",
    ),
)

JETSTREAM = (
    EngineVersion(
        engine="jetstream",
        version="v0.2.3",
        images=("us-docker.pkg.dev/cloud-tpu-images/inference/jetstream-pytorch-server",),
        workload="serve",
        flags=_JETSTREAM_FLAGS,
        metric_prefix="jetstream_",
        # jetstream-pytorch jetstream-v0.2.3 (dccd68a9) run_server.py defines `--prometheus_port` (default 0, off);
        # its deps/JetStream submodule is AI-Hypercomputer/JetStream 26872c3c (2024-06-12), whose
        # jetstream/core/metrics/prometheus.py defines exactly these two gauges (labels `id`, and `idx` for slots).
        # Later JetStream (TTFT, TPOT histograms, jetstream_request_success_count...) is not in this image.
        metrics=_gauges("jetstream_prefill_backlog_size", "jetstream_slots_used_percentage"),
        metrics_source="https://github.com/AI-Hypercomputer/JetStream/blob/26872c3c/jetstream/core/metrics/prometheus.py",
        # The value we give `--prometheus_port` (default 0: off): the port JetStream's observability doc uses.
        metrics_port=9090,
        user=JETSTREAM_USER,
        serves=JETSTREAM_SERVES,
        source="[K-JETSTREAM-CONV] (args, jetstream_pt/config.py defaults at jetstream-v0.2.3 fa1f1206); "
        "github.com/AI-Hypercomputer/jetstream-pytorch run_server.py @ jetstream-v0.2.3 (--prometheus_port) and "
        "github.com/AI-Hypercomputer/JetStream jetstream/core/metrics/prometheus.py @ 26872c3c (metric names)",
    ),
    EngineVersion(
        engine="jetstream",
        version="v0.2.4",
        images=("us-docker.pkg.dev/cloud-tpu-images/inference/jetstream-pytorch-server",),
        workload="serve",
        flags=_JETSTREAM_FLAGS,
        user=JETSTREAM_USER,
        serves=JETSTREAM_SERVES,
        source="[K-JETSTREAM] (`jpt serve` flags, jetstream_pt/cli.py at jetstream-v0.2.4 a12698d3); "
        "that cli.py passes `metrics_server_config=None` to server_lib.run and has no metrics flag, so `jpt serve` "
        "exports no Prometheus metrics and none are catalogued",
    ),
)

MAXTEXT_CONFIG_SUFFIX = "configs/base.yml"
"""MaxText's first argument is its base config; a container running it is recognised by this path."""

MAXTEXT = EngineVersion(
    engine="maxtext",
    version="404cf1de701460671c4924521a70f07f26aa7d1c",  # raytrain/spec.py MAXTEXT_REVISION
    images=(),  # built by the user (raytrain/trainer_image): recognised by its base.yml argument instead
    workload="train",
    arguments="settings",
    # `python3 -m MaxText.train src/MaxText/configs/base.yml key=value ...` ([K-RAY])
    commands=(CommandMarker(program=MAXTEXT_CONFIG_SUFFIX), CommandMarker(contains="MaxText.train")),
    flags=(
        Flag(name="model_name", meaning="model", note="MaxText model config name, e.g. llama3-8b"),
        Flag(name="per_device_batch_size", meaning="per_device_batch", default="12"),
        Flag(name="max_target_length", meaning="context", default="2048"),
        Flag(name="weight_dtype", meaning="weight_dtype", default="float32"),
        Flag(name="ici_<axis>_parallelism", meaning="parallelism", note="the mesh inside one slice"),
    ),
    source="AI-Hypercomputer/maxtext src/MaxText/configs/base.yml (keys and defaults; read at stored commit "
    "003b4169, later than the pin: per_device_batch_size 12.0, max_target_length 2048, weight_dtype float32); "
    "[K-RAY] (the tutorial's key=value arguments)",
)

SAXML = EngineVersion(
    engine="saxml",
    version="v1.1.0",
    images=("us-docker.pkg.dev/cloud-tpu-images/inference/sax-model-server",),
    workload="serve",
    user=ImageUser(
        NONROOT_UID,
        "google/saxml saxml/tools/docker/Dockerfile.* set no USER; the servers write only /tmp and HOME "
        "(the sax root and checkpoints are on GCS, through the API) [I: not run here]",
    ),
    # --platform_chip values known to the model server (google/saxml model_service_main.py @ v1.1.0, [SAX-IMAGES]).
    serves=(
        Served(
            generation="v5e", platform="tpuv5e", source="google/saxml model_service_main.py @ v1.1.0 ([SAX-IMAGES])"
        ),
    ),
    source="[K-SAX] sax-model-server-set: the model server's arguments name the cell, not the model; the model path "
    "is published later (saxutil publish), so nothing sizes a raw Saxml server from its container. No metrics: "
    "github.com/google/saxml @ v1.1.0 (70f314c7) starts no Prometheus endpoint (prometheus-client appears only as a "
    "pinned transitive requirement), so a Saxml dashboard shows GKE's system metrics only",
)

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

RAY = EngineVersion(
    engine="ray",
    version="2.49.1",  # the tutorial's Ray ([K-RAY]); raytrain/spec.py RAY_VERSION reads it here
    images=(),  # the trainer image is built by the user (raytrain/trainer_image) FROM rayproject/ray:2.49.1-py312
    metric_prefix="ray_",
    # Ray Train v2 (the JaxTrainer the tutorial runs) exports its controller state and worker-group timings
    # (doc/source/train/user-guides/monitor-your-application.rst, python/ray/train/v2/_internal/metrics/);
    # Ray Core's node gauges come from python/ray/dashboard/modules/reporter/reporter_agent.py. Every Ray
    # pod serves them on KubeRay's default metrics port 8080 (container port `metrics`; ledger: kuberay.port.metrics,
    # kuberay.port-name.metrics). MaxText's step time
    # is not a Prometheus metric: it is the `completed step: N, seconds: S, ...` log line (gcp/monitoring).
    metrics=(
        *_gauges(
            "ray_train_controller_state",
            "ray_train_worker_group_start_total_time_s",
            "ray_train_worker_group_shutdown_total_time_s",
            "ray_train_report_total_blocked_time_s",
            "ray_node_cpu_utilization",
            "ray_node_mem_used",
            "ray_node_mem_total",
        ),
    ),
    metrics_source="https://docs.ray.io/en/releases-2.49.1/train/user-guides/monitor-your-application.html",
    # KubeRay's `--metrics-export-port` on every Ray node (Ray's own default is a random port); the names carry Ray's
    # namespace (ledger: ray-train.metrics.namespace).
    metrics_port=number("kuberay.port.metrics"),
    user=ImageUser(
        1000,  # upstream's multi-slice mount options use uid=1000,gid=1000
        "rayproject/ray images run as USER ray (uid 1000, [K-RAY] Dockerfile); below 10000, but the "
        "image's conda lives in /home/ray, owned by that uid",
        home="/home/ray",
        login="ray",
    ),
    # Ray's accelerator type per generation (ray.util.accelerators, Ray 2.49); Ray names no tpu7x type. ledger:
    # ray-train.accelerator-type.v4, ray-train.accelerator-type.v5e, ray-train.accelerator-type.v5p,
    # ray-train.accelerator-type.v6e.
    serves=tuple(
        Served(
            generation=generation,
            platform=text(f"ray-train.accelerator-type.{generation}"),
            source="ray.util.accelerators (Ray 2.49)",
        )
        for generation in ("v4", "v5e", "v5p", "v6e")
    ),
    source="github.com/ray-project/ray doc/source/train/user-guides/monitor-your-application.rst (Ray Train "
    "metrics) and python/ray/dashboard/modules/reporter/reporter_agent.py (node gauges), Ray 2.49 docs; "
    "[K-RAY] (rayproject/ray:2.49.1-py312)",
)

RAY_METRIC_NAMESPACE = text("ray.metrics.namespace")
"""Ray's Prometheus namespace: its metrics agent exports every metric as `ray_<name>` (Ray 2.60.0
python/ray/_private/telemetry/open_telemetry_metric_recorder.py `NAMESPACE`, metrics_agent.py), and a counter
with `_total` appended (the OpenMetrics rule prometheus_client applies)."""


def through_ray(metric: Metric) -> Metric:
    """The name a vLLM metric is exported under when Ray Serve LLM runs the engine (`log_engine_metrics`, on by
    default from Ray 2.51): vLLM's RayPrometheusStatLogger registers each metric with Ray after replacing every
    character outside [a-zA-Z0-9_] by `_` (vllm/v1/metrics/ray_wrappers.py `_get_sanitized_opentelemetry_name`),
    and Ray prefixes its namespace, so `vllm:kv_cache_usage_perc` is `ray_vllm_kv_cache_usage_perc` and the counter
    `vllm:prompt_tokens_total` is `ray_vllm_prompt_tokens_total` (the names Ray's own Serve LLM Grafana dashboard
    queries: python/ray/dashboard/modules/metrics/dashboards/serve_llm_dashboard_panels.py, Ray 2.60.0). ledger:
    vllm.metrics.ray-name, ray.serve-llm.log-engine-metrics."""
    return Metric(name=f"{RAY_METRIC_NAMESPACE}_{re.sub(r'[^a-zA-Z0-9_]', '_', metric.name)}", kind=metric.kind)


RAY_SERVE = EngineVersion(
    engine="ray",
    # The Ray that serves multi-host vLLM TPU (Ray Serve LLM on KubeRay). The GKE sample installs a Ray master wheel
    # ([K-RAY-SERVE-TPU] Dockerfile); Ray's TPU guide asks for "a released Ray version ... that contains TPU topology
    # support". Every name below was read in the ray-2.60.0 wheel from PyPI (python/ray/serve/_private/).
    version=RAY_SERVE_VERSION,  # catalog/ray_serve.py: one pin for the image, the serve config schema and these names
    images=(),  # ray[serve] is installed into the vLLM TPU image (vllm/ray_serve_image; the engine image user applies)
    metric_prefix="ray_",
    metrics=(
        # Serve's HTTP proxy (request_ingress_metrics.py: `serve_num_{http}_requests` ...; tags route, method,
        # application, status_code / error_code) and its replicas, routers and controller (replica.py, router.py,
        # deployment_state.py, autoscaling_state.py).
        *_counters(
            "ray_serve_num_http_requests_total",
            "ray_serve_num_http_error_requests_total",
            "ray_serve_num_deployment_http_error_requests_total",
            "ray_serve_deployment_request_counter_total",
            "ray_serve_deployment_error_counter_total",
            "ray_serve_deployment_replica_starts_total",
        ),
        *_gauges(
            "ray_serve_num_ongoing_http_requests",
            "ray_serve_deployment_replica_healthy",
            "ray_serve_replica_processing_queries",
            "ray_serve_deployment_queued_queries",
            "ray_serve_num_ongoing_requests_at_replicas",
            "ray_serve_autoscaling_target_replicas",
            "ray_serve_autoscaling_desired_replicas",
            # the deployment's state, a number per state (ledger: ray.serve.metric.deployment-status)
            "ray_serve_deployment_status",
        ),
        *_histograms(
            "ray_serve_http_request_latency_ms",
            "ray_serve_deployment_processing_latency_ms",
            "ray_serve_replica_startup_latency_ms",
        ),
        # The pinned vLLM's own metrics, as Ray exports them (one list: VLLM's, renamed by `through_ray`).
        *(through_ray(m) for m in VLLM.metrics),
    ),
    metrics_source="https://docs.ray.io/en/releases-2.60.0/serve/monitoring.html",
    metrics_port=number("kuberay.port.metrics"),  # KubeRay's DefaultMetricsPort (container port `metrics`)
    # Ray Serve LLM's `accelerator_type` per generation: ray/util/accelerators/accelerators.py in the ray-2.60.0
    # wheel names TPU-V4, TPU-V5LITEPOD, TPU-V5P, TPU-V6E and TPU-V7X. tpu7x is not offered: Ray Serve LLM
    # counts tensor x pipeline parallelism in chips, our sizing in JAX devices (two per tpu7x chip), and nothing
    # here checks which the engine reads on a multi-host tpu7x slice.
    # ledger: ray.accelerator-type.v4, ray.accelerator-type.v5e, ray.accelerator-type.v5p, ray.accelerator-type.v6e.
    serves=tuple(
        Served(
            generation=generation,
            platform=text(f"ray.accelerator-type.{generation}"),
            source="ray/util/accelerators/accelerators.py (Ray 2.60.0)",
        )
        for generation in ("v4", "v5e", "v5p", "v6e")
    ),
    source="github.com/ray-project/ray @ ray-2.60.0: python/ray/serve/_private/request_ingress_metrics.py, replica.py, "
    "router.py, deployment_state.py, autoscaling_state.py (Serve metric names, kinds and tags), "
    "python/ray/llm/_internal/serve/core/configs/llm_config.py (`log_engine_metrics`, default True) and "
    "engines/vllm/vllm_engine.py (RayPrometheusStatLogger); doc/source/serve/monitoring.md and "
    "doc/source/serve/llm/user-guides/observability.md; vllm-project/vllm vllm/v1/metrics/ray_wrappers.py",
)
"""Ray Serve's metrics and the engine's metrics exported through Ray: what a multi-host vLLM stack (a RayService)
is watched by. Its pods serve them on every Ray node's metrics port, not on the vLLM API port."""

EPP_REPOSITORY = "https://github.com/kubernetes-sigs/gateway-api-inference-extension"
EPP = EngineVersion(
    engine="epp",
    # The last release that builds the endpoint picker in this repository (v1.6.0 keeps only the API and a
    # lightweight picker; llm-d's GKE guide pins GAIE_VERSION=v1.5.0, https://llm-d.ai/docs/resources/gateway/gke).
    version="v1.5.0",
    images=("registry.k8s.io/gateway-api-inference-extension/epp",),
    metric_prefix="inference_",
    # pkg/epp/metrics/metrics.go @ v1.5.0: subsystems inference_objective, inference_pool, inference_extension,
    # no namespace; the pool gauges are labelled `name` (the pool), the objective series `model_name`.
    metrics=(
        *_gauges(
            "inference_pool_average_kv_cache_utilization",
            "inference_pool_average_queue_size",
            "inference_pool_average_running_requests",
            "inference_pool_ready_pods",
            "inference_objective_running_requests",
            # Flow Control (only with the flowControl gate: ledger: epp.metric.flow-control-queue-size,
            # epp.metric.flow-control-queue-duration).
            "inference_extension_flow_control_queue_size",
        ),
        *_counters(
            "inference_objective_request_total",
            "inference_objective_request_error_total",
            "inference_extension_scheduler_attempts_total",
        ),
        *_histograms(
            "inference_objective_request_duration_seconds",
            "inference_extension_scheduler_e2e_duration_seconds",
            "inference_extension_flow_control_request_queue_duration_seconds",
        ),
    ),
    metrics_source=f"{EPP_REPOSITORY}/blob/v1.5.0/pkg/epp/metrics/metrics.go",
    metrics_port=number("epp.port.metrics"),  # `--metrics-port` default (pkg/epp/server/options.go @ v1.5.0)
    user=ImageUser(
        NONROOT_UID,
        "the epp Dockerfile @ v1.5.0 builds FROM gcr.io/distroless/static:nonroot (USER nonroot, 65532); "
        "the picker writes nothing but a self-signed certificate it keeps in memory",
        login="nonroot",
    ),
    source=f"{EPP_REPOSITORY} @ v1.5.0: pkg/epp/server/options.go (flags, ports 9002/9003/9090), "
    "config/charts/epplib (Deployment, RBAC), pkg/epp/metrics/metrics.go (metric names)",
)
"""GKE Inference Gateway's endpoint picker: not a model server, but a pod whose image the plan pins and
whose Prometheus metrics the vLLM dashboard draws (catalog/inference_gateway.py holds its other facts)."""

ROUTER_REPOSITORY = "https://github.com/llm-d/llm-d-router"
ROUTER = EngineVersion(
    engine="epp",
    # llm-d's router, where the endpoint picker continued after gateway-api-inference-extension v1.5.0 (its
    # Makefile @ v0.10.0: EPP_IMAGE_NAME llm-d-router-endpoint-picker, IMAGE_REGISTRY ghcr.io/llm-d).
    version="v0.10.0",
    images=("ghcr.io/llm-d/llm-d-router-endpoint-picker",),
    metric_prefix="llm_d_epp_",
    # pkg/epp/metrics/llm_d_router_metrics.go @ v0.10.0: subsystem llm_d_epp (the inference_* names remain, marked
    # "[Deprecated: Use llm_d_epp_...]"); the prefix indexer's hit ratio is the approximate prefix producer's
    # (pkg/epp/framework/plugins/requestcontrol/dataproducer/approximateprefix/metrics.go).
    metrics=(
        *_gauges(
            "llm_d_epp_average_kv_cache_utilization",
            "llm_d_epp_average_queue_size",
            "llm_d_epp_average_running_requests",
            "llm_d_epp_ready_endpoints",
            "llm_d_epp_request_running",
            "llm_d_epp_flow_control_queue_size",
        ),
        *_counters(
            "llm_d_epp_request_total",
            "llm_d_epp_request_error_total",
            "llm_d_epp_scheduler_attempts_total",
        ),
        *_histograms(
            "llm_d_epp_request_duration_seconds",
            "llm_d_epp_scheduler_e2e_duration_seconds",
            "llm_d_epp_flow_control_request_queue_duration_seconds",
            "llm_d_epp_prefix_indexer_hit_ratio",
        ),
    ),
    metrics_source=f"{ROUTER_REPOSITORY}/blob/v0.10.0/pkg/epp/metrics/llm_d_router_metrics.go",
    metrics_port=number("router.port.metrics"),  # `--metrics-port` default (pkg/epp/server/options.go @ v0.10.0)
    user=ImageUser(
        NONROOT_UID,
        "Dockerfile.epp @ v0.10.0 ends `USER 65532:65532`; the picker writes nothing but a self-signed certificate "
        "it keeps in memory",
        login="nonroot",
    ),
    source=f"{ROUTER_REPOSITORY} @ v0.10.0: pkg/epp/server/options.go (flags, ports 9002/9003/9090), "
    "config/charts/routerlib (Deployment, RBAC), pkg/epp/metrics/llm_d_router_metrics.go (metric names)",
)
"""llm-d's router (the endpoint picker's successor): the default picker of `vllm.gateway` (catalog/pickers.py)."""

ENGINES: tuple[EngineVersion, ...] = (VLLM, *JETSTREAM, MAXTEXT, SAXML, RAY, RAY_SERVE, EPP, ROUTER, SGLANG)


def image_repository(image: str) -> tuple[str, str]:
    """`repo`, `tag` of an image reference (digest dropped, tag may be empty)."""
    reference = image.split("@", 1)[0]
    last = reference.rsplit("/", 1)[-1]
    if ":" in last:
        repo, _, tag = reference.rpartition(":")
        return repo, tag
    return reference, ""


def engine_of_image(image: str) -> EngineVersion | None:
    """The catalogued engine an image runs: the pinned version when the tag matches, else the newest entry."""
    repo, tag = image_repository(image)
    matches = [
        e for e in ENGINES if repo in e.images or any(repo.endswith(f"/{i.rsplit('/', 1)[-1]}") for i in e.images)
    ]
    if not matches:
        return None
    return next((e for e in matches if e.version == tag), matches[-1])


def engine(name: str) -> EngineVersion:
    """The newest catalogued version of an engine."""
    return [e for e in ENGINES if e.engine == name][-1]


def trains(name: str) -> bool:
    """Whether the catalogued engine of this name is a trainer (False: a server, or no engine has the name)."""
    return any(e.engine == name and e.workload == "train" for e in ENGINES)


def engine_of_command(tokens: list[str]) -> EngineVersion | None:
    """The first catalogued engine (in `ENGINES` order) whose command markers the container's tokens carry."""
    return next((e for e in ENGINES if any(m.marks(tokens) for m in e.commands)), None)


def image_users() -> dict[str, ImageUser]:
    """Who every pinned image runs as, by family: the engines' (from their records) and the helper images'."""
    return {**{e.engine: e.user for e in ENGINES if e.user is not None}, **HELPER_IMAGE_USERS}


def metric_owner(metric_name: str) -> EngineVersion | None:
    """The engine whose metric prefix the name carries (only engines with catalogued metrics)."""
    return next((e for e in ENGINES if e.metric_prefix and metric_name.startswith(e.metric_prefix)), None)


def managed_prometheus_name(engine_version: EngineVersion, metric_name: str) -> str:
    """The HPA metric name of a catalogued metric; KeyError when the engine does not export it."""
    metric = engine_version.metric(metric_name)
    if metric is None:
        raise KeyError(metric_name)
    return metric.managed_prometheus
