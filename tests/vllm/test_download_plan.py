"""vllm/download_plan.py's figures and command, against the numbers its own sources give: Llama 3.1 405B's 811.7 GB
at the assumed 100 MB/s, gcsfuse's 175 MiB/s single reader, GKE's sample Job's layout (`/data/<model id>`)."""

from __future__ import annotations

import ast

from tpu_stacks.vllm import download_plan

LLAMA_405B_BYTES = 811_700_000_000


def test_the_405b_download_takes_136_minutes_and_the_job_allows_node_image_and_download():
    # 811.7e9 B / 100e6 B/s = 8117 s = 135.3 min, rounded up; the Job's deadline adds a CPU node (15) and the image (10)
    assert download_plan.download_minutes(LLAMA_405B_BYTES) == 136
    assert download_plan.deadline_seconds(LLAMA_405B_BYTES) == (15 + 10 + 136) * 60
    assert download_plan.download_minutes(100 * 10**6 * 60) == 1  # exactly a minute's bytes: one minute


def test_a_host_reads_the_405b_checkpoint_in_74_minutes():
    # 811.7e9 B / (175 x 2**20 B/s) = 4423.4 s = 73.7 min, rounded up
    assert download_plan.load_minutes(LLAMA_405B_BYTES) == 74
    assert download_plan.load_minutes(175 * 2**20 * 60) == 1


def test_the_model_lands_under_its_hugging_face_id_and_the_writer_is_the_servers_account_plus_a_suffix():
    assert download_plan.model_path("/data/", "meta-llama/Llama-3.1-405B") == "/data/meta-llama/Llama-3.1-405B"
    assert download_plan.model_path("/data", "meta-llama/Llama-3.1-405B") == "/data/meta-llama/Llama-3.1-405B"
    assert download_plan.writer_ksa("vllm") == "vllm-weights-writer"


def test_the_command_downloads_what_vllm_loads_with_four_workers():
    """vLLM's own download skips `original/**/*` (weight_utils.py `download_weights_from_hf`); huggingface_hub's
    `snapshot_download` takes allow and ignore patterns and `max_workers`."""
    python, flag, script, model, path = download_plan.command("meta-llama/Llama-3.1-405B", "/data/x")
    assert (python, flag, model, path) == ("python3", "-c", "meta-llama/Llama-3.1-405B", "/data/x")
    call = next(
        node
        for node in ast.walk(ast.parse(script))
        if isinstance(node, ast.Call) and getattr(node.func, "id", "") == "snapshot_download"
    )
    keywords = {k.arg: ast.literal_eval(k.value) for k in call.keywords if k.arg != "repo_id" and k.arg != "local_dir"}
    assert keywords == {
        "allow_patterns": ["*.json", "*.safetensors", "*.model", "*.txt", "*.tiktoken"],
        "ignore_patterns": ["original/*"],
        "max_workers": 4,
    }


def test_gcsfuse_may_stage_four_five_gib_shards_and_some_room():
    # transformers shards at 5GB; four files at once; 4 GiB beside them
    assert download_plan.STAGED_GIB == 4 * 5 + 4
