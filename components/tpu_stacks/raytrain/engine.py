"""MaxText, the trainer Ray Train runs, as the engine catalogue knows it, declared in its own folder (descriptor.py
`engine`): its `key=value` settings, how a container running it is recognised (the policy pack sizes a hand-written
MaxText pod by these), its API (it serves none) and the gateway's answer. Only this workload runs MaxText, so shared
code collects it through the registry (catalog/engines/declared.py) and asks `trains()`, never the name. Ray itself
is the catalogue's own (catalog/engines/ray.py): multi-host vLLM runs it too.
"""

from __future__ import annotations

from tpu_stacks.catalog.engines.declared import EngineDeclaration, GatewaySupport
from tpu_stacks.catalog.engines.record import (
    CommandMarker,
    EngineVersion,
    Flag,
)
from tpu_stacks.catalog.engines.serving_api import ServingApi

MAXTEXT_REVISION = "404cf1de701460671c4924521a70f07f26aa7d1c"
"""MaxText, fetched at one commit (the tutorial clones the unpinned HEAD, [K-RAY] Dockerfile). At this commit
src/MaxText/train.py has `main(argv)` and pyproject.toml declares `install_maxtext_github_deps`."""
MAXTEXT_CONFIG_SUFFIX = "configs/base.yml"
"""MaxText's first argument is its base config; a container running it is recognised by this path."""

MAXTEXT = EngineVersion(
    engine="maxtext",
    version=MAXTEXT_REVISION,
    images=(),  # built by the user (raytrain/trainer_image): recognised by its base.yml argument instead
    workload="train",
    arguments="settings",
    # `python3 -m MaxText.train src/MaxText/configs/base.yml key=value ...` ([K-RAY])
    commands=(CommandMarker(program=MAXTEXT_CONFIG_SUFFIX), CommandMarker(contains="MaxText.train")),
    flags=(
        Flag(name="model_name", meaning="model", note="MaxText model config name, e.g. llama3-8b"),
        Flag(name="per_device_batch_size", meaning="per_device_batch", default="12"),
        Flag(name="max_target_length", meaning="context", default="2048"),
        Flag(name="weight_dtype", meaning="weight_dtype", default="float32"),
        Flag(name="ici_<axis>_parallelism", meaning="parallelism", note="the mesh inside one slice"),
    ),
    source="AI-Hypercomputer/maxtext src/MaxText/configs/base.yml (keys and defaults; read at stored commit "
    "003b4169, later than the pin: per_device_batch_size 12.0, max_target_length 2048, weight_dtype float32); "
    "[K-RAY] (the tutorial's key=value arguments)",
)

ENGINE = EngineDeclaration(
    versions=(MAXTEXT,),
    api=ServingApi(
        engine="maxtext",
        openai=False,
        port_flag=None,
        default_port=None,
        why="MaxText here is a trainer: it serves no requests",
        source="[K-RAY]",
        serves_models=False,
    ),
    gateway=GatewaySupport(
        fronts=False,
        why="MaxText here is a trainer: it serves no requests, so there is nothing for the endpoint picker to route",
    ),
)
"""MaxText for the catalogue's shared tables (collected by catalog/engines/declared.py); no traffic entry (the
traffic model sizes servers) and no model-class check (its `model_name` is one of MaxText's own configs)."""
