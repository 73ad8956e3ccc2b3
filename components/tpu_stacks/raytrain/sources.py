"""The training image's sources, shipped with the package: where they are and what they hash to.

`trainer_image/` (a Dockerfile, cloudbuild.yaml and `raytrain_trainer.py`, which run in Cloud Build
and on the Ray head, not here) is package data, so a pip install has the folder to build from; it
is not a Python package. The hash names the image tag: a new trainer or Dockerfile gets a new one.
Pure: no provider SDK.
"""

from __future__ import annotations

import hashlib
from pathlib import Path
from typing import Any

from tpu_stacks.raytrain.spec import default_tag

TRAINER_IMAGE = "trainer_image"
"""The folder's name inside this package (`raytrain.spec.TRAINER_IMAGE_DIR` is its repository path)."""


def trainer_image_dir() -> Path:
    """The installed image folder: `gcloud builds submit <it>` builds the training image."""
    return Path(__file__).resolve().parent / TRAINER_IMAGE


def build_inputs_digest(folder: Path | None = None) -> str:
    """A short hash of the image's own files (relative paths and contents): a new trainer or
    Dockerfile gets a new tag; the same files give the same hash wherever the folder is."""
    folder = trainer_image_dir() if folder is None else folder
    files = sorted(p for p in folder.rglob("*") if p.is_file() and "__pycache__" not in p.parts)
    if not files:
        raise FileNotFoundError(f"no image sources in {folder}: is the package installed with its package data?")
    digest = hashlib.sha256()
    for path in files:
        digest.update(path.relative_to(folder).as_posix().encode() + b"\0" + path.read_bytes() + b"\0")
    return digest.hexdigest()[:8]


def with_default_tag(args: dict[str, Any]) -> dict[str, Any]:
    """The component's args with the image tag the checkout's sources give when none is set and the
    image is built here (`build: submit`): `<default_tag()>-<build_inputs_digest()>`. The scenario
    applies it (registry `prepare_args`), where the checkout is; a prebuilt image keeps its own tag."""
    image = dict(args.get("image") or {})
    if image.get("build", "submit") != "prebuilt" and "tag" not in image:
        image["tag"] = f"{default_tag()}-{build_inputs_digest()}"
    return {**args, "image": image}
