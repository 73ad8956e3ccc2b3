"""Published serving measurements on Cloud TPU, one sourced row each: what the traffic model is calibrated on.

Why: a throughput figure the project predicts is only worth as much as its error against what engines
really did, so the rows it is checked on live here, with where each was published. The traffic sizer
(tpu_stacks.traffic) reports a candidate as `measured` when a row matches it (same engine at the version the
catalogue pins, model, generation, chips and weight dtype, input and output lengths within a factor of two),
and docs/sizing-for-traffic.md states the model's error on every row (tests/traffic/test_calibration.py keeps
that table equal to the model's output, so it cannot drift).

What a row is: the engine and its build, the model (a catalogue name), the slice, the dtypes, the request
lengths, the concurrency (None when the engine's scheduler chose it under a cap given in `note`), and the
output tokens per second the whole slice produced. Latencies are kept only where they describe the
steady state at that load (a benchmark that sends every request at once measures its queue, not the server).

No row here measures a pinned build (`engine_version` is None on every row): the JetStream rows ran
JetStream-PyTorch builds of April to July 2024 named by date, not the v0.2.3/v0.2.4 images the JetStream stacks
pin, and the vLLM row ran vLLM's PyTorch/XLA backend, which the pinned vLLM TPU image (built on tpu-inference,
a JAX backend vLLM calls faster: https://blog.vllm.ai/2025/10/16/vllm-tpu.html) replaced. They calibrate the
model; a stack's figure is `measured` only from a row of its own build, or `profile` from a GIQ profile.

Sources (read 2026-11-26):
- JetStream-PyTorch benchmark summary ([JSPT-BENCH]): TPU v5e-8, ShareGPT, max input and output
  length 1024, cache length 2048, "throughput (token/s)" per model, dtype and batch size. Read here as
  output tokens per second: JetStream's benchmark_serving.py prints input and output token throughput
  apart (PR 83 below) and the summary names one throughput; that reading is an assumption, not stated there.
- The ShareGPT request lengths that benchmark sends are not in the summary; JetStream's own run of the same
  script on Llama 3 (AI-Hypercomputer/JetStream pull request 83, 2024-05-17) sent 214,914 input and 415,416
  output tokens over 1,780 requests: 121 and 233 tokens on average, used here for every JetStream row.
- vLLM pull request 16458 ("Increase block size and reset block shapes" for TPU, 2025-04-11): TPU v6e-1,
  meta-llama/Llama-3.1-8B-Instruct, `--max-model-len 2048 --max_num_seqs 512 --gpu-memory-utilization 0.95`,
  random dataset 1,800 input / 128 output tokens, "Output token throughput (tok/s): 945.80" (the "Before" run;
  its TTFT of 61 s is the queue of 1,000 requests sent at once, so no latency is kept).
"""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field

JETSTREAM_PYTORCH_SUMMARY = (
    "https://github.com/AI-Hypercomputer/jetstream-pytorch/blob/2ba0dd8bd3725d8ec6173261ab0016f9f336eeb8/"
    "benchmarks/summary.md"
)
JETSTREAM_SHAREGPT_LENGTHS = "https://github.com/AI-Hypercomputer/JetStream/pull/83"
VLLM_TPU_V6E_8B = "https://github.com/vllm-project/vllm/pull/16458"

SHAREGPT_INPUT_TOKENS = 121
"""Mean ShareGPT prompt length JetStream's benchmark sent (214,914 tokens / 1,780 requests, JetStream PR 83)."""
SHAREGPT_OUTPUT_TOKENS = 233
"""Mean ShareGPT output length in the same run (415,416 tokens / 1,780 requests)."""


class Measurement(BaseModel):
    """One published serving run on one TPU slice."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    engine: str
    """`vllm` or `jetstream`, as the traffic sizer's `--engine` names them."""
    engine_build: str
    engine_version: str | None
    """The catalogued engine version (tpu_stacks.catalog.engines, `EngineVersion.version`) this row measured, or
    None when it measured another build. Only a row of the build a stack runs is evidence for that stack
    (basis `measured`); a row of another build still calibrates the model (ENGINE_EFFICIENCY)."""
    model: str
    """A catalogue model name (tpu_stacks.catalog.models)."""
    generation: str
    topology: str
    chips: int = Field(gt=0)
    weight_dtype: str
    kv_dtype: str
    input_tokens: int = Field(gt=0)
    output_tokens: int = Field(gt=0)
    batch: int | None
    """Sequences decoded together; None when the engine's scheduler chose it under `batch_cap`."""
    batch_cap: int | None = None
    """The engine's cap on sequences (vLLM --max-num-seqs) when `batch` is None."""
    max_model_len: int
    """Tokens per sequence the engine was started with (vLLM max-model-len, JetStream cache length)."""
    output_tokens_per_second: float = Field(gt=0)
    ntpot_ms: float | None = None
    ttft_ms: float | None = None
    date: str
    source: str
    note: str = ""


_JETSTREAM_BUILD = "JetStream-PyTorch"
_SHAREGPT = "ShareGPT; mean lengths from JetStream PR 83"

MEASUREMENTS: tuple[Measurement, ...] = (
    Measurement(
        engine="jetstream",
        engine_version=None,
        engine_build=f"{_JETSTREAM_BUILD} (2024-04-24)",
        model="llama-3-8b",
        generation="v5e",
        topology="2x4",
        chips=8,
        weight_dtype="bf16",
        kv_dtype="bf16",
        input_tokens=SHAREGPT_INPUT_TOKENS,
        output_tokens=SHAREGPT_OUTPUT_TOKENS,
        batch=128,
        max_model_len=2048,
        output_tokens_per_second=8249,
        date="2024-04-24",
        source=JETSTREAM_PYTORCH_SUMMARY,
        note=_SHAREGPT,
    ),
    Measurement(
        engine="jetstream",
        engine_version=None,
        engine_build=f"{_JETSTREAM_BUILD} (2024-04-24)",
        model="llama-3-8b",
        generation="v5e",
        topology="2x4",
        chips=8,
        weight_dtype="int8",
        kv_dtype="int8",
        input_tokens=SHAREGPT_INPUT_TOKENS,
        output_tokens=SHAREGPT_OUTPUT_TOKENS,
        batch=256,
        max_model_len=2048,
        output_tokens_per_second=10873,
        date="2024-04-24",
        source=JETSTREAM_PYTORCH_SUMMARY,
        note=_SHAREGPT + "; weights and KV cache quantized (quantize_weights, quantize_kv_cache)",
    ),
    Measurement(
        engine="jetstream",
        engine_version=None,
        engine_build=f"{_JETSTREAM_BUILD} (2024-07-29, a regression its authors note)",
        model="llama-3-8b",
        generation="v5e",
        topology="2x4",
        chips=8,
        weight_dtype="int8",
        kv_dtype="int8",
        input_tokens=SHAREGPT_INPUT_TOKENS,
        output_tokens=SHAREGPT_OUTPUT_TOKENS,
        batch=256,
        max_model_len=2048,
        output_tokens_per_second=8471.54,
        date="2024-07-29",
        source=JETSTREAM_PYTORCH_SUMMARY,
        note=_SHAREGPT + "; same setup as the 2024-04-24 int8 row, a later build",
    ),
    Measurement(
        engine="jetstream",
        engine_version=None,
        engine_build=f"{_JETSTREAM_BUILD} (2024-05-10)",
        model="gemma-7b",
        generation="v5e",
        topology="2x4",
        chips=8,
        weight_dtype="bf16",
        kv_dtype="bf16",
        input_tokens=SHAREGPT_INPUT_TOKENS,
        output_tokens=SHAREGPT_OUTPUT_TOKENS,
        batch=96,
        max_model_len=2048,
        output_tokens_per_second=3236,
        date="2024-05-10",
        source=JETSTREAM_PYTORCH_SUMMARY,
        note=_SHAREGPT + " (lengths counted by Llama 3's tokenizer in PR 83; Gemma's counts differ)",
    ),
    Measurement(
        engine="jetstream",
        engine_version=None,
        engine_build=f"{_JETSTREAM_BUILD} (2024-05-10)",
        model="gemma-7b",
        generation="v5e",
        topology="2x4",
        chips=8,
        weight_dtype="int8",
        kv_dtype="int8",
        input_tokens=SHAREGPT_INPUT_TOKENS,
        output_tokens=SHAREGPT_OUTPUT_TOKENS,
        batch=128,
        max_model_len=2048,
        output_tokens_per_second=4695,
        date="2024-05-10",
        source=JETSTREAM_PYTORCH_SUMMARY,
        note=_SHAREGPT
        + " (lengths counted by Llama 3's tokenizer in PR 83; Gemma's counts differ); weights and KV cache quantized",
    ),
    Measurement(
        engine="vllm",
        engine_version=None,  # the pinned vLLM (catalog/engines/vllm.py VLLM) runs on tpu-inference, another backend
        engine_build="vLLM main 2025-04-11 (V1 engine, PyTorch/XLA TPU backend)",
        model="llama-3-8b",
        generation="v6e",
        topology="1x1",
        chips=1,
        weight_dtype="bf16",
        kv_dtype="bf16",
        input_tokens=1800,
        output_tokens=128,
        batch=None,
        batch_cap=512,
        max_model_len=2048,
        output_tokens_per_second=945.80,
        date="2025-04-11",
        source=VLLM_TPU_V6E_8B,
        note="random dataset, 1,000 requests sent at once; --max-num-seqs 512 caps the batch, the KV cache sets it",
    ),
)
