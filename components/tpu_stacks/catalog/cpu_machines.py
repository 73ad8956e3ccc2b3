"""CPU machine types as a node pool holds them: each catalogued type's vCPUs and memory, the disk types its VMs
attach, and what GKE leaves its pods (allocatable), so a pool can be sized from what its pods request.

Why: a CPU pool for a Job (the JetStream converter's 8 CPUs and 64Gi) must hold that Job on one node after GKE's
reservations, or the pod stays Pending and the pool never scales down; and a scratch disk must be a type its VMs
attach (N4 attaches only Hyperdisk). Facts kept elsewhere are read there: the predefined sizes of every series are
catalog/locations.py's `CPU_SERIES` (one list), custom types its `CUSTOM_TYPE`. Pure: no provider SDK.
"""

from __future__ import annotations

import math
from decimal import Decimal

from pydantic import BaseModel, ConfigDict

from tpu_stacks.catalog.locations import CPU_SERIES, CUSTOM_TYPE, GENERAL_PURPOSE
from tpu_stacks.gcp.universe import Source

GiB = 1024**3
MiB = 1024**2
MEMORY_SOURCE = GENERAL_PURPOSE
"""Where the memory of each kind comes from (the series' tables of predefined types)."""

MEMORY_GB_PER_VCPU: dict[str, dict[str, float]] = {
    "e2": {"standard": 4, "highmem": 8, "highcpu": 1},
    "n1": {"standard": 3.75},
    "n2": {"standard": 4, "highmem": 8, "highcpu": 1},
    "n2d": {"standard": 4, "highmem": 8, "highcpu": 1},
    "n4": {"standard": 4, "highmem": 8, "highcpu": 2},
    "c3": {"standard": 4, "highmem": 8, "highcpu": 2},
    "c3d": {"standard": 4, "highmem": 8, "highcpu": 2},
}
"""Memory of a predefined `SERIES-KIND-VCPUS` type per vCPU (MEMORY_SOURCE: e2-highmem-16 has 16 vCPUs and 128 GB).
Compute Engine's machine-type "GB" are binary (GiB): a 16 GB e2-standard-4 node reports 16 GiB less the kernel's."""
OFF_RATIO_GB = {
    "n2-highmem-128": 864,
    "c3d-highcpu-30": 59,
    "c3d-highcpu-60": 118,
    "c3d-highcpu-90": 177,
    "c3d-highcpu-180": 354,
    "c3d-highcpu-360": 708,
}
"""The predefined types whose memory is not vCPUs x their kind's ratio (GENERAL_PURPOSE): N2's largest highmem, and
C3D's highcpu types from 30 vCPUs (59 GB, not 60; tests/catalog/test_machine_type_sources.py checks every type)."""
NAMED_SHAPES: dict[str, tuple[int, float]] = {"e2-micro": (2, 1), "e2-small": (2, 2), "e2-medium": (2, 4)}
"""E2's shared-core types: (vCPUs shown to the guest, GB); they burst on a fraction of a core (GENERAL_PURPOSE)."""

DISK_SUPPORT = Source(
    title="Compute Engine: General-purpose machine family (each series' supported disk types)",
    url="https://cloud.google.com/compute/docs/general-purpose-machines",
    checked="2026-11-30",
)
SERIES_DISK_TYPES: dict[str, tuple[str, ...]] = {
    "e2": ("pd-balanced",),
    "n1": ("pd-balanced",),
    "n2": ("pd-balanced",),
    "n2d": ("pd-balanced",),
    "n4": ("hyperdisk-balanced",),
    "c3": ("pd-balanced", "hyperdisk-balanced"),
    "c3d": ("pd-balanced", "hyperdisk-balanced"),
}
"""The read-write disk types each series' VMs attach, the one to use first (DISK_SUPPORT): N4 attaches Hyperdisk
only; E2, N1, N2 and N2D Persistent Disk (pd-balanced among them); C3 and C3D both."""


class CpuShape(BaseModel):
    """What a machine type gives a node: vCPUs and memory (bytes), and its series."""

    model_config = ConfigDict(frozen=True)

    name: str
    series: str
    vcpus: int
    memory_bytes: int

    @property
    def memory_gib(self) -> float:
        return self.memory_bytes / GiB


def _gb(value: float) -> int:
    return int(Decimal(str(value)) * GiB)


def _predefined() -> dict[str, CpuShape]:
    shapes: dict[str, CpuShape] = {}
    for series in CPU_SERIES:
        for kind, counts in series.sizes.items():
            for vcpus in counts:
                name = f"{series.name}-{kind}-{vcpus}"
                memory = OFF_RATIO_GB.get(name, vcpus * MEMORY_GB_PER_VCPU[series.name][kind])
                shapes[name] = CpuShape(name=name, series=series.name, vcpus=vcpus, memory_bytes=_gb(memory))
        for name in series.named:
            vcpus, memory = NAMED_SHAPES[name]
            shapes[name] = CpuShape(name=name, series=series.name, vcpus=vcpus, memory_bytes=_gb(memory))
    return shapes


PREDEFINED: dict[str, CpuShape] = _predefined()
"""Every predefined CPU type of the catalogue (catalog/locations.py `CPU_SERIES`), with its vCPUs and memory."""


def machine_shape(name: str) -> CpuShape | None:
    """A catalogued CPU type's vCPUs and memory (a custom type's from its name: `n2-custom-10-81920` is 10 vCPUs
    and 81920 MB), or None for a type the catalogue does not know."""
    if name in PREDEFINED:
        return PREDEFINED[name]
    match = CUSTOM_TYPE.match(name)
    if match is None:
        return None
    series = match["series"] or "n1"
    return CpuShape(name=name, series=series, vcpus=int(match["vcpus"]), memory_bytes=int(match["memory"]) * MiB)


def disk_types(machine_type: str) -> tuple[str, ...] | None:
    """The disk types a CPU machine type's VMs attach (first: the one to use), None for an unknown series."""
    series = machine_type.split("-", 1)[0]
    if series == "custom":  # `custom-VCPUS-MB` is N1's spelling (CUSTOM_TYPE)
        series = "n1"
    return SERIES_DISK_TYPES.get(series)


# -- what GKE leaves the pods: ledger: gke.node-allocatable ------------------------------------------------------

CPU_RESERVATION = ((1, Decimal("0.06")), (1, Decimal("0.01")), (2, Decimal("0.005")), (math.inf, Decimal("0.0025")))
"""(cores, share reserved): 6% of the first core, 1% of the next, 0.5% of the next 2, 0.25% of any above 4."""
MEMORY_RESERVATION = (
    (4, Decimal("0.25")),
    (4, Decimal("0.20")),
    (8, Decimal("0.10")),
    (112, Decimal("0.06")),
    (math.inf, Decimal("0.02")),
)
"""(GiB, share reserved): 25% of the first 4 GiB, 20% of the next 4, 10% of the next 8, 6% of the next 112, 2% of
any above 128 (255 MiB on a machine with less than 1 GiB)."""
SMALL_MACHINE_RESERVATION = 255 * MiB
EVICTION_THRESHOLD = 100 * MiB
"""Memory kept free for the kubelet's eviction, on every node."""
KERNEL_SHARE = Decimal("0.03")
"""Memory a node's kernel keeps from its nominal size, as an allowance: GKE's own example node (plan-node-sizes,
an e2-standard-4) has 13498416Ki allocatable, 2.7% of 16 GiB less than the reservations above leave of 16 GiB."""
SYSTEM_PODS_CPU_MILLIS = 500
SYSTEM_PODS_MEMORY = 1 * GiB
"""Room for the node's own pods (GKE's DaemonSets: networking, logging, metrics, the CSI drivers), which also
request from allocatable: an allowance, not a measurement [I] (docs/verify-on-a-cluster.md, `jobs-pool-allocatable`,
reads a real node's)."""


def _tiered(amount: Decimal, tiers: tuple[tuple[float, Decimal], ...]) -> Decimal:
    reserved, left = Decimal(0), amount
    for size, share in tiers:
        step = left if size == math.inf else min(left, Decimal(size))
        reserved += step * share
        left -= step
        if left <= 0:
            break
    return reserved


def allocatable(shape: CpuShape) -> tuple[int, int]:
    """(CPU in millicores, memory in bytes) the kubelet offers pods on a node of this shape (GKE's reservations)."""
    cpu = Decimal(shape.vcpus) * 1000 - _tiered(Decimal(shape.vcpus), CPU_RESERVATION) * 1000
    memory = Decimal(shape.memory_bytes)
    if memory < GiB:
        reserved = Decimal(SMALL_MACHINE_RESERVATION)
    else:
        reserved = _tiered(memory / GiB, MEMORY_RESERVATION) * GiB
    left = memory * (1 - KERNEL_SHARE) - reserved - EVICTION_THRESHOLD
    return int(cpu), max(0, int(left))


def pod_room(shape: CpuShape) -> tuple[int, int]:
    """What one more pod may request on an otherwise empty node: allocatable less the node's own pods."""
    cpu, memory = allocatable(shape)
    return cpu - SYSTEM_PODS_CPU_MILLIS, memory - SYSTEM_PODS_MEMORY


def holds(shape: CpuShape, cpu_millis: int, memory_bytes: int) -> bool:
    cpu, memory = pod_room(shape)
    return cpu >= cpu_millis and memory >= memory_bytes


JOBS_SERIES = ("e2", "n2")
"""Where a pool for Jobs is looked for, in order: E2 first ("the lowest price on Compute Engine", the machine-types
page GENERAL_PURPOSE links), N2 for what E2's 32 vCPUs and 128 GB cannot hold. Both attach pd-balanced."""


def smallest_holding(cpu_millis: int, memory_bytes: int, series: tuple[str, ...] = JOBS_SERIES) -> CpuShape | None:
    """The predefined type of the first series that holds one pod of this size: the fewest vCPUs, then the least
    memory; None when none does."""
    for name in series:
        candidates = sorted(
            (shape for shape in PREDEFINED.values() if shape.series == name and shape.name not in NAMED_SHAPES),
            key=lambda shape: (shape.vcpus, shape.memory_bytes),
        )
        found = next((shape for shape in candidates if holds(shape, cpu_millis, memory_bytes)), None)
        if found is not None:
            return found
    return None
