"""MaxText, the trainer Ray Train runs: its `key=value` settings and how a container running it is recognised."""

from __future__ import annotations

from tpu_stacks.catalog.engines.record import (
    CommandMarker,
    EngineVersion,
    Flag,
)

MAXTEXT_CONFIG_SUFFIX = "configs/base.yml"
"""MaxText's first argument is its base config; a container running it is recognised by this path."""

MAXTEXT = EngineVersion(
    engine="maxtext",
    version="404cf1de701460671c4924521a70f07f26aa7d1c",  # raytrain/spec.py MAXTEXT_REVISION
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
