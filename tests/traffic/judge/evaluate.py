"""The judge: the traffic model against the held-out published rows of judged_rows.toml (never fitted on).

Run `python -m tests.traffic.judge.evaluate` from the repository root to print the table that
docs/sizing-for-traffic.md carries under "Held-out rows"; tests/traffic/test_judge.py keeps the doc equal to it.
The models the rows measured that the catalogue does not serve are given here by their config.json shapes.
"""

from __future__ import annotations

import statistics
import sys
import tomllib
from dataclasses import dataclass
from pathlib import Path

from tpu_stacks.catalog.models import Attention, ModelArchitecture, ResolvedModel, lookup_model
from tpu_stacks.catalog.tpu import slice_shape
from tpu_stacks.traffic.bench import Client, replay
from tpu_stacks.traffic.model import Workload, calibration, kv_capacity, operating_point

JUDGE_FILE = Path(__file__).resolve().parent / "judged_rows.toml"


def _arch(
    name: str, layers: int, d: int, q: int, kv: int, ff: int, vocab: int, source: str, architecture: str
) -> ModelArchitecture:
    return ModelArchitecture(
        name=name,
        display_name=name,
        attention=Attention(layers=layers, kv_heads=kv, head_dim=128, query_heads=q),
        d_model=d,
        d_ff=ff,
        vocab=vocab,
        source=source,
        architecture=architecture,  # config.json architectures[0]: which implementation vLLM TPU runs it with
    )


JUDGE_MODELS = {
    # https://huggingface.co/meta-llama/Llama-2-7b-chat-hf/blob/main/config.json
    "meta-llama/Llama-2-7b-chat-hf": _arch(
        "llama-2-7b", 32, 4096, 32, 32, 11008, 32000, "Llama-2-7b config.json", "LlamaForCausalLM"
    ),
    # https://huggingface.co/meta-llama/Llama-2-13b-chat-hf/blob/main/config.json
    "meta-llama/Llama-2-13b-chat-hf": _arch(
        "llama-2-13b", 40, 5120, 40, 40, 13824, 32000, "Llama-2-13b config", "LlamaForCausalLM"
    ),
    # https://huggingface.co/Qwen/Qwen3-32B/blob/main/config.json (head_dim 128, 64 heads, 8 KV heads)
    "Qwen/Qwen3-32B": _arch("qwen3-32b", 64, 5120, 64, 8, 25600, 151936, "Qwen3-32B config.json", "Qwen3ForCausalLM"),
}


def model_of(name: str) -> ResolvedModel:
    if name in JUDGE_MODELS:
        return ResolvedModel(id=name, architecture=JUDGE_MODELS[name])
    return lookup_model(name)


@dataclass(frozen=True)
class Judged:
    row: dict
    batch: int
    predicted: float
    ttft_p50_ms: float
    ttft_p99_ms: float
    flag: str

    @property
    def error(self) -> float:
        return self.predicted / self.row["output_tokens_per_second"] - 1


def rows() -> list[dict]:
    return tomllib.loads(JUDGE_FILE.read_text())["row"]


def judge(row: dict) -> Judged:
    model = model_of(row["model"])
    shape = slice_shape(row["generation"], row["topology"])
    workload = Workload(
        engine=row["engine"],
        input_tokens=row["input_tokens"],
        output_tokens=row["output_tokens"],
        weight_dtype=row["weight_dtype"],
        kv_dtype=row["kv_dtype"],
        max_model_len=row["max_model_len"],
        activation_dtype=None if row["activation_dtype"] == "bf16" else row["activation_dtype"],
        batched_tokens=row.get("max_num_batched_tokens"),
        memory_fraction=row.get("gpu_memory_utilization"),
        page_tokens=row.get("block_size"),
        max_num_seqs=row.get("max_num_seqs"),
        async_scheduling=row.get("async_scheduling", False),
    )
    _, flag = calibration(row["engine"], row["generation"], model)
    if "prompts" in row:  # the benchmark replayed as its client ran it, like the fit's rows that give one
        run = replay(model, shape, workload, Client(row["prompts"], row["concurrency"], row["length_ratio"]))
        return Judged(row, round(run.mean_batch), run.output_tokens_per_second, run.ttft_p50_ms, run.ttft_p99_ms, flag)
    if "batch" in row:
        batch = row["batch"]
    else:
        batch = min(row["concurrency"], row["max_num_seqs"], kv_capacity(model, shape, workload))
    point = operating_point(model, shape, workload, batch)
    return Judged(row, batch, point.output_tokens_per_second, point.ttft_ms, point.ttft_p99_ms or 0.0, flag)


def _pct(value: float) -> str:
    return f"{value:+.0%}"


def markdown_table() -> str:
    judged = [judge(row) for row in rows()]
    lines = [
        "| Row | Source (file @ commit, lines) | Batch | Measured out tok/s | Modelled | Error |"
        " TTFT p50 measured / modelled | TTFT p99 measured / modelled |",
        "|---|---|---|---|---|---|---|---|",
    ]
    ttft_errors = []
    for j in judged:
        row = j.row
        ttft50 = ttft99 = "not given"
        if "ttft_ms_median" in row:
            ttft50 = (
                f"{row['ttft_ms_median']:.0f} / {j.ttft_p50_ms:.0f} ({_pct(j.ttft_p50_ms / row['ttft_ms_median'] - 1)})"
            )
            ttft99 = f"{row['ttft_ms_p99']:.0f} / {j.ttft_p99_ms:.0f} ({_pct(j.ttft_p99_ms / row['ttft_ms_p99'] - 1)})"
            ttft_errors.append(abs(j.ttft_p50_ms / row["ttft_ms_median"] - 1))
        flag = f" (flagged: {j.flag})" if j.flag else ""
        lines.append(
            f"| {row['id']}{flag} | {row['repo']} `{row['file']}` @ {row['commit'][:8]}, lines {row['lines']} |"
            f" {j.batch} | {row['output_tokens_per_second']:,.0f} | {j.predicted:,.0f} | {_pct(j.error)} |"
            f" {ttft50} | {ttft99} |"
        )
    errors = [abs(j.error) for j in judged]
    worst = max(judged, key=lambda j: abs(j.error))
    lines += [
        "",
        f"Throughput: median |error| {statistics.median(errors):.0%}, largest {max(errors):.0%} ({worst.row['id']}),"
        f" {sum(e > 0.20 for e in errors)} of {len(errors)} rows over 20%."
        + (f" TTFT p50: largest |error| {max(ttft_errors):.0%} over {len(ttft_errors)} rows." if ttft_errors else ""),
    ]
    return "\n".join(lines) + "\n"


if __name__ == "__main__":
    sys.stdout.write(markdown_table())
