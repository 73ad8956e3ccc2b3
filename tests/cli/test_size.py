"""`tpu-stacks size` as users run it: the installed console script, its JSON and its errors."""

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from tpu_stacks.catalog.tpu import generation_names

SCRIPT = shutil.which("tpu-stacks", path=str(Path(sys.executable).parent)) or "tpu-stacks"


def run(*args):
    return subprocess.run(
        [SCRIPT, "size", *args], capture_output=True, text=True, env={**os.environ, "PYTHONWARNINGS": "ignore"}
    )


def test_json_recommends_2x4_for_llama_70b_on_v6e():
    result = run("meta-llama/Llama-3.1-70B", "--tpu", "v6e", "--json")
    assert result.returncode == 0, result.stderr
    document = json.loads(result.stdout)
    assert document["model"] == "meta-llama/Llama-3.1-70B"
    assert (document["generation"], document["workload"]) == ("v6e", "serve")
    memory = document["memory"]
    assert memory["total_bytes"] == memory["weights_bytes"] + memory["kv_cache_bytes"] + memory["overhead_bytes"]
    recommended = document["recommended"]
    assert (recommended["topology"], recommended["machine_type"], recommended["chips"]) == (
        "2x4",
        "ct6e-standard-8t",
        8,
    )
    keys = {"topology", "machine_type", "chips", "nodes", "hbm_bytes", "fits", "headroom_bytes", "hourly_usd"}
    for candidate in document["candidates"]:
        assert keys <= set(candidate)
        assert isinstance(candidate["chips"], int) and isinstance(candidate["fits"], bool)
    assert [c["topology"] for c in document["candidates"] if not c["fits"]] == ["1x1", "2x2"]


def test_human_table_marks_the_recommendation():
    result = run(
        "saxml.server.pax.lm.params.lm_cloud.LmCloudSpmd175B32Test",
        "--tpu",
        "v5e",
        "--engine",
        "saxml",
        "--context",
        "256",
    )
    assert result.returncode == 0, result.stderr
    assert "Recommended: 4x8 on ct5lp-hightpu-4t (32 chips, 8 nodes)" in result.stdout
    assert "> 4x8" in result.stdout
    assert "weights" in result.stdout and "kv_cache" in result.stdout


def test_training_workload():
    result = run("meta-llama/Meta-Llama-3-8B", "--tpu", "v6e", "--workload", "train", "--json")
    document = json.loads(result.stdout)
    four_by_four = next(c for c in document["candidates"] if c["topology"] == "4x4")
    assert four_by_four["fits"]
    assert {"gradients_bytes", "optimizer_bytes", "activations_bytes"} <= set(document["memory"])


@pytest.mark.parametrize(
    "args,message",
    [
        (
            ["acme/unknown", "--tpu", "v6e"],
            "MODEL: 'acme/unknown' is not in the model catalogue; any Hugging Face model",
        ),
        (["--params", "0.5", "--tpu", "v6e"], "tpu-stacks: --params: '0.5' is less than one parameter"),
        (["--params", "7B", "--layers", "4", "--tpu", "v6e"], "tpu-stacks: --layers/--kv-heads/--head-dim: "),
        # The valid names are the catalogue's (catalog/tpu.py), not a list typed here.
        (
            ["llama3-8b", "--tpu", "v9"],
            f"--tpu: 'v9' is not a TPU generation on GKE; valid: {', '.join(generation_names())}",
        ),
        (["llama3-8b", "--tpu", "v6e", "--context", "-5"], "argument --context: -5 is not a positive whole number"),
        (["llama3-8b", "--tpu", "v6e", "--batch", "many"], "argument --batch: 'many' is not a whole number"),
        (["llama3-8b", "--tpu", "v6e", "--dtype", "fp64"], "argument --dtype: invalid choice"),
        (["--params", "10T", "--tpu", "v5e"], "fits no v5e slice"),
        (["--tpu", "v5e"], "MODEL: '' is missing"),
        (["--params", "inf", "--tpu", "v5e"], "--params: 'inf' is not a positive parameter count"),
        (["--params", "nan", "--tpu", "v5e"], "--params: 'nan' is not a positive parameter count"),
        (["--params", "1e400", "--tpu", "v5e"], "--params: '1e400' is not a positive parameter count"),
    ],
)
def test_errors_are_one_line_and_exit_2(args, message):
    result = run(*args)
    assert result.returncode == 2
    assert message in result.stderr
    assert result.stderr.count("\n") == 1, result.stderr
    assert "Traceback" not in result.stderr and result.stdout == ""


def test_the_help_lists_the_catalogues_generations_and_the_sized_engines():
    """`--tpu` and `--engine` name what the catalogue and sizing know, not a list typed into the CLI."""
    result = subprocess.run(
        [SCRIPT, "size", "--help"], capture_output=True, text=True, env={**os.environ, "COLUMNS": "200"}
    )
    assert result.returncode == 0
    help_text = " ".join(result.stdout.split())
    assert f"TPU generation: {', '.join(generation_names())}" in help_text
    assert "{vllm,jetstream,saxml,sglang,generic}" in help_text


def test_a_model_no_slice_holds_is_told_in_one_unit():
    """GiB throughout; Google's own GB figure for HBM per chip is quoted as Google's."""
    result = run("--params", "10T", "--tpu", "v5e")
    assert result.returncode == 2
    line = result.stderr.strip()
    assert "GiB" in line and "v5e 14.9 GiB (Google documents 16 GB)" in line
    unquoted = line.replace("(Google documents 16 GB)", "").replace("(Google documents 32 GB)", "")
    assert " GB" not in unquoted, line


def test_a_model_no_host_holds_is_planned_across_the_slice():
    """Llama 3.1 405B in bf16 outgrows a v6e host: the answer is one replica over a multi-host slice."""
    result = run("meta-llama/Llama-3.1-405B-Instruct", "--tpu", "v6e", "--json")
    assert result.returncode == 0, result.stderr
    recommended = json.loads(result.stdout)["recommended"]
    assert (recommended["topology"], recommended["nodes"]) == ("4x8", 8)
    assert (recommended["hosts"], recommended["chips_per_host"]) == (8, 4)
    assert (recommended["tensor_parallel"], recommended["pipeline_parallel"]) == (32, 1)
    assert recommended["hosts"] * recommended["chips_per_host"] == recommended["chips"]
    table = run("meta-llama/Llama-3.1-405B-Instruct", "--tpu", "v6e").stdout
    assert "Parallelism: 8 hosts x 4 chips, one replica across the slice; tensor-parallel size 32" in table


def test_a_single_host_model_keeps_one_host():
    document = json.loads(run("meta-llama/Llama-3.1-70B", "--tpu", "v6e", "--json").stdout)
    assert {k: document["recommended"][k] for k in ("hosts", "chips_per_host", "tensor_parallel")} == {
        "hosts": 1,
        "chips_per_host": 8,
        "tensor_parallel": 8,
    }
    trained = json.loads(run("meta-llama/Meta-Llama-3-8B", "--tpu", "v6e", "--workload", "train", "--json").stdout)
    assert "tensor_parallel" not in trained["recommended"]  # training shards by MaxText's own flags


def test_the_comparison_across_generations_gives_the_params_line_of_one_generation():
    """`size MODEL` without --tpu had its own copy of the params text, which dropped a mixture of experts' active
    parameters; both now print the model's one `params_text`."""
    one = run("Qwen/Qwen3-30B-A3B", "--tpu", "v6e")
    every = run("Qwen/Qwen3-30B-A3B")
    assert one.returncode == every.returncode == 0, one.stderr + every.stderr
    params = one.stdout.splitlines()[0].removeprefix("Qwen/Qwen3-30B-A3B: ").split(", ")[0]
    assert params.endswith("B params (3.35B active per token)")
    assert every.stdout.startswith(f"Qwen/Qwen3-30B-A3B: {params}, ")


def test_without_dtype_a_server_is_sized_in_what_its_engine_serves_at_dtype_auto():
    """`size` takes the engine's own `--dtype auto` rule (catalog/engines/dtypes.py), the one its plan reads: an
    fp32 checkpoint is bf16 on vLLM and stays fp32 on SGLang-JAX."""
    import argparse

    from tpu_stacks.catalog.models import lookup_model
    from tpu_stacks.cli.size import with_model_defaults

    shipped = lookup_model("Qwen/Qwen3-30B-A3B")
    update = {"checkpoint_dtype": "fp32", "config_torch_dtype": "float32"}
    model = shipped.model_copy(update={"architecture": shipped.architecture.model_copy(update=update)})
    for engine, served in (("vllm", "bf16"), ("sglang", "fp32")):
        args = argparse.Namespace(workload="serve", engine=engine, dtype=None, context=None)
        with_model_defaults(args, model)
        assert args.dtype == served, engine
