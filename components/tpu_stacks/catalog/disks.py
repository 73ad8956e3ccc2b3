"""The disk type of a scratch volume on the VMs that run it, and the StorageClass GKE ships for each disk type.

A VM attaches only some disk types: a TPU generation's VMs per its record's `disk_types` (v6e: Hyperdisk only, in
catalog/tpu.py), a CPU machine's per its series (N4: Hyperdisk only, in catalog/cpu_machines.py). So a scratch
volume's class must follow the machine it lands on, never a fixed `standard-rwo`.
"""

from __future__ import annotations

from tpu_stacks.catalog.cpu_machines import disk_types
from tpu_stacks.catalog.tpu import Generation, generation, generation_of_machine_type

PREINSTALLED_STORAGE_CLASSES = {"pd-balanced": "standard-rwo"}
"""GKE's own StorageClass per disk type: standard-rwo is pd-balanced ("Using the Compute Engine persistent
disk CSI Driver"); for Hyperdisk, GKE's "Scale your storage performance with Hyperdisk" creates one."""


def scratch_disk_type(where: str | Generation) -> str:
    """The disk type of a read-write scratch volume: the first one the VMs attach. `where` is a TPU generation
    (its VMs, `Generation.disk_types`, each with its source) or a machine type, TPU or CPU (its series' types)."""
    if isinstance(where, Generation):
        return where.disk_types[0]
    tpu = generation_of_machine_type(where)
    if tpu is not None:
        return tpu.disk_types[0]
    cpu = disk_types(where)
    if cpu is not None:
        return cpu[0]
    return generation(where).disk_types[0]  # a generation's name (an unknown one is refused there)
