"""`tpu-stacks models fetch` against a local stand-in for Hugging Face (HF_ENDPOINT; tests never reach Hugging Face),
and `tpu-stacks size` of a model from its config.json: found under models/ without a flag, or named by
--model-config; `--json` reports `params` and `active_params`."""

import json
import os
import subprocess
import sys
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest

from tpu_stacks.catalog.model_catalogue import CONFIG_DIR

SCRIPT = str(Path(sys.executable).parent / "tpu-stacks")
QWEN3_MOE = (CONFIG_DIR / "Qwen/Qwen3-30B-A3B/config.json").read_bytes()
LLAMA = (CONFIG_DIR / "meta-llama/Llama-3.1-8B-Instruct/config.json").read_bytes()
INDEX = json.dumps({"metadata": {"total_size": 61_064_245_248}, "weight_map": {}}).encode()
GEMMA2 = (CONFIG_DIR / "google/gemma-2-9b/config.json").read_bytes()  # `torch_dtype: float32`, as published
FP32_INDEX = json.dumps({"metadata": {"total_size": 36_972_256_768}, "weight_map": {}}).encode()
TOKEN = "hf_standin_token_for_tests"


class StandIn(BaseHTTPRequestHandler):
    """Hugging Face's `/<org>/<name>/resolve/<revision>/<file>`: an open MoE with a safetensors index, and a gated
    model that answers 401 without the bearer token (as huggingface.co does for a gated repository)."""

    files = {
        "/acme/moe/resolve/main/config.json": (QWEN3_MOE, False),
        "/acme/moe/resolve/main/model.safetensors.index.json": (INDEX, False),
        "/acme/gated/resolve/main/config.json": (LLAMA, True),
        "/acme/fp32/resolve/main/config.json": (GEMMA2, False),
        "/acme/fp32/resolve/main/model.safetensors.index.json": (FP32_INDEX, False),
    }

    def do_GET(self):  # noqa: N802 (http.server's name)
        body, gated = self.files.get(self.path, (None, False))
        status = (
            404 if body is None else 401 if gated and self.headers.get("Authorization") != f"Bearer {TOKEN}" else 200
        )
        known = any(path.startswith(self.path.split("/resolve/")[0] + "/") for path in self.files)
        error = "GatedRepo" if status == 401 else "EntryNotFound" if known else "RepoNotFound"
        if body is None and not known:  # as the Hub: 401 for a repository that does not exist, named in a header
            status = 401
        self.send_response(status)
        if status != 200:
            self.send_header("X-Error-Code", error)
        self.send_header("Content-Length", str(len(body) if status == 200 else 0))
        self.end_headers()
        if status == 200:
            self.wfile.write(body)

    def log_message(self, *args):
        pass


@pytest.fixture(scope="module")
def endpoint():
    server = ThreadingHTTPServer(("127.0.0.1", 0), StandIn)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    yield f"http://127.0.0.1:{server.server_address[1]}"
    server.shutdown()


def run(*args: str, cwd: Path, **env: str) -> subprocess.CompletedProcess[str]:
    environment = {k: v for k, v in os.environ.items() if k not in ("HF_TOKEN", "HF_HOME")}
    environment.update({"HF_HOME": str(cwd / "no-hf-home"), "PYTHONWARNINGS": "ignore", **env})
    return subprocess.run([SCRIPT, *args], capture_output=True, text=True, cwd=cwd, env=environment)


def test_fetch_saves_config_and_index_and_size_finds_them(endpoint, tmp_path):
    done = run("models", "fetch", "acme/moe", "--json", cwd=tmp_path, HF_ENDPOINT=endpoint)
    assert done.returncode == 0, done.stderr
    saved = json.loads(done.stdout)
    assert (saved["architecture"], saved["gated"]) == ("Qwen3MoeForCausalLM", False)
    assert {engine: s["weight_bytes"] for engine, s in saved["served"].items()} == {
        "sglang": 61064245248,  # a bf16 checkpoint: every engine holds the files' bytes
        "vllm": 61064245248,
    }
    folder = tmp_path / "models" / "acme" / "moe"
    assert (folder / "config.json").read_bytes() == QWEN3_MOE
    assert json.loads((folder / "model.safetensors.index.json").read_text())["metadata"]["total_size"] == 61064245248
    sized = run("size", "acme/moe", "--tpu", "v6e", "--json", cwd=tmp_path)  # no flag: found under models/
    assert sized.returncode == 0, sized.stderr
    document = json.loads(sized.stdout)
    assert (round(document["params"] / 1e9, 1), round(document["active_params"] / 1e9, 1)) == (30.5, 3.4)
    assert document["memory"]["weights_bytes"] == 61064245248  # the index's exact bytes
    assert document["recommended"]["topology"] == "2x2"


def test_a_gated_model_needs_the_token_and_is_recorded_gated(endpoint, tmp_path):
    refused = run("models", "fetch", "acme/gated", cwd=tmp_path, HF_ENDPOINT=endpoint)
    assert refused.returncode == 2
    assert refused.stderr.startswith("tpu-stacks: MODEL: 'acme/gated' is gated on Hugging Face")
    assert not (tmp_path / "models").exists()
    done = run("models", "fetch", "acme/gated", cwd=tmp_path, HF_ENDPOINT=endpoint, HF_TOKEN=TOKEN)
    assert done.returncode == 0, done.stderr
    assert "LlamaForCausalLM, 8.03B params, no safetensors index; gated" in done.stdout
    assert json.loads((tmp_path / "models/acme/gated/fetched.json").read_text())["gated"] is True
    assert TOKEN not in done.stdout + done.stderr


def test_an_unknown_model_is_one_line_not_taken_for_a_gated_one(endpoint, tmp_path):
    """The Hub answers 401 for a repository that does not exist (X-Error-Code: RepoNotFound), as for a gated one."""
    done = run("models", "fetch", "acme/absent", cwd=tmp_path, HF_ENDPOINT=endpoint, HF_TOKEN=TOKEN)
    assert (done.returncode, done.stderr.strip()) == (
        2,
        f"tpu-stacks: MODEL: 'acme/absent' is not a model repository at {endpoint}; check the id on huggingface.co",
    )


def test_size_with_model_config_and_the_context_refusal(tmp_path):
    (tmp_path / "moe.json").write_bytes(QWEN3_MOE)
    done = run("size", "acme/moe", "--model-config", "moe.json", "--tpu", "v6e", cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    assert done.stdout.startswith("acme/moe: 30.53B params (3.35B active per token), serve on v6e")
    (tmp_path / "odd.json").write_bytes(QWEN3_MOE.replace(b"Qwen3MoeForCausalLM", b"Qwen3MoeForCausalLLM"))
    odd = run("size", "acme/odd", "--model-config", "odd.json", "--tpu", "v6e", cwd=tmp_path)
    assert odd.returncode == 2 and "did you mean a Qwen3MoeForCausalLM model?" in odd.stderr
    long = run("size", "acme/moe", "--model-config", "moe.json", "--tpu", "v6e", "--context", "65536", cwd=tmp_path)
    assert long.returncode == 2
    assert long.stderr.strip() == (
        "tpu-stacks: --context: 65536 is beyond acme/moe's context of 40,960 tokens (max_position_embeddings); "
        "give --context 40960"
    )


def test_an_fp32_checkpoint_is_reported_and_sized_at_each_engines_served_bytes(endpoint, tmp_path):
    """Gemma 2's files are fp32 (4 bytes a parameter). vLLM's `--dtype auto` holds them in bf16 (half the files;
    ledger: vllm.dtype.auto-downcasts-fp32); SGLang-JAX's keeps the config's fp32 (all of them: its
    model_config.py reads `torch_dtype` and `auto` keeps it, sglang/upstream.toml). `fetch` says both, and `size`
    with vLLM's figure."""
    done = run("models", "fetch", "acme/fp32", "--json", cwd=tmp_path, HF_ENDPOINT=endpoint)
    assert done.returncode == 0, done.stderr
    saved = json.loads(done.stdout)
    assert (saved["checkpoint_bytes"], saved["checkpoint_dtype"]) == (36_972_256_768, "fp32")
    assert saved["served"] == {
        "sglang": {"weight_bytes": 36_972_256_768, "weight_dtype": "fp32"},
        "vllm": {"weight_bytes": 18_486_128_384, "weight_dtype": "bf16"},
    }
    text = run("models", "fetch", "acme/fp32", cwd=tmp_path, HF_ENDPOINT=endpoint)
    assert (
        "9.24B params, 36,972,256,768 bytes of fp32 weights in sglang, 18,486,128,384 bytes of bf16 weights in vllm"
        in text.stdout
    ), text.stdout + text.stderr
    sized = run("size", "acme/fp32", "--tpu", "v6e", "--json", cwd=tmp_path)
    assert sized.returncode == 0, sized.stderr
    assert json.loads(sized.stdout)["memory"]["weights_bytes"] == 18_486_128_384


def test_the_licence_page_of_a_refusal_is_the_page_models_lists():
    """One source for a model's Hub page: `models` lists it, and `models fetch`'s refusals send the user to it."""
    from tpu_stacks.cli import models, models_fetch

    assert models.HF_PAGE is models_fetch.HF_PAGE
    assert models.entry(models.MODELS[0])["page"] == models_fetch.HF_PAGE.format(models.MODELS[0].hf_id)
