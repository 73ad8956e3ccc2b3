"""Run the pinned inference-perf for real, locally: in its own virtualenv, with a tokenizer built here, against the
vLLM stand-in (standin.py), with the configuration `bench` sends (config.py).

inference-perf 0.7.0 needs Python 3.12 (`Requires-Python: >=3.12`) and pins transformers==5.13.0, neither of which
the repository's own venv has, so it gets a virtualenv of its own (`python3.12`, or the interpreter
$TPU_STACKS_PYTHON312 names). The tokenizer is a word-level `tokenizers` tokenizer (one token per word of a
500-word vocabulary), saved as tokenizer.json with a tokenizer_config.json naming `PreTrainedTokenizerFast`, which
`AutoTokenizer.from_pretrained(<directory>)` loads without a download; the stand-in counts a prompt's words, so the
server's `usage.prompt_tokens` and the client's count agree.

    venv/bin/python -m tests.live.bench.real_run OUT_DIR    # the fixture: OUT_DIR/inference-perf.log and reports
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import yaml

from tests.live.bench.standin import StandIn
from tpu_stacks_live.bench.config import INFERENCE_PERF_VERSION, REPORTS_DIR, Workload, inference_perf_config

MODEL = "standin/word-level-500"
VOCABULARY = 500
WORKLOAD = Workload(rates=(2.0, 8.0), input_tokens=64, output_tokens=32, duration_s=10)
"""Two stages, short: the run takes about half a minute once the venv is there."""
TOKENIZER_SCRIPT = f"""
import json, sys
from pathlib import Path
from tokenizers import Tokenizer, models, pre_tokenizers
vocab = {{"<unk>": 0, **{{f"w{{i}}": i + 1 for i in range({VOCABULARY})}}}}
tokenizer = Tokenizer(models.WordLevel(vocab, unk_token="<unk>"))
tokenizer.pre_tokenizer = pre_tokenizers.WhitespaceSplit()
out = Path(sys.argv[1])
out.mkdir(parents=True, exist_ok=True)
tokenizer.save(str(out / "tokenizer.json"))
config = {{"tokenizer_class": "PreTrainedTokenizerFast", "unk_token": "<unk>", "model_max_length": 100000}}
(out / "tokenizer_config.json").write_text(json.dumps(config))
"""


def python312() -> str:
    """A Python 3.12 that runs: $TPU_STACKS_PYTHON312, `python3.12` on PATH, or a pyenv install of 3.12 (pyenv's
    shim for python3.12 fails where the directory's pyenv version is another one)."""
    pyenv = Path(os.environ.get("PYENV_ROOT", Path.home() / ".pyenv"))
    candidates = [os.environ.get("TPU_STACKS_PYTHON312"), shutil.which("python3.12")]
    candidates += [str(p) for p in sorted(pyenv.glob("versions/3.12*/bin/python3.12"))]
    for candidate in filter(None, candidates):
        probe = [candidate, "-c", "import sys; print(sys.version_info[:2] == (3, 12))"]
        done = subprocess.run(probe, capture_output=True, text=True, check=False)
        if done.returncode == 0 and done.stdout.strip() == "True":
            return candidate
    raise RuntimeError("inference-perf needs Python 3.12: put python3.12 on PATH or set TPU_STACKS_PYTHON312")


def make_venv(where: Path) -> Path:
    """A Python 3.12 virtualenv with the pinned inference-perf (from PyPI); its python."""
    subprocess.run([python312(), "-m", "venv", str(where)], check=True)
    python = where / "bin" / "python"
    install = [str(python), "-m", "pip", "install", "--quiet", f"inference-perf=={INFERENCE_PERF_VERSION}"]
    subprocess.run(install, check=True, timeout=1800)
    return python


def run(python: Path, work: Path) -> tuple[str, list[dict]]:
    """inference-perf's run against the stand-in: its stdout and stderr together (as `kubectl logs` shows a pod's),
    and the requests the stand-in received. The reports go under `work`/reports."""
    tokenizer = work / "tokenizer"
    subprocess.run([str(python), "-c", TOKENIZER_SCRIPT, str(tokenizer)], check=True)
    with StandIn(MODEL) as server:
        document = inference_perf_config(server.base_url, MODEL, str(tokenizer), WORKLOAD)
        document["storage"]["local_storage"]["path"] = str(work / Path(REPORTS_DIR).name)
        document["load"]["num_workers"] = 2
        config = work / "config.yml"
        config.write_text(yaml.safe_dump(document, sort_keys=False))
        done = subprocess.run(
            [str(python.parent / "inference-perf"), "--config_file", str(config)],
            cwd=work,
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            text=True,
            timeout=600,
            env={**os.environ, "HF_HUB_OFFLINE": "1", "PYTHONUNBUFFERED": "1"},
        )
        requests = list(server.requests)
    if done.returncode != 0:
        raise RuntimeError(f"inference-perf exited {done.returncode}:\n{done.stdout[-3000:]}")
    return done.stdout, requests


def main(out: Path) -> None:
    out.mkdir(parents=True, exist_ok=True)
    venv = out / "venv"
    python = venv / "bin" / "python" if (venv / "bin" / "inference-perf").exists() else make_venv(venv)
    log, requests = run(python, out)
    (out / "inference-perf.log").write_text(log)
    (out / "requests.json").write_text(json.dumps(requests[:3], indent=1))
    print(f"{len(requests)} requests; log in {out / 'inference-perf.log'}")


if __name__ == "__main__":
    main(Path(sys.argv[1]))
