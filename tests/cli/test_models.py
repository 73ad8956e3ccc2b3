"""`tpu-stacks models`: the catalogue a stack's `model` key accepts, as users run it."""

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

from tests.cli_run import tpu_stacks
from tpu_stacks.catalog.models import MODELS, lookup_model, model_names

SCRIPT = shutil.which("tpu-stacks", path=str(Path(sys.executable).parent)) or "tpu-stacks"


def run(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [SCRIPT, "models", *args], capture_output=True, text=True, env={**os.environ, "PYTHONWARNINGS": "ignore"}
    )


def test_json_lists_every_model_with_every_name_it_answers_to():
    result = run("--json")
    assert result.returncode == 0, result.stderr
    document = json.loads(result.stdout)
    assert len(document["models"]) == len(MODELS)
    assert [name for item in document["models"] for name in item["names"]] == model_names()
    for item in document["models"]:
        for name in item["names"]:
            assert lookup_model(name).architecture.params == item["params"]
    llama70 = next(item for item in document["models"] if item["id"] == "meta-llama/Llama-3.1-70B")
    assert llama70["gated"] is True and llama70["page"] == "https://huggingface.co/meta-llama/Llama-3.1-70B"
    # bf16 weights: 2 bytes a parameter, in GiB
    assert llama70["bf16_weights_gib"] == round(llama70["params"] * 2 / 1024**3, 1) == 131.4
    qwen = next(item for item in document["models"] if item["id"] == "Qwen/Qwen2.5-1.5B-Instruct")
    assert qwen["gated"] is False
    assert "tpu-stacks models fetch ORG/NAME" in document["other_models"]
    moe = next(item for item in document["models"] if item["id"] == "Qwen/Qwen3-30B-A3B")
    assert (moe["architecture"], moe["max_context"]) == ("Qwen3MoeForCausalLM", 40960)
    assert moe["active_params"] < moe["params"] / 9  # 3.35B of 30.5B
    assert document["sources"]["SAX"].startswith("https://github.com/google/saxml")  # the one model without config.json


def test_text_table_has_a_line_per_model_and_the_route_for_others():
    result = run()
    assert result.returncode == 0, result.stderr
    lines = result.stdout.splitlines()
    assert lines[0].split() == ["model", "params", "bf16", "weights", "gated"]
    rows = [line for line in lines if line.startswith(("meta-llama/", "google/", "mistralai/", "Qwen/", "saxml."))]
    assert len(rows) == len(MODELS)
    assert any(row.startswith("meta-llama/Llama-3.1-70B ") and "131.4 GiB" in row and "yes" in row for row in rows)
    assert any(row.startswith("Qwen/Qwen2.5-1.5B-Instruct ") and row.endswith("  no") for row in rows)
    assert "  also: llama-3.1-70b," in result.stdout  # the aliases
    assert "other models: tpu-stacks models fetch ORG/NAME" in result.stdout
    assert "https://huggingface.co/Qwen/Qwen3-30B-A3B/blob/main/config.json" in result.stdout  # each config's source
    assert "[SAX] google/saxml" in result.stdout  # every cited key opens without this repository


def test_help_lists_the_command():
    result = tpu_stacks("--help")  # main in this process (tests/cli_run.py): --help imports every command
    assert result.returncode == 0
    assert "models" in result.stdout and "list the model catalogue" in result.stdout
