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
    matching,
    pools,
    privilege,
    secrets,
    storage,
)

PACK_NAME = "tpu-stacks-guardrails"
DESCRIPTION = (
    "TPU guardrails for GKE: models fit the slice, node pools and workloads agree on the slice shape, "
    "GKE versions support the TPU generation, Workload Identity, least-privilege storage, no plaintext "
    "secrets, pulumi up waits as long as the probes allow, HPAs scale on metrics the engine exports, no "
    "privileged pods without a reason; advisory: no public endpoints, pinned images, unsizable models."
)

POLICIES: list[Policy] = [
    fit.POLICY,
    pools.POLICY,
    matching.POLICY,
    compute_class.POLICY,
    cluster.VERSION_POLICY,
    cluster.IDENTITY_POLICY,
    cluster.GCSFUSE_POLICY,
    storage.IAM_POLICY,
    storage.BUCKET_POLICY,
    secrets.POLICY,
    exposure.POLICY,
    images.POLICY,
    privilege.POLICY,
    awaits.POLICY,
    autoscaling.POLICY,
    fit.UNSIZED_POLICY,
]

__all__ = ["DESCRIPTION", "PACK_NAME", "POLICIES"]
