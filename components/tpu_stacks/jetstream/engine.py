"""JetStream-PyTorch as the engine catalogue knows it, declared in its own folder (descriptor.py `engine`): the
pinned images' records (the flags that size a server and the policy pack reads, the metrics v0.2.3 exports, the user,
the generations they serve), the traffic model's entry (a per-slot KV cache, fitted on the published v5e rows), its
serving API (gRPC behind jetstream-http) and the gateway's answer. Only this workload runs JetStream, so shared code
collects it through the registry (catalog/engines/declared.py) and never names it.
"""

from __future__ import annotations

from tpu_stacks.catalog.engines.declared import EngineDeclaration, GatewaySupport
from tpu_stacks.catalog.engines.record import (
    EngineVersion,
    Flag,
    Served,
    gauges,
)
from tpu_stacks.catalog.engines.serving_api import ServingApi
from tpu_stacks.catalog.engines.traffic_record import Calibration, EngineTraffic
from tpu_stacks.catalog.image_users import NONROOT_UID, ImageUser

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
        metrics=gauges("jetstream_prefill_backlog_size", "jetstream_slots_used_percentage"),
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
"""The pinned images, oldest first: v0.2.3 (the converter flow's `run_server.py`) and v0.2.4 (`jpt serve`)."""

# Fitted by tpu_stacks.traffic.fit (`python -m tpu_stacks.traffic.calibration` prints the table and each row's
# leave-one-out error; tests/traffic/test_calibration.py refits and compares these constants).
JETSTREAM_CALIBRATIONS = (
    Calibration(
        "v5e",
        "JetStream-PyTorch (2024-04 to 2024-07)",
        0.67,
        0.5,
        0.27,
        (
            "jspt-llama3-8b-bf16",
            "jspt-llama3-8b-int8",
            "jspt-llama3-8b-int8-0729",
            "jspt-gemma-7b-bf16",
            "jspt-gemma-7b-int8",
        ),
    ),
)

ENGINE = EngineDeclaration(
    versions=JETSTREAM,
    api=ServingApi(
        engine="jetstream",
        openai=False,
        port_flag=None,
        default_port=None,
        why="JetStream serves gRPC (Orchestrator/Decode); its HTTP front ends take `/generate` (the jetstream-http "
        "image) or `/v1/generate` and `/v1/health` (jetstream/entrypoints/http/api_server.py), not OpenAI's "
        "Completions or Chat, and it exports none of the protocol's gauges",
        source="https://github.com/AI-Hypercomputer/JetStream/blob/07fe623b5637c7e3b17f501a1e4b5ebd04a6ae49/"
        "jetstream/entrypoints/http/api_server.py; [K-JETSTREAM] (jetstream-http `/generate`)",
        serves_models=True,
    ),
    # The endpoint picker needs OpenAI's Completions and Chat and the Model Server Protocol's queue and KV-cache
    # gauges (catalog/inference_gateway.py, v1.5.0 docs/proposals/003-model-server-protocol); v0.2.3 exports two gauges
    # of its own (JETSTREAM[0].metrics) and v0.2.4 none.
    gateway=GatewaySupport(
        fronts=False,
        why="JetStream answers gRPC and jetstream-http's `/generate`, not OpenAI's Completions and Chat, and exports "
        "none of the Model Server Protocol's gauges the endpoint picker scores replicas by; reach it through its "
        "Service",
    ),
    # How JetStream holds the KV cache is [SB] inference.md (a full cache length reserved per slot, the batch fixed by
    # `--batch_size`), as tpu_stacks.sizing counts it; jetstream/plan.py serves one host of a generation its images
    # serve, so no multi-host record.
    traffic=EngineTraffic(
        sizing_engine="jetstream",
        kv_cache="per-slot",
        builds=JETSTREAM,
        calibrations=JETSTREAM_CALIBRATIONS,
        borrowed=(("v4", "v5e"), ("v5p", "v5e"), ("v6e", "v5e"), ("tpu7x", "v5e")),
    ),
)
"""JetStream for the catalogue's shared tables (collected by catalog/engines/declared.py); no model-class check (the
stack serves the models jetstream/models.py names, as the server's flags spell them)."""
