"""Saxml's model server at the pinned version: image, user, and why no engine metrics are catalogued."""

from __future__ import annotations

from tpu_stacks.catalog.engines.record import (
    EngineVersion,
    Served,
)
from tpu_stacks.catalog.image_users import NONROOT_UID, ImageUser

SAXML = EngineVersion(
    engine="saxml",
    version="v1.1.0",
    images=("us-docker.pkg.dev/cloud-tpu-images/inference/sax-model-server",),
    workload="serve",
    user=ImageUser(
        NONROOT_UID,
        "google/saxml saxml/tools/docker/Dockerfile.* set no USER; the servers write only /tmp and HOME "
        "(the sax root and checkpoints are on GCS, through the API) [I: not run here]",
    ),
    # --platform_chip values known to the model server (google/saxml model_service_main.py @ v1.1.0, [SAX-IMAGES]).
    serves=(
        Served(
            generation="v5e", platform="tpuv5e", source="google/saxml model_service_main.py @ v1.1.0 ([SAX-IMAGES])"
        ),
    ),
    source="[K-SAX] sax-model-server-set: the model server's arguments name the cell, not the model; the model path "
    "is published later (saxutil publish), so nothing sizes a raw Saxml server from its container. No metrics: "
    "github.com/google/saxml @ v1.1.0 (70f314c7) starts no Prometheus endpoint (prometheus-client appears only as a "
    "pinned transitive requirement), so a Saxml dashboard shows GKE's system metrics only",
)
