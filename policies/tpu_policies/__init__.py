"""The tpu-stacks guardrails: every policy of the pack, importable without starting a server.

`policies/__main__.py` hands `POLICIES` to `PolicyPack`, which serves them to the Pulumi CLI;
tests and the offline plan drive the same list in-process. Facts (chips, topologies, HBM,
versions, labels, model shapes) come from `tpu_stacks`, never from this package.
"""

from __future__ import annotations

from pulumi_policy import Policy

from tpu_policies import (
    autoscaling,
    awaits,
    cluster,
    compute_class,
    exposure,
    fit,
    images,
    inference_pools,
    matching,
    pod_security,
    pools,
    privilege,
    secrets,
    serving_clients,
    slo,
    storage,
    zones,
)

PACK_NAME = "tpu-stacks-guardrails"
DESCRIPTION = (
    "TPU guardrails for GKE: models fit the slice, node pools and workloads agree on the slice shape, "
    "GKE versions support the TPU generation, TPU pools only in zones that offer them, Workload Identity, "
    "least-privilege storage, no plaintext secrets, pulumi up waits as long as the probes allow, HPAs scale "
    "on metrics the engine exports, InferencePools route to OpenAI servers they select, serving stacks carry "
    "their traffic target (measured figures), no privileged pods without a reason, no privilege escalation, "
    "seccomp on; advisory: no public endpoints, load balancers in front of model servers name their clients, "
    "pinned images, traffic targets on modelled figures, unsizable "
    "models, uncatalogued TPU zones, least-privilege pods, a restricted control plane."
)

POLICIES: list[Policy] = [
    fit.POLICY,
    pools.POLICY,
    zones.POLICY,
    matching.POLICY,
    compute_class.POLICY,
    cluster.VERSION_POLICY,
    cluster.IDENTITY_POLICY,
    cluster.GCSFUSE_POLICY,
    storage.IAM_POLICY,
    storage.BUCKET_POLICY,
    secrets.POLICY,
    exposure.POLICY,
    serving_clients.POLICY,
    images.POLICY,
    privilege.POLICY,
    awaits.POLICY,
    autoscaling.POLICY,
    inference_pools.POLICY,
    slo.POLICY,
    fit.UNSIZED_POLICY,
    slo.MODELLED_POLICY,
    zones.CATALOGUED_POLICY,
    pod_security.HARDENED_POLICY,
    pod_security.LEAST_PRIVILEGE_POLICY,
    pod_security.CONTROL_PLANE_POLICY,
]

__all__ = ["DESCRIPTION", "PACK_NAME", "POLICIES"]
