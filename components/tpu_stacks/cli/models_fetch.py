"""`tpu-stacks models fetch ORG/NAME`: save a Hugging Face model's config.json and safetensors index under `models/`.

`plan` and `size` then find the model by its id without `modelConfig` / `--model-config`
(catalog/model_catalogue.py). What is fetched, from `HF_ENDPOINT` (default https://huggingface.co; the variable
huggingface_hub reads, https://huggingface.co/docs/huggingface_hub/package_reference/environment_variables):
- `<endpoint>/<id>/resolve/<revision>/config.json`: the shape, read and checked before anything is written;
- `<endpoint>/<id>/resolve/<revision>/model.safetensors.index.json`: `metadata.total_size`, the checkpoint's exact
  bytes (a single-file checkpoint has none: its weights are sized from the parameter count);
- `fetched.json`: where they came from, and whether the files needed a token (a gated model: its stack needs
  `tpu-stacks:hfToken`).
The token is the one huggingface_hub uses: `HF_TOKEN`, else the file `huggingface-cli login` writes
(`$HF_HOME/token`, HF_HOME defaulting to ~/.cache/huggingface). It is sent only when the anonymous request is
refused (401 or 403), so a model that needs none is recorded as not gated.
"""

from __future__ import annotations

import json
import os
import re
import urllib.error
import urllib.request
from pathlib import Path
from typing import TYPE_CHECKING, Any

from tpu_stacks.catalog.engines import dtype_rules
from tpu_stacks.catalog.hf_config import architecture_from_config, total_size
from tpu_stacks.catalog.model_catalogue import CONFIG_FILE, FETCHED_FILE, INDEX_FILE, PROJECT_MODELS
from tpu_stacks.errors import UserError

if TYPE_CHECKING:
    from tpu_stacks.catalog.model_shape import ModelArchitecture

DEFAULT_ENDPOINT = "https://huggingface.co"
HF_PAGE = DEFAULT_ENDPOINT + "/{}"
"""A model's page: its card, its licence and (for a gated one) the access form; on huggingface.co whatever
HF_ENDPOINT says, since a licence is accepted there."""
MODEL_ID = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.-]*/[A-Za-z0-9][A-Za-z0-9_.-]*")
TIMEOUT_SECONDS = 60


def hf_token() -> str | None:
    """HF_TOKEN, else the token file huggingface-cli login writes; None when neither is there."""
    token = os.environ.get("HF_TOKEN")
    if token:
        return token.strip()
    home = Path(os.environ.get("HF_HOME") or Path.home() / ".cache" / "huggingface")
    file = home / "token"
    return file.read_text().strip() or None if file.is_file() else None


def _get(url: str, token: str | None) -> bytes:
    request = urllib.request.Request(url, headers={"User-Agent": "tpu-stacks"})
    if token:
        request.add_header("Authorization", f"Bearer {token}")
    with urllib.request.urlopen(request, timeout=TIMEOUT_SECONDS) as response:  # noqa: S310 (an https endpoint)
        return response.read()


def download(model_id: str, name: str, endpoint: str, revision: str) -> tuple[bytes | None, bool]:
    """A file of the model (None when the repository has no such file) and whether it needed the token."""
    url = f"{endpoint}/{model_id}/resolve/{revision}/{name}"
    try:
        return _get(url, None), False
    except urllib.error.HTTPError as error:
        # The Hub answers 401 for a repository that does not exist too, and names which in X-Error-Code
        # (RepoNotFound, EntryNotFound, GatedRepo): huggingface_hub's own client reads it so
        # (src/huggingface_hub/utils/_http.py, hf_raise_for_status; github.com/huggingface/huggingface_hub).
        kind = error.headers.get("X-Error-Code") if error.headers else None
        if error.code == 404 or kind == "EntryNotFound":
            return None, False
        if kind == "RepoNotFound":
            raise UserError(
                "MODEL", model_id, f"is not a model repository at {endpoint}", "check the id on huggingface.co"
            ) from None
        if error.code not in (401, 403):
            raise UserError(
                "MODEL", model_id, f"could not be fetched: {url} answered {error.code}", "try again"
            ) from None
    except (urllib.error.URLError, TimeoutError) as error:
        reason = getattr(error, "reason", error)
        raise UserError(
            "MODEL", model_id, f"could not be fetched from {endpoint} ({reason})", "check HF_ENDPOINT"
        ) from None
    token = hf_token()
    if token is None:
        raise UserError(
            "MODEL",
            model_id,
            "is gated on Hugging Face (the anonymous download was refused)",
            f"accept its licence at {HF_PAGE.format(model_id)} and set HF_TOKEN (or run huggingface-cli login)",
        )
    try:
        return _get(url, token), True
    except (urllib.error.URLError, TimeoutError) as error:
        if not isinstance(error, urllib.error.HTTPError):
            reason = getattr(error, "reason", error)
            raise UserError(
                "MODEL", model_id, f"could not be fetched from {endpoint} ({reason})", "check HF_ENDPOINT"
            ) from None
        raise UserError(
            "HF_TOKEN",
            "<the token>",
            f"was refused for {model_id} ({error.code})",
            f"accept the model's licence at {HF_PAGE.format(model_id)} with the token's account",
        ) from None


def fetch(model_id: str, root: Path, endpoint: str | None = None, revision: str = "main") -> dict[str, Any]:
    """Save the model's files under `root/models/<id>/`; what was saved, as `models fetch --json` prints it."""
    if not MODEL_ID.fullmatch(model_id) or ".." in model_id:
        raise UserError(
            "MODEL", model_id, "is not a Hugging Face model id", "write ORG/NAME, e.g. Qwen/Qwen2.5-7B-Instruct"
        )
    base = (endpoint or os.environ.get("HF_ENDPOINT") or DEFAULT_ENDPOINT).rstrip("/")
    config_bytes, gated = download(model_id, CONFIG_FILE, base, revision)
    if config_bytes is None:
        raise UserError("MODEL", model_id, f"has no config.json at {base}", "check the id on huggingface.co")
    try:
        config = json.loads(config_bytes)
    except (json.JSONDecodeError, UnicodeDecodeError):
        raise UserError("MODEL", model_id, "has a config.json that is not JSON", "check the repository") from None
    architecture_from_config(config, name=model_id, source=f"{base}/{model_id}/{CONFIG_FILE}")  # refused early
    index_bytes, _ = download(model_id, INDEX_FILE, base, revision)
    index: dict[str, Any] = {}
    if index_bytes is not None:  # checked before anything is written: `size` must not find a broken file later
        try:
            index = json.loads(index_bytes)
        except (json.JSONDecodeError, UnicodeDecodeError):
            index = None  # type: ignore[assignment]
        if not isinstance(index, dict):
            raise UserError("MODEL", model_id, f"has an {INDEX_FILE} that is not a JSON object", "check the repository")
    folder = root / PROJECT_MODELS / model_id
    folder.mkdir(parents=True, exist_ok=True)
    (folder / CONFIG_FILE).write_bytes(config_bytes)
    if index_bytes is not None:
        (folder / INDEX_FILE).write_bytes(index_bytes)
    record = {"model": model_id, "endpoint": base, "revision": revision, "gated": gated}
    (folder / FETCHED_FILE).write_text(json.dumps(record, indent=2) + "\n")
    checkpoint = total_size(index) if index else None
    model = architecture_from_config(
        config, name=model_id, source=f"{base}/{model_id}/{CONFIG_FILE}", weight_bytes=checkpoint
    )
    return {
        **record,
        "directory": str(folder),
        "architecture": model.architecture,
        "params": model.params,
        "active_params": model.active_params,
        "checkpoint_bytes": checkpoint,
        "checkpoint_dtype": model.checkpoint_dtype,
        "served": served(model, exact=checkpoint is not None),
    }


def served(model: ModelArchitecture, *, exact: bool) -> dict[str, dict[str, Any]]:
    """How each engine with a dtype rule holds the weights at its `--dtype auto` (the stacks' setting): the dtype
    and, from the checkpoint's exact size, the bytes. The engines differ (vLLM serves an fp32 checkpoint in bf16,
    SGLang-JAX keeps fp32), so no single figure is the model's."""
    return {
        engine: {"weight_dtype": dtype, "weight_bytes": model.weights_bytes(dtype) if exact else None}
        for engine, rule in sorted(dtype_rules().items())
        for dtype in [rule.auto(model)]
    }
