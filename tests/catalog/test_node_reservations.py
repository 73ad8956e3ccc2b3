"""catalog/cpu_machines.py's GKE reservations against the page the ledger quotes (ledger: gke.node-allocatable, GKE's
"Plan node sizes": the memory tiers quoted word for word, the rest in the row's claim)."""

import math
import re
from decimal import Decimal

from tpu_stacks.catalog.cpu_machines import (
    CPU_RESERVATION,
    EVICTION_THRESHOLD,
    MEMORY_RESERVATION,
    SMALL_MACHINE_RESERVATION,
    MiB,
)
from tpu_stacks.catalog.upstream import fact

ROW = fact("gke.node-allocatable")


def test_the_memory_tiers_are_the_quoted_ones():
    tiers = [
        (int(size), Decimal(share) / 100)
        for share, size in re.findall(r"(\d+)% of the (?:first|next) (\d+) GiB", ROW.quote)
    ]
    above = re.search(r"(\d+)% of any memory above (\d+) GiB", ROW.quote)
    assert sum(size for size, _ in tiers) == int(above[2])
    assert MEMORY_RESERVATION == (*tiers, (math.inf, Decimal(above[1]) / 100))


def test_the_small_machine_reservation_and_the_eviction_threshold():
    assert SMALL_MACHINE_RESERVATION == int(re.search(r"\((\d+) MiB below 1 GiB\)", ROW.claim)[1]) * MiB
    assert EVICTION_THRESHOLD == int(re.search(r"less (\d+) MiB kept for eviction", ROW.claim)[1]) * MiB


def test_the_cpu_tiers_are_the_claimed_ones():
    """6% of the first core, 1% of the next, 0.5% of the next two and 0.25% of each core above four."""
    shares = [Decimal(s) / 100 for s in re.findall(r"([\d.]+)% of (?:the|each)", ROW.claim)[:4]]
    assert [share for _, share in CPU_RESERVATION] == shares
    assert [size for size, _ in CPU_RESERVATION] == [1, 1, 2, math.inf]


def test_a_machine_of_exactly_one_gib_takes_the_tiers_and_a_part_gib_is_reserved_too():
    """GKE: "255 MiB of memory for machines with less than 1 GiB": e2-micro's 1 GiB is not less, so 25% of it (256 MiB)
    is reserved; 4.5 GiB reserves 25% of 4 and 20% of the half left. CPU: 2 vCPUs reserve 6% and 1% of a core."""
    from tpu_stacks.catalog.cpu_machines import KERNEL_SHARE, CpuShape, GiB, allocatable, machine_shape

    _, micro = allocatable(machine_shape("e2-micro"))
    assert micro == int(GiB * (1 - KERNEL_SHARE) - GiB // 4 - 100 * MiB)
    half = CpuShape(name="acme", series="e2", vcpus=2, memory_bytes=GiB * 9 // 2)
    cpu, memory = allocatable(half)
    assert cpu == 2000 - 60 - 10
    assert memory == int(Decimal(GiB * 9 // 2) * (1 - KERNEL_SHARE) - (GiB + GiB // 10) - 100 * MiB)


def test_a_machine_smaller_than_its_reservations_offers_pods_nothing():
    from tpu_stacks.catalog.cpu_machines import CpuShape, allocatable

    assert allocatable(CpuShape(name="acme", series="e2", vcpus=1, memory_bytes=200 * MiB))[1] == 0


def test_a_pod_that_asks_for_exactly_the_room_fits():
    """The scheduler's fit (Kubernetes NodeResourcesFit): a pod fits when its requests are at most what is free."""
    from tpu_stacks.catalog.cpu_machines import holds, machine_shape, pod_room

    shape = machine_shape("e2-standard-4")
    cpu, memory = pod_room(shape)
    assert holds(shape, cpu, memory)
    assert not holds(shape, cpu + 1, memory) and not holds(shape, cpu, memory + 1)


def test_the_smallest_holding_type_comes_from_the_series_asked():
    from tpu_stacks.catalog.cpu_machines import GiB, smallest_holding

    assert smallest_holding(1000, GiB, series=("n2",)).name == "n2-standard-2"
