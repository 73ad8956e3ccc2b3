"""Saxml's model server as the engine catalogue knows it, declared in its own folder (descriptor.py `engine`): the
pinned version's image, user, and why no engine metrics are catalogued; its serving API (gRPC, fronted by Sax HTTP)
and the gateway's answer. Shared code collects this through the registry (catalog/engines/declared.py).
"""

from __future__ import annotations

from tpu_stacks.catalog.engines.declared import EngineDeclaration, GatewaySupport
from tpu_stacks.catalog.engines.record import (
    EngineVersion,
    Served,
)
from tpu_stacks.catalog.image_users import NONROOT_UID, ImageUser
from tpu_stacks.catalog.inference_gateway import SAX_HTTP_REPOSITORY, ServingApi

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

ENGINE = EngineDeclaration(
    versions=(SAXML,),
    api=ServingApi(
        engine="saxml",
        openai=False,
        port_flag=None,
        default_port=None,
        why="a Saxml model server answers its admin server's gRPC (saxutil, the Sax HTTP client), not OpenAI's APIs",
        source="[K-SAX]",
        serves_models=True,
        front_ends=(SAX_HTTP_REPOSITORY,),
    ),
    gateway=GatewaySupport(
        fronts=False,
        why="a Saxml model server answers gRPC, not OpenAI's Completions and Chat, and exports none of the Model "
        "Server Protocol's gauges the endpoint picker scores replicas by; reach it through Sax HTTP's Service",
    ),
)
"""Saxml for the catalogue's shared tables (collected by catalog/engines/declared.py); no traffic entry (the traffic
model does not know it) and no model-class check (the model server runs the model paths it has)."""
