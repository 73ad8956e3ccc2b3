"""`RayTrainStack`: Ray Train + MaxText training (the tutorial [D-GKE-RAY]).

Each workload package has the same files: `args.py` (typed inputs, the multi-language schema,
generated from the spec), `outputs.py` (typed outputs),
`spec.py` (the validated config and upstream facts), `plan.py` (every decision, pure: no provider
SDK), `component.py` (resources), and its own pieces; here `pods.py` (the RayCluster's pod
templates), `image.py` (the image repository and its build), `sources.py` (pure: where the image's
files are installed and their hash) and `trainer_image/` (package data, not a Python package: the
Dockerfile, cloudbuild.yaml and the trainer, which run in Cloud Build and on the Ray head).
Importing the package loads no provider SDK; `RayTrainStack` is loaded on first use.
"""

from typing import Any


def __getattr__(name: str) -> Any:
    if name == "RayTrainStack":
        from tpu_stacks.raytrain.component import RayTrainStack

        return RayTrainStack
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
