"""What `tpu-stacks bench` asks inference-perf to do: the pinned release, its image and its configuration file.

inference-perf (https://github.com/kubernetes-sigs/inference-perf) is the benchmarking tool of Kubernetes'
wg-serving, the one GKE Inference Quickstart's profiles come from. Every setting below was read in its source at the
pinned release (each names its ledger row; `make upstream` re-reads them in the wheel). Its configuration models
refuse unknown keys, so a misspelt setting fails the run at once (ledger: inference-perf.config.strict):
- `api`: the OpenAI completions API (ledger: inference-perf.api.completion-route), streamed, so time to first token
  is measured (ledger: inference-perf.api.streaming, inference-perf.completion.request-body);
- `server`: type `vllm`, the OpenAI-compatible client both engines answer (ledger: inference-perf.server.type), at
  the stack's Service: `base_url` is required and is the server's root, the API's route is added to it (ledger:
  inference-perf.server.base-url-required, inference-perf.server.base-url); with the served model's name (else the
  client asks GET /v1/models, ledger: inference-perf.vllm-client.models), `ignore_eos` so each request generates
  exactly the tokens asked for (ledger: inference-perf.server.ignore-eos);
- `tokenizer`: the model's, which the vLLM client always loads, from a Hugging Face id or a local directory
  (ledger: inference-perf.vllm-client.tokenizer);
- `data`: `random` prompts, random vocabulary tokens that tokenize to exactly the input length (ledger:
  inference-perf.data.random), of a fixed length and a fixed output length (ledger: inference-perf.distribution.fixed);
- `load`: `poisson` arrivals (the arrivals a queueing model assumes), one stage per request rate, each `duration`
  whole seconds, STAGE_INTERVAL_S apart (ledger: inference-perf.load.stage, inference-perf.load.stage-duration,
  inference-perf.load.poisson, inference-perf.load.interval);
- `report`: the per-stage lifecycle reports bench reads (ledger: inference-perf.report.per-stage), counting output
  tokens as the server reports them (`usage`), as GIQ's output throughput does (ledger:
  inference-perf.report.server-output-tokens); the run's summary for a person reading the log (ledger:
  inference-perf.report.summary); no per-request report, which would carry every prompt and response (ledger:
  inference-perf.report.per-request). Each switch is written even where it is the default: the file says what runs;
- `storage`: the report files under /tmp (an emptyDir; the default, a folder relative to the image's read-only
  /workspace, could not be written: ledger: inference-perf.storage.default-path). The Job's log carries the same
  reports between markers, which is where `bench` reads them (ledger: inference-perf.stdout.stage-markers).
The command is the package's console script with `--config_file` (ledger: inference-perf.cli.config-file).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

INFERENCE_PERF_VERSION = "0.7.0"
"""The pinned release (PyPI `inference-perf`; it needs Python 3.12 and pins transformers==5.13.0)."""
IMAGE = f"quay.io/inference-perf/inference-perf:v{INFERENCE_PERF_VERSION}"
"""The release's image: its release workflow pushes `quay.io/inference-perf/inference-perf:<tag>` for each tag
(kubernetes-sigs/inference-perf .github/workflows/publish-on-release.yml). Built from python:3.12.11-alpine3.22
with the package in /workspace/.venv on PATH and no USER (the repository's Dockerfile): it runs as our non-root
user, which only needs /tmp and HOME writable (the Hugging Face cache under HOME)."""
COMMAND = ["inference-perf", "--config_file"]
"""The console script the package installs (its pyproject's `[project.scripts]`) and its one flag we pass."""
REPORTS_DIR = "/tmp/reports"
STAGE_DURATION_S = 120
DEFAULT_RATES = (1.0, 2.0, 4.0, 8.0)
"""Requests per second of each stage: a doubling sweep, widened with `--rates` to reach the server's limit."""
STAGE_INTERVAL_S = 5.0
"""Seconds between stages (inference-perf's `load.interval`), so one stage's tail does not overlap the next."""


@dataclass(frozen=True)
class Workload:
    """The request shape and the sweep: fixed prompt and output lengths, one stage per rate."""

    rates: tuple[float, ...]
    input_tokens: int
    output_tokens: int
    duration_s: int = STAGE_DURATION_S


def _fixed(tokens: int) -> dict[str, Any]:
    return {"type": "fixed", "min": tokens, "max": tokens, "mean": tokens, "std_dev": 0}


def inference_perf_config(base_url: str, model: str, tokenizer: str, workload: Workload) -> dict[str, Any]:
    """The configuration file's document (inference-perf's `Config`, whose models refuse unknown keys)."""
    return {
        "api": {"type": "completion", "streaming": True},
        "server": {"type": "vllm", "model_name": model, "base_url": base_url, "ignore_eos": True},
        "tokenizer": {"pretrained_model_name_or_path": tokenizer},
        "data": {
            "type": "random",
            "input_distribution": _fixed(workload.input_tokens),
            "output_distribution": _fixed(workload.output_tokens),
        },
        "load": {
            "type": "poisson",
            "interval": STAGE_INTERVAL_S,
            "stages": [{"rate": rate, "duration": workload.duration_s} for rate in workload.rates],
        },
        "report": {
            "request_lifecycle": {
                "summary": True,
                "per_stage": True,
                "per_request": False,
                "use_server_output_tokens": True,
            },
        },
        "storage": {"local_storage": {"path": REPORTS_DIR}},
    }
