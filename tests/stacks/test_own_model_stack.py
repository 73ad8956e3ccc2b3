"""Serving a model from its config.json, run as users run it: the whole program offline (`up` semantics under mocks)
and the policy pack. Qwen2.5 7B Instruct from the catalogue's config.json, Qwen3-30B-A3B (mixture of experts) from
a config.json the stack names (`modelConfig`), and a context beyond the model's refused before anything is declared."""

import shutil
from pathlib import Path

import yaml

from tests.cli_run import tpu_stacks
from tpu_stacks.catalog.model_catalogue import CONFIG_DIR
from tpu_stacks.objects import annotations as keys
from tpu_stacks_preview.engine import run_program
from tpu_stacks_preview.policy import run_policy_pack

ROOT = Path(__file__).resolve().parents[2]


def vllm_stack(project: Path, name: str, **changes) -> str:
    """The dev stack (one v6e host, open weights) serving another model: `changes` merged into its vllm section."""
    document = yaml.safe_load((ROOT / "Pulumi.dev.yaml").read_text())
    document["config"]["tpu-stacks:vllm"].update(changes)
    (project / f"Pulumi.{name}.yaml").write_text(yaml.safe_dump(document))
    return name


def deployment(capture):
    (found,) = [r.inputs for r in capture.of_type("kubernetes:apps/v1:Deployment") if "vllm" in r.name]
    return found


def test_qwen25_7b_plans_clean_from_its_config_json(project):
    name = vllm_stack(project, "qwen7b", model="Qwen/Qwen2.5-7B-Instruct", maxModelLen=8192)
    capture = run_program(project, name, preview=False)
    assert capture.ok, capture.error
    served = deployment(capture)
    assert "--model=Qwen/Qwen2.5-7B-Instruct" in served["spec"]["template"]["spec"]["containers"][0]["args"]
    assert served["metadata"]["annotations"][keys.PARAMS] == "7615616512"  # 7.61B, the model card's count
    result = run_policy_pack(ROOT / "policies", capture, transport="in-process")
    assert result.mandatory == []


def test_qwen3_moe_plans_clean_from_a_config_json_the_stack_names(project):
    configs = project / "configs"
    configs.mkdir(exist_ok=True)
    shutil.copy(CONFIG_DIR / "Qwen/Qwen3-30B-A3B/config.json", configs / "qwen3-30b-a3b.json")
    name = vllm_stack(
        project, "qwen3moe", model="Qwen/Qwen3-30B-A3B", modelConfig="configs/qwen3-30b-a3b.json", maxModelLen=16384
    )
    capture = run_program(project, name, preview=False)
    assert capture.ok, capture.error
    notes = deployment(capture)["metadata"]["annotations"]
    assert notes[keys.PARAMS] == "30532122624"  # 30.5B: every expert's weights are held
    # Not the catalogue's file: the shape travels with the workload so the pack sizes the same model.
    assert notes[keys.ATTENTION] == "layers=48,kv_heads=4,head_dim=128,query_heads=32"
    pool = next(r.inputs for r in capture.of_type("gcp:container/nodePool:NodePool") if "vllm-pool" in r.name)
    assert pool["nodeConfig"]["machineType"] == "ct6e-standard-4t"  # 61 GB of bf16 weights: a v6e 2x2
    result = run_policy_pack(ROOT / "policies", capture, transport="in-process")
    assert result.mandatory == []


def test_a_context_beyond_the_model_is_one_line_before_anything_is_declared(project):
    name = vllm_stack(project, "gemma-long", model="google/gemma-2-9b-it", maxModelLen=32768)
    done = tpu_stacks("plan", "--stack", name, "--cwd", str(project), "--placeholder-secrets")
    assert done.returncode == 2
    line = "vllm.maxModelLen: 32768 is beyond google/gemma-2-9b's context of 8,192 tokens (max_position_embeddings)"
    assert line in done.stderr and "Traceback" not in done.stderr
    assert "resources" not in done.stdout  # refused before the program declared anything


def test_an_architecture_vllm_cannot_serve_is_one_line(project):
    (project / "odd.json").write_text(
        (CONFIG_DIR / "Qwen/Qwen2.5-7B-Instruct/config.json").read_text().replace("Qwen2ForCausalLM", "OddForCausalLM")
    )
    name = vllm_stack(project, "odd", model="acme/odd-7b", modelConfig="odd.json")
    done = tpu_stacks("plan", "--stack", name, "--cwd", str(project), "--placeholder-secrets")
    assert done.returncode == 2
    assert (
        "vllm.model: 'acme/odd-7b' is a OddForCausalLM (config.json architectures[0]): vllm-tpu 0.29.0" in done.stderr
    )
