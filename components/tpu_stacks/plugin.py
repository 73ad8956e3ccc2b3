"""The components the plugin package publishes to other languages, listed explicitly.

A component is public when it is in `COMPONENTS`; a test checks that every ComponentResource
defined in the package is listed here (so none is forgotten) and that each declares its type
token as `tpu-stacks:index:<Class>`.
"""

from __future__ import annotations

import pulumi

from tpu_stacks.cluster.component import TpuCluster
from tpu_stacks.gcp.identity import WorkloadIdentity
from tpu_stacks.jetstream.component import JetStreamStack
from tpu_stacks.k8s.metrics_adapter import CustomMetricsAdapter
from tpu_stacks.raytrain.component import RayTrainStack
from tpu_stacks.saxml.component import SaxmlStack
from tpu_stacks.vllm.component import VllmStack

PACKAGE = "tpu-stacks"

COMPONENTS: tuple[type[pulumi.ComponentResource], ...] = (
    CustomMetricsAdapter,
    JetStreamStack,
    RayTrainStack,
    SaxmlStack,
    TpuCluster,
    VllmStack,
    WorkloadIdentity,
)


def public_components() -> list[type[pulumi.ComponentResource]]:
    return list(COMPONENTS)
