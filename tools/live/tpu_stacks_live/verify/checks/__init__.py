"""The checks, one module per group; importing this package registers every one of them (registry.CHECKS)."""

from tpu_stacks_live.verify.checks import crds, drift, gateway, kuberay, metrics, network, nodes, platform, smoke

__all__ = ["crds", "drift", "gateway", "kuberay", "metrics", "network", "nodes", "platform", "smoke"]
