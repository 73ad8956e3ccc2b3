"""Every published row of catalog/throughput_measurements.py against the document it cites, read from an excerpt
vendored in tests/catalog/fixtures (each names its URL at the pinned commit): the throughput, the slice, the batch,
the cache length, the dtype, the date, the server's flags and the client's lengths.

The fixtures are the sources' own lines, so a row typed wrong (or a number nudged) fails here, where
tests/traffic/test_calibration.py only sees the fit move.
"""

import re
from pathlib import Path

import pytest
from pydantic import ValidationError

from tpu_stacks.catalog.models import lookup_model
from tpu_stacks.catalog.throughput_measurements import (
    JETSTREAM_PYTORCH_SUMMARY,
    MEASUREMENTS,
    QWEN3_CODER_480B,
    QWEN3_CODER_TPU7X,
    SHAREGPT_INPUT_TOKENS,
    SHAREGPT_OUTPUT_TOKENS,
    VLLM_TPU_V6E_8B,
    row_model,
)

FIXTURES = Path(__file__).parent / "fixtures"
ROWS = {row.id: row for row in MEASUREMENTS}
DTYPES = {"bfloat16": "bf16", "int8": "int8"}
MODELS = {"Llama 3 - 8B": "llama-3-8b", "Gemma - 7B": "gemma-7b"}


def _summary_rows() -> list[dict]:
    """The JetStream-PyTorch summary's table rows, each with the model of its section."""
    rows, model = [], None
    for line in (FIXTURES / "jetstream_pytorch_summary.md").read_text().splitlines():
        if line.startswith("## "):
            model = MODELS[line[3:].strip()]
        cells = [cell.strip() for cell in line.split("|")]
        if len(cells) == 8 and re.fullmatch(r"\d{4}-\d\d-\d\d", cells[0]):
            date, device, dtype, batch, cache, _, _, throughput = cells
            generation, chips = re.fullmatch(r"TPU (v\w+)-(\d+)", device).groups()
            rows.append(
                {
                    "model": model,
                    "date": date,
                    "generation": generation,
                    "chips": int(chips),
                    "weight_dtype": DTYPES[dtype],
                    "batch": int(batch),
                    "max_model_len": int(cache),
                    "output_tokens_per_second": float(throughput),
                }
            )
    return rows


def test_every_jetstream_row_is_a_row_of_the_summary():
    """JetStream-PyTorch's benchmarks/summary.md @ 2ba0dd8: the Llama 3 8B and Gemma 7B tables, one row each."""
    cited = [row for row in MEASUREMENTS if row.source == JETSTREAM_PYTORCH_SUMMARY]
    published = _summary_rows()
    assert len(cited) == len(published) == 5
    for row in cited:
        mine = {key: getattr(row, key) for key in published[0]}
        assert mine in published, row.id
        assert row_model(row).architecture.name == row.model
        assert row.kv_dtype == row.weight_dtype  # quantize_weights and quantize_kv_cache together (its run command)
        assert (row.input_tokens, row.output_tokens) == (SHAREGPT_INPUT_TOKENS, SHAREGPT_OUTPUT_TOKENS)
        assert row.length_ratio == 1.0  # the means, read as every request's lengths


def test_the_sharegpt_lengths_are_jetstream_pr_83s_means():
    """JetStream pull request 83: 214,914 input and 415,416 output tokens over 1,780 requests."""
    assert SHAREGPT_INPUT_TOKENS == round(214_914 / 1_780)
    assert SHAREGPT_OUTPUT_TOKENS == round(415_416 / 1_780)


def _recipe() -> dict[int, str]:
    lines = (FIXTURES / "tpu_recipes_qwen3_coder_480b.md").read_text().splitlines()
    return {int(number): text for number, text in (line.split(":", 1) for line in lines if line[:1].isdigit())}


def _flag(text: str, name: str) -> str:
    return re.search(rf"{name}=(\S+)", text)[1]


@pytest.mark.parametrize(
    ("row_id", "result_line", "client_lines"),
    [
        ("vllm-tpu7x-qwen3coder-1k1k", 658, range(519, 527)),
        ("vllm-tpu7x-qwen3coder-1k8k", 659, range(563, 571)),
        ("vllm-tpu7x-qwen3coder-8k1k", 660, range(607, 615)),
    ],
)
def test_every_ironwood_row_is_the_recipes_run(row_id, result_line, client_lines):
    """tpu-recipes' Qwen3-Coder-480B-A35B recipe for Ironwood @ 8f0a9d2: the server's flags (lines 227-235), the
    client's (InferenceX's `--random-range-ratio=0.8` draws lengths in [0.8 L, L]: the row keeps the centre,
    0.9 L), and the result table (lines 658-660), whose per-chip figure gives the chips."""
    recipe, row = _recipe(), ROWS[row_id]
    served = _flag(recipe[client_lines[0]], "--model")  # the FP8 checkpoint of the model the row records
    assert row_model(row).architecture is QWEN3_CODER_480B and served in QWEN3_CODER_480B.hf_ids
    assert row.source == QWEN3_CODER_TPU7X and row.note.startswith(f"line {result_line};")
    server = "\n".join(recipe[n] for n in range(227, 236))
    assert row.max_model_len == int(_flag(server, "--max-model-len"))
    assert row.batched_tokens == int(_flag(server, "--max-num-batched-tokens"))
    assert row.memory_fraction == float(_flag(server, "--gpu-memory-utilization"))
    assert row.page_tokens == int(_flag(server, "--block-size"))
    assert row.kv_dtype == _flag(server, "--kv-cache-dtype")
    assert row.topology == recipe[217].split(":")[-1].strip()
    client = "\n".join(recipe[n] for n in client_lines)
    ratio = float(_flag(client, "--random-range-ratio"))
    assert row.length_ratio == ratio
    assert row.input_tokens == round((1 + ratio) / 2 * int(_flag(client, "--random-input-len")))
    assert row.output_tokens == round((1 + ratio) / 2 * int(_flag(client, "--random-output-len")))
    assert row.prompts == int(_flag(client, "--num-prompts"))
    assert row.concurrency == row.batch == int(_flag(client, "--max-concurrency"))
    total, per_chip = re.search(r"\| ([\d.]+) tok/s \(([\d.]+) tok/s/chip\)", recipe[result_line]).groups()
    assert row.output_tokens_per_second == float(total)
    assert row.chips == round(float(total) / float(per_chip))


def test_the_v6e_row_is_the_prs_before_run():
    """vLLM pull request 16458: `vllm serve` and benchmark_serving.py as quoted, the "Before" output throughput;
    benchmark_serving.py sends 1,000 prompts by default (its `--num-prompts`), all at once (request rate inf)."""
    text = (FIXTURES / "vllm_pr_16458.md").read_text()
    row = ROWS["vllm-v6e-llama3-8b"]
    assert row.source == VLLM_TPU_V6E_8B
    serve = next(line for line in text.splitlines() if "vllm serve" in line)
    served = lookup_model(re.search(r"vllm serve (\S+)", serve)[1]).architecture  # Llama 3.1 8B: Llama 3 8B's weights
    assert row_model(row).architecture.name == "llama-3-8b" and row_model(row).architecture.same_weights(served)

    def flag(name: str) -> str:
        return re.search(rf"{name} (\S+)", serve)[1]

    assert row.memory_fraction == float(flag("--gpu-memory-utilization"))
    assert row.batched_tokens == int(flag("--max-num-batched-tokens"))
    assert row.max_model_len == int(flag("--max-model-len"))
    assert row.batch_cap == int(flag("--max_num_seqs"))
    assert row.chips == int(re.search(r"v6e-(\d+)", text)[1]) == 1
    bench = next(line for line in text.splitlines() if "benchmark_serving.py" in line)
    assert row.input_tokens == int(re.search(r"--random-input-len (\d+)", bench)[1])
    assert row.output_tokens == int(re.search(r"--random-output-len (\d+)", bench)[1])
    assert row.output_tokens_per_second == float(re.search(r"Output token throughput \(tok/s\):\s+([\d.]+)", text)[1])
    assert row.prompts == 1000
    assert "--random-range-ratio" not in bench and row.length_ratio == 1.0  # the script's default then: exact lengths


@pytest.mark.parametrize("field", ["chips", "input_tokens", "output_tokens", "output_tokens_per_second"])
def test_a_row_counts_from_one_and_refuses_nothing(field):
    """A row of one chip, a one-token prompt or answer, or under one token a second is a row; zero of any is not."""
    row = ROWS["vllm-v6e-llama3-8b"].model_dump()
    small = 0.5 if field == "output_tokens_per_second" else 1
    assert getattr(type(ROWS["vllm-v6e-llama3-8b"]).model_validate({**row, field: small}), field) == small
    with pytest.raises(ValidationError):
        type(ROWS["vllm-v6e-llama3-8b"]).model_validate({**row, field: 0})


def test_qwen3_coder_activates_35b_of_its_480b():
    """The model card's "480B-parameter Mixture-of-Experts model with 35B active parameters": 8 of 160 experts."""
    assert round(QWEN3_CODER_480B.params / 1e9) == 480
    assert round(QWEN3_CODER_480B.active_params / 1e9) == 35
