"""The disk type of a TPU VM's scratch volume, and the StorageClass GKE ships for each disk type.

A generation's VMs attach only some disk types (v6e: Hyperdisk only; its record's `disk_types`, in
catalog/tpu.py), so a scratch volume's class must follow the pool's generation, never a fixed `standard-rwo`.
"""

from __future__ import annotations

from tpu_stacks.catalog.tpu import Generation, generation

PREINSTALLED_STORAGE_CLASSES = {"pd-balanced": "standard-rwo"}
"""GKE's own StorageClass per disk type: standard-rwo is pd-balanced ("Using the Compute Engine persistent
disk CSI Driver"); for Hyperdisk, GKE's "Scale your storage performance with Hyperdisk" creates one."""


def scratch_disk_type(gen: str | Generation) -> str:
    """The disk type of a read-write scratch volume on this generation's VMs: the first one they attach
    (`Generation.disk_types`, each with its source)."""
    chosen = gen if isinstance(gen, Generation) else generation(gen)
    return chosen.disk_types[0]
