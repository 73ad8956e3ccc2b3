"""Entry point of the tpu-stacks plugin package.

The Python language host imports this module and hosts every ComponentResource that is a
top-level name here; run directly (older hosts), it serves them explicitly.
"""

from pulumi.provider.experimental import component_provider_host

from tpu_stacks.cluster import TpuCluster
from tpu_stacks.identity import WorkloadIdentity
from tpu_stacks.metrics_adapter import CustomMetricsAdapter
from tpu_stacks.vllm import VllmStack

COMPONENTS = [TpuCluster, WorkloadIdentity, CustomMetricsAdapter, VllmStack]

if __name__ == "__main__":
    component_provider_host(COMPONENTS, name="tpu-stacks")
