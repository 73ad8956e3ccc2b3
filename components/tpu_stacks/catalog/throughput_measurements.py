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
pin, the vLLM v6e row ran vLLM's PyTorch/XLA backend, and the tpu7x rows a 2026-06-24 nightly of the vLLM TPU
image (tpu-inference, not the pinned 0.29.0 release). The PyTorch/XLA backend is the one tpu-inference (a JAX
backend vLLM calls faster: https://blog.vllm.ai/2025/10/16/vllm-tpu.html) replaced. They calibrate the
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
  meta-llama/Llama-3.1-8B-Instruct, `--max-num-batched-tokens 512 --max-model-len 2048 --max_num_seqs 512
  --gpu-memory-utilization 0.95`,
  random dataset 1,800 input / 128 output tokens, "Output token throughput (tok/s): 945.80" (the "Before" run;
  its TTFT of 61 s is the queue of 1,000 requests sent at once, so no latency is kept).
- tpu-recipes' Qwen3-Coder-480B-A35B recipe for Ironwood at commit 8f0a9d2 ([QWEN3_CODER_TPU7X] below): tpu7x
  2x2x1 (4 chips), `--tensor-parallel-size=8 --enable-expert-parallel --max-num-batched-tokens=8192
  --max-num-seqs=512 --gpu-memory-utilization=0.8 --block-size=256 --kv-cache-dtype=fp8`, env `MODEL_IMPL_TYPE=vllm`
  (lines 247-248: vLLM's PyTorch model through torchax, not tpu-inference's JAX one), the FP8 checkpoint,
  InferenceX's client at concurrency 64, lines 658-660: output tokens/s for 1k/1k, 1k/8k and 8k/1k. Lengths are
  the centres of InferenceX's [0.8 L, L] range (922 and 7,373). W8A8 fp8: the recipe does not say, but
  tpu-inference (read at the pinned 0.29.0, not the recipe's nightly) requantizes an fp8 checkpoint's weights per
  channel and quantizes the activations of its matmuls unless told otherwise, its experts' grouped matmuls too
  (ledger: tpu-inference.fp8.requantize-default, tpu-inference.fp8.quantize-activations,
  tpu-inference.fp8.moe-quantize-lhs).
"""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field

from tpu_stacks.catalog.models import Attention, ModelArchitecture, ResolvedModel, lookup_model

JETSTREAM_PYTORCH_SUMMARY = (
    "https://github.com/AI-Hypercomputer/jetstream-pytorch/blob/2ba0dd8bd3725d8ec6173261ab0016f9f336eeb8/"
    "benchmarks/summary.md"
)
JETSTREAM_SHAREGPT_LENGTHS = "https://github.com/AI-Hypercomputer/JetStream/pull/83"
VLLM_TPU_V6E_8B = "https://github.com/vllm-project/vllm/pull/16458"
QWEN3_CODER_TPU7X = (
    "https://github.com/AI-Hypercomputer/tpu-recipes/blob/8f0a9d2b23f6a28cfc8ba395c94fec7c1e87ca37/"
    "inference/ironwood/vLLM/Qwen3-Coder-480B-A35B/README.md"
)

SHAREGPT_INPUT_TOKENS = 121
"""Mean ShareGPT prompt length JetStream's benchmark sent (214,914 tokens / 1,780 requests, JetStream PR 83)."""
SHAREGPT_OUTPUT_TOKENS = 233
"""Mean ShareGPT output length in the same run (415,416 tokens / 1,780 requests)."""


class Measurement(BaseModel):
    """One published serving run on one TPU slice."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    id: str
    """A stable name: catalog/engine_traffic.py lists the rows each calibration is fitted on by it."""
    engine: str
    """`vllm` or `jetstream`, as the traffic sizer's `--engine` names them."""
    engine_build: str
    engine_version: str | None
    """The catalogued engine version (tpu_stacks.catalog.engines, `EngineVersion.version`) this row measured, or
    None when it measured another build. Only a row of the build a stack runs is evidence for that stack
    (basis `measured`); a row of another build still calibrates the model (catalog/engine_traffic.py `Calibration`)."""
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
    activation_dtype: str | None = None
    """int8/fp8 when activations are quantized too (W8A8); None: weight-only or unquantized."""
    batched_tokens: int | None = None
    """vLLM `--max-num-batched-tokens` (None: not given by the source; the engine's default is modelled)."""
    memory_fraction: float | None = None
    """vLLM `--gpu-memory-utilization` (None: not given)."""
    page_tokens: int | None = None
    """vLLM `--block-size` (None: not given)."""
    prompts: int | None = None
    """Prompts the benchmark client sent (`--num-prompts`); None: the row is read as a steady state."""
    concurrency: int | None = None
    """The client's `--max-concurrency` (None with `prompts`: every prompt sent at once)."""
    length_ratio: float = 1.0
    """The client's `--random-range-ratio` as a lower bound: lengths uniform in [ratio x L, L] (1.0: exact)."""
    async_scheduling: bool = False
    """vLLM `--async-scheduling` given to the server (False: not given; the build's engine stepped synchronously)."""
    implementation: str | None = None
    """The model implementation the server ran (catalog/engine_models.py VLLM_IMPLEMENTATIONS), from the row's source:
    a calibration is fitted only on rows of one implementation (catalog/engine_traffic.py). None: the engine has one
    (JetStream-PyTorch)."""
    ntpot_ms: float | None = None
    ttft_ms: float | None = None
    date: str
    source: str
    note: str = ""


_JETSTREAM_BUILD = "JetStream-PyTorch"
_SHAREGPT = "ShareGPT; mean lengths from JetStream PR 83"

MEASUREMENTS: tuple[Measurement, ...] = (
    Measurement(
        id="jspt-llama3-8b-bf16",
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
        id="jspt-llama3-8b-int8",
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
        id="jspt-llama3-8b-int8-0729",
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
        id="jspt-gemma-7b-bf16",
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
        id="jspt-gemma-7b-int8",
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
        id="vllm-v6e-llama3-8b",
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
        memory_fraction=0.95,
        batched_tokens=512,  # the PR's `vllm serve ... --max-num-batched-tokens 512`
        prompts=1000,  # benchmark_serving.py's default --num-prompts, every one at once (request rate inf)
        # The PR's "Before" run predates tpu-inference's page rule (catalog/engine_traffic.py): its build paged
        # at vLLM's 16-token default, which that PR went on to raise.
        page_tokens=16,
        # The PR predates tpu-inference: vLLM's V1 TPU worker ran vLLM's PyTorch model on PyTorch/XLA (the PR waits
        # on pytorch/xla PR 9041 "and update new torch_xla version in requirements.txt"; the backend tpu-inference
        # replaced, https://blog.vllm.ai/2025/10/16/vllm-tpu.html), whatever the model's class.
        implementation="torch_xla",
        date="2025-04-11",
        source=VLLM_TPU_V6E_8B,
        note="random dataset, 1,000 requests sent at once; --max-num-seqs 512 caps the batch, the KV cache sets it",
    ),
    Measurement(
        id="vllm-tpu7x-qwen3coder-1k1k",
        engine="vllm",
        engine_version=None,
        engine_build="vllm/vllm-tpu:nightly-20260624-ddfbfe4-e2bdc24 (tpu-inference)",
        model="qwen3-coder-480b-a35b",
        generation="tpu7x",
        topology="2x2x1",
        chips=4,
        weight_dtype="fp8",
        kv_dtype="fp8",
        activation_dtype="fp8",
        input_tokens=922,
        output_tokens=922,
        batch=64,
        max_model_len=10240,
        batched_tokens=8192,
        memory_fraction=0.8,
        page_tokens=256,
        prompts=320,  # --num-prompts=320 --max-concurrency=64, lines 525-526 (and the other two benchmarks')
        concurrency=64,
        length_ratio=0.8,  # --random-range-ratio=0.8
        async_scheduling=True,  # --async-scheduling, line 237
        implementation="vllm",  # env MODEL_IMPL_TYPE=vllm, lines 247-248 (auto would pick it too: Qwen3MoeForCausalLM)
        output_tokens_per_second=1996.0,
        date="2026-07-14",
        source=QWEN3_CODER_TPU7X,
        note="line 658; TP 8 with expert parallelism, FP8 checkpoint, fp8 KV, InferenceX client at concurrency 64,"
        " lengths the centres of [0.8 L, L]",
    ),
    Measurement(
        id="vllm-tpu7x-qwen3coder-1k8k",
        engine="vllm",
        engine_version=None,
        engine_build="vllm/vllm-tpu:nightly-20260624-ddfbfe4-e2bdc24 (tpu-inference)",
        model="qwen3-coder-480b-a35b",
        generation="tpu7x",
        topology="2x2x1",
        chips=4,
        weight_dtype="fp8",
        kv_dtype="fp8",
        activation_dtype="fp8",
        input_tokens=922,
        output_tokens=7373,
        batch=64,
        max_model_len=10240,
        batched_tokens=8192,
        memory_fraction=0.8,
        page_tokens=256,
        prompts=320,  # --num-prompts=320 --max-concurrency=64, lines 525-526 (and the other two benchmarks')
        concurrency=64,
        length_ratio=0.8,  # --random-range-ratio=0.8
        async_scheduling=True,  # --async-scheduling, line 237
        implementation="vllm",  # env MODEL_IMPL_TYPE=vllm, lines 247-248 (auto would pick it too: Qwen3MoeForCausalLM)
        output_tokens_per_second=2075.47,
        date="2026-07-14",
        source=QWEN3_CODER_TPU7X,
        note="line 659; TP 8 with expert parallelism, FP8 checkpoint, fp8 KV, InferenceX client at concurrency 64,"
        " lengths the centres of [0.8 L, L]",
    ),
    Measurement(
        id="vllm-tpu7x-qwen3coder-8k1k",
        engine="vllm",
        engine_version=None,
        engine_build="vllm/vllm-tpu:nightly-20260624-ddfbfe4-e2bdc24 (tpu-inference)",
        model="qwen3-coder-480b-a35b",
        generation="tpu7x",
        topology="2x2x1",
        chips=4,
        weight_dtype="fp8",
        kv_dtype="fp8",
        activation_dtype="fp8",
        input_tokens=7373,
        output_tokens=922,
        batch=64,
        max_model_len=10240,
        batched_tokens=8192,
        memory_fraction=0.8,
        page_tokens=256,
        prompts=320,  # --num-prompts=320 --max-concurrency=64, lines 525-526 (and the other two benchmarks')
        concurrency=64,
        length_ratio=0.8,  # --random-range-ratio=0.8
        async_scheduling=True,  # --async-scheduling, line 237
        implementation="vllm",  # env MODEL_IMPL_TYPE=vllm, lines 247-248 (auto would pick it too: Qwen3MoeForCausalLM)
        output_tokens_per_second=1053.1,
        date="2026-07-14",
        source=QWEN3_CODER_TPU7X,
        note="line 660; TP 8 with expert parallelism, FP8 checkpoint, fp8 KV, InferenceX client at concurrency 64,"
        " lengths the centres of [0.8 L, L]",
    ),
)


QWEN3_CODER_480B = ModelArchitecture(
    name="qwen3-coder-480b-a35b",
    display_name="Qwen3-Coder 480B-A35B",
    hf_ids=("Qwen/Qwen3-Coder-480B-A35B-Instruct-FP8",),
    attention=Attention(layers=62, kv_heads=8, head_dim=128, query_heads=96),
    d_model=6144,
    d_ff=2560,
    vocab=151936,
    experts=160,
    experts_per_token=8,
    qk_norm=True,  # model_type qwen3_moe: q_norm and k_norm on every layer (catalog/hf_config.py QK_NORM)
    architecture="Qwen3MoeForCausalLM",
    source="https://huggingface.co/Qwen/Qwen3-Coder-480B-A35B-Instruct/blob/main/config.json (hidden_size 6144,"
    " 62 layers, 96 heads, 8 KV heads, head_dim 128, moe_intermediate_size 2560, 160 experts, 8 per token,"
    " vocab 151936, untied, model_type qwen3_moe, architectures Qwen3MoeForCausalLM)",
)
"""A row's model the catalogue does not serve (the fit needs its shape, not a stack)."""
ROW_MODELS: dict[str, ModelArchitecture] = {QWEN3_CODER_480B.name: QWEN3_CODER_480B}


def row_model(row: Measurement) -> ResolvedModel:
    """The model a row measured: a catalogue model, or one of ROW_MODELS."""
    if row.model in ROW_MODELS:
        return ResolvedModel(id=row.model, architecture=ROW_MODELS[row.model])
    return lookup_model(row.model)
