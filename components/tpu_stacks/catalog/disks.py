"""Block storage TPU VMs attach, per generation, and the StorageClass GKE ships for each disk type.

A generation's VMs attach only some disk types (v6e: Hyperdisk only), so a scratch volume's class must
follow the pool's generation, never a fixed `standard-rwo`.
"""

from __future__ import annotations

from tpu_stacks.catalog.tpu import Generation, generation

# Block storage a generation's VMs attach ("Attach durable block storage to a TPU VM",
# cloud.google.com/tpu/docs/setup-persistent-disk: v6e Hyperdisk Balanced and Hyperdisk ML only; v5p,
# v5e, v4 Balanced Persistent Disk. tpu7x: [CTK] pools use hyperdisk-balanced).
DISK_TYPES: dict[str, tuple[str, ...]] = {
    "v4": ("pd-balanced",),
    "v5e": ("pd-balanced",),
    "v5p": ("pd-balanced",),
    "v6e": ("hyperdisk-balanced", "hyperdisk-ml"),
    "tpu7x": ("hyperdisk-balanced",),
}
PREINSTALLED_STORAGE_CLASSES = {"pd-balanced": "standard-rwo"}
"""GKE's own StorageClass per disk type: standard-rwo is pd-balanced ("Using the Compute Engine persistent
disk CSI Driver"); for Hyperdisk, GKE's "Scale your storage performance with Hyperdisk" creates one."""


def scratch_disk_type(gen: str | Generation) -> str:
    """The disk type of a read-write scratch volume on this generation's VMs: the first one they attach."""
    chosen = gen if isinstance(gen, Generation) else generation(gen)
    return DISK_TYPES[chosen.name][0]
