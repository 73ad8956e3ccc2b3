"""The TPU catalogue: every Cloud TPU generation usable on GKE, as frozen typed data.

One source of truth for chips, HBM, machine types, topologies, labels, versions and prices.
Every value's source stands next to it as a key ([D-v6e], [XPK], ...) that docs/sources.md
resolves to its address. Everything else in the project (node counts,
`google.com/tpu` requests, node selectors, placement, sizing, the policy pack) asks this module.
"""

from __future__ import annotations

import itertools
import math
import re
from functools import cached_property
from typing import Literal

from pydantic import BaseModel, ConfigDict

from tpu_stacks.catalog.gke_versions import GkeVersion as GkeVersion
from tpu_stacks.catalog.gke_versions import gke_version as gke_version
from tpu_stacks.catalog.tpu_prices import SECONDARY_SB_PRICE, Price, hourly_usd
from tpu_stacks.errors import UserError

GiB = 1024**3
GB = 10**9

# Kubernetes scheduling facts ([D-GKE-TPU], [XPK], [CTK]).
TPU_RESOURCE = "google.com/tpu"
ACCELERATOR_LABEL = "cloud.google.com/gke-tpu-accelerator"
TOPOLOGY_LABEL = "cloud.google.com/gke-tpu-topology"
TPU_TAINT_KEY = "google.com/tpu"
SPOT_LABEL = "cloud.google.com/gke-spot"
FLEX_START_LABEL = "cloud.google.com/gke-flex-start"
QUEUED_LABEL = "cloud.google.com/gke-queued"
RESERVATION_LABEL = "cloud.google.com/reservation-name"
NODEPOOL_LABEL = "cloud.google.com/gke-nodepool"
# Privileged TPU containers are needed only before GKE 1.28 ([D-GKE-TPU]).
PRIVILEGED_NOT_NEEDED_SINCE = "1.28"
# Multi-host TPU pools get 15 pods per node in Google's own tooling ([XPK] nodepool.py).
MULTI_HOST_MAX_PODS_PER_NODE = 15

Placement = Literal["compact", "workload-policy"]


class _Frozen(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")


class MinimumVersion(_Frozen):
    """The lowest GKE version that runs a generation, with where that fact comes from."""

    version: str
    source: str
    verified: bool

    @property
    def parsed(self) -> GkeVersion:
        return GkeVersion(text=self.version)


class Topology(_Frozen):
    """A slice shape such as `2x4` or `2x2x1`: chips along each ICI axis."""

    dims: tuple[int, ...]

    @property
    def text(self) -> str:
        return "x".join(str(d) for d in self.dims)

    @property
    def chips(self) -> int:
        return math.prod(self.dims)


def parse_topology(text: str) -> Topology:
    """`'4x8'` -> Topology((4, 8)); raises UserError for anything that is not AxB or AxBxC."""
    if not isinstance(text, str) or not re.fullmatch(r"[1-9]\d*(x[1-9]\d*){1,2}", text.strip()):
        by_dims = {dims: ", ".join(g.name for g in GENERATIONS if g.ici_dims == dims) for dims in (2, 3)}
        raise UserError(
            "topology", text, "is not a TPU topology", f"write it as AxB ({by_dims[2]}) or AxBxC ({by_dims[3]})"
        )
    return Topology(dims=tuple(int(part) for part in text.strip().split("x")))


class MachineType(_Frozen):
    """A GKE TPU machine type: how many chips one VM (one Kubernetes node) has."""

    name: str
    chips_per_vm: int
    host_topology: str
    """The shape one VM forms on its own (`2x4` for an 8-chip VM)."""
    joins_multi_host: bool
    """Whether several VMs of this type form larger slices (true for the 4-chip types)."""
    source: str

    def forms(self, topology: Topology) -> bool:
        """Whether a slice of `topology` can be built from VMs of this machine type."""
        if topology.chips == self.chips_per_vm:
            return topology.text == self.host_topology
        return self.joins_multi_host and topology.chips > self.chips_per_vm and topology.chips % self.chips_per_vm == 0


class Generation(_Frozen):
    """One TPU generation as GKE offers it (catalogue sections 1, 2, 4 and 6)."""

    name: str
    aliases: tuple[str, ...]
    accelerator_label: str
    jax_devices_per_chip: int
    hbm_bytes_per_chip: int
    hbm_per_chip_as_documented: str
    hbm_bandwidth_bytes_per_s: int
    peak_bf16_flops: float
    peak_int8_ops: float | None = None
    """Peak int8 operations per second per chip; None where the generation's page gives no int8 figure."""
    peak_fp8_flops: float | None = None
    """Peak fp8 FLOP/s per chip where the generation's page gives one (v5p, tpu7x): the matmul rate of W8A8 fp8
    serving (tpu_stacks.traffic.model); None where the page gives none (no fp8 speed-up is assumed there)."""
    performance_source: str = ""
    """Where the HBM bandwidth and peak bf16/int8 figures of this record come from (the traffic model reads them)."""
    ici_dims: Literal[2, 3]
    max_shape: tuple[int, ...]
    """The documented largest single slice; a valid shape is no larger on any sorted axis."""
    extra_topologies: tuple[str, ...] = ()
    machine_types: tuple[MachineType, ...]
    multi_host_placement: Placement
    min_gke_standard: MinimumVersion
    min_gke_autopilot: MinimumVersion
    price: Price | None
    commitment_price: Price | None = None
    """The 1-year committed-use price per chip-hour, which a TPU reservation is paid at (a TPU reservation
    needs a committed use discount, cloud.google.com/tpu/docs/consumption-options); None: no source gives it."""
    disk_types: tuple[str, ...]
    """Block storage the generation's VMs attach, the scratch volume's type first ("Attach durable block
    storage to a TPU VM", cloud.google.com/tpu/docs/setup-persistent-disk; per value below)."""
    flex_start: bool
    """Whether flex-start provisions it (GKE "About flex-start provisioning mode", cloud.google.com/
    kubernetes-engine/docs/concepts/provisioning-model: "TPU v3 and v4 are not supported")."""
    queued_provisioning: bool = False
    """Whether Google's tooling provisions it with flex-start + queued provisioning ([CTK] #5218, 2026-02:
    examples/gke-consumption-options/dws-flex-start-queued-provisioning/gke-tpu-v6e and -7x, both flags
    "Must be true"). GKE refused the pair for another TPU in xpk's nightly ("Flex start node pools don't
    support TPUs with queued provisioning", AI-Hypercomputer/xpk#900, 2025-12), and xpk has queued GPUs
    only since; the other generations are refused until a source shows them working."""
    sources: str

    @property
    def max_chips(self) -> int:
        return math.prod(self.max_shape)

    @cached_property
    def topologies(self) -> tuple[Topology, ...]:
        """Every valid slice shape, smallest first (the generating rule is in `_shapes_2d/_3d`)."""
        shapes = _shapes_2d(self.max_shape) if self.ici_dims == 2 else _shapes_3d(self.max_shape)
        shapes += [parse_topology(extra) for extra in self.extra_topologies]
        return tuple(sorted(set(shapes), key=lambda t: (t.chips, t.dims)))

    @property
    def topology_names(self) -> list[str]:
        return [t.text for t in self.topologies]

    def topology(self, text: str, key: str = "topology") -> Topology:
        """Parse `text` and check it is a shape of this generation; UserError lists the valid ones."""
        try:
            shape = parse_topology(text)
        except UserError as error:
            raise UserError(key, text, error.problem, error.fix) from None
        if shape not in self.topologies:
            valid = ", ".join(self.topology_names[:14]) + (", ..." if len(self.topologies) > 14 else "")
            raise UserError(key, text, f"is not a {self.name} topology", f"valid: {valid}")
        return shape

    def machine_type(self, name: str) -> MachineType:
        for machine in self.machine_types:
            if machine.name == name:
                return machine
        valid = ", ".join(m.name for m in self.machine_types)
        raise UserError("machineType", name, f"is not a {self.name} machine type", f"valid: {valid}")

    def machine_types_for(self, topology: Topology) -> list[MachineType]:
        """The machine types that can form `topology`, fewest VMs first."""
        fitting = [m for m in self.machine_types if m.forms(topology)]
        return sorted(fitting, key=lambda m: topology.chips // m.chips_per_vm)


def _powers_of_two(limit: int) -> list[int]:
    return [2**i for i in range(int(math.log2(limit)) + 1)]


def _shapes_2d(max_shape: tuple[int, ...]) -> list[Topology]:
    """v5e/v6e ([D-v5e], [D-v6e], [XPK]): 1x1, 2x2, 2x4, then AxB with A <= B <= 2A, powers of two."""
    shapes = [Topology(dims=(1, 1)), Topology(dims=(2, 2)), Topology(dims=(2, 4))]
    for a, b in itertools.product(_powers_of_two(max_shape[0]), _powers_of_two(max_shape[1])):
        if 4 <= a <= b <= 2 * a:
            shapes.append(Topology(dims=(a, b)))
    return shapes


def _shapes_3d(max_shape: tuple[int, ...]) -> list[Topology]:
    """v4/v5p/tpu7x ([D-GKE-TPU]): below 64 chips 2x2x1, 2x2x2, 2x2x4, 2x4x4; from 64 chips
    A <= B <= C, each a multiple of 4, no axis beyond the documented largest slice."""
    shapes = [Topology(dims=d) for d in ((2, 2, 1), (2, 2, 2), (2, 2, 4), (2, 4, 4))]
    limit_a, limit_b, limit_c = sorted(max_shape)
    for a in range(4, limit_a + 1, 4):
        for b in range(a, limit_b + 1, 4):
            for c in range(b, limit_c + 1, 4):
                shapes.append(Topology(dims=(a, b, c)))
    return shapes


def _mt(name: str, chips: int, host: str, joins: bool, source: str) -> MachineType:
    return MachineType(name=name, chips_per_vm=chips, host_topology=host, joins_multi_host=joins, source=source)


# Autopilot runs TPUs by default from 1.29.2-gke.1521000 ([D-GKE-MSK]).
_AUTOPILOT_TPU = MinimumVersion(version="1.29.2-gke.1521000", source="[D-GKE-MSK]", verified=True)

GENERATIONS: tuple[Generation, ...] = (
    Generation(
        name="v4",
        aliases=("tpu-v4", "tpuv4"),
        accelerator_label="tpu-v4-podslice",
        jax_devices_per_chip=1,  # megacore: the two cores appear as one JAX device
        hbm_bytes_per_chip=32 * GiB,
        hbm_per_chip_as_documented="32 GiB",
        hbm_bandwidth_bytes_per_s=1200 * GB,
        peak_bf16_flops=275e12,
        peak_int8_ops=275e12,
        performance_source="[D-v4] (bf16 275 TFLOP/s, int8 275 TOPS, HBM 1200 GB/s per chip)",
        ici_dims=3,
        max_shape=(12, 16, 16),  # "largest v4 topology is 12x16x16" [D-GKE-TPU]
        machine_types=(_mt("ct4p-hightpu-4t", 4, "2x2x1", True, "[XPK], [CTK], [D-GKE-MS]"),),
        multi_host_placement="compact",
        min_gke_standard=MinimumVersion(version="1.26.1-gke.1500", source="no primary source", verified=False),
        min_gke_autopilot=_AUTOPILOT_TPU,
        price=None,  # $3.22 is commonly quoted but UNVERIFIED (no primary source)
        disk_types=("pd-balanced",),  # setup-persistent-disk: v4 Balanced Persistent Disk
        flex_start=False,  # provisioning-model: "TPU v3 and v4 are not supported"
        sources="[D-v4], [D-GKE-TPU], [SB], [XPK], [CTK]",
    ),
    Generation(
        name="v5e",
        aliases=("v5litepod", "v5lite", "tpu-v5e", "v5-lite"),
        accelerator_label="tpu-v5-lite-podslice",
        jax_devices_per_chip=1,
        hbm_bytes_per_chip=16 * GB,
        hbm_per_chip_as_documented="16 GB",
        hbm_bandwidth_bytes_per_s=819 * GB,
        peak_bf16_flops=197e12,
        peak_int8_ops=393e12,
        performance_source="[D-v5e] (bf16 197 TFLOP/s, int8 393 TOPS, HBM 819 GB/s per chip)",
        ici_dims=2,
        max_shape=(16, 16),
        machine_types=(
            _mt("ct5lp-hightpu-1t", 1, "1x1", False, "[CTK] machine_mappings.json"),
            _mt("ct5lp-hightpu-4t", 4, "2x2", True, "[XPK], [D-GKE-TPU]"),
            _mt("ct5lp-hightpu-8t", 8, "2x4", False, "[CTK] machine_mappings.json"),
        ),
        multi_host_placement="compact",
        # The Saxml tutorial: "GKE supports TPU v5e from version 1.27.2-gke.2100" [D-GKE-SAX].
        min_gke_standard=MinimumVersion(version="1.27.2-gke.2100", source="[D-GKE-SAX]", verified=True),
        min_gke_autopilot=_AUTOPILOT_TPU,
        price=Price(usd_per_chip_hour=1.20, source=SECONDARY_SB_PRICE, as_of="2025-02"),
        disk_types=("pd-balanced",),  # setup-persistent-disk: v5e Balanced Persistent Disk
        flex_start=True,
        sources="[D-v5e], [D-v6e], [SB], [XPK]",
    ),
    Generation(
        name="v5p",
        aliases=("tpu-v5p",),
        accelerator_label="tpu-v5p-slice",
        jax_devices_per_chip=1,
        hbm_bytes_per_chip=95 * GiB,  # [D-v5p]; [SB] rounds to 96 GB
        hbm_per_chip_as_documented="95 GiB",
        hbm_bandwidth_bytes_per_s=2765 * GB,
        peak_bf16_flops=459e12,
        peak_int8_ops=918e12,
        peak_fp8_flops=459e12,
        performance_source=(
            "[D-v5p] (bf16 459 TFLOP/s, fp8 459 TFLOP/s, HBM 2765 GB/s per chip; no int8 figure);"
            " int8 918 TOPS from [SB] tpus.md"
        ),
        ici_dims=3,
        max_shape=(16, 16, 24),  # 6144 chips [D-v5p], [D-GKE-TPU]
        machine_types=(_mt("ct5p-hightpu-4t", 4, "2x2x1", True, "[D-v5p], [XPK]"),),
        multi_host_placement="compact",
        min_gke_standard=MinimumVersion(version="1.28.3-gke.1024000", source="no primary source", verified=False),
        min_gke_autopilot=_AUTOPILOT_TPU,
        price=Price(usd_per_chip_hour=4.20, source=SECONDARY_SB_PRICE, as_of="2025-02"),
        disk_types=("pd-balanced",),  # setup-persistent-disk: v5p Balanced Persistent Disk
        flex_start=True,
        sources="[D-v5p], [D-7x], [SB], [XPK]",
    ),
    Generation(
        name="v6e",
        aliases=("trillium", "tpu-v6e"),
        accelerator_label="tpu-v6e-slice",
        jax_devices_per_chip=1,
        hbm_bytes_per_chip=32 * GB,
        hbm_per_chip_as_documented="32 GB",
        hbm_bandwidth_bytes_per_s=1640 * GB,
        peak_bf16_flops=918e12,
        peak_int8_ops=1836e12,
        performance_source="[D-v6e] (bf16 918 TFLOP/s, int8 1836 TOPS, HBM 1640 GB/s per chip; one edition 1600)",
        ici_dims=2,
        max_shape=(16, 16),
        machine_types=(
            _mt("ct6e-standard-1t", 1, "1x1", False, "[D-v6e]"),
            _mt("ct6e-standard-4t", 4, "2x2", True, "[D-v6e]"),
            _mt("ct6e-standard-8t", 8, "2x4", False, "[D-v6e]"),
        ),
        multi_host_placement="compact",
        min_gke_standard=MinimumVersion(version="1.31.2-gke.1115000", source="[RAY]", verified=True),
        min_gke_autopilot=MinimumVersion(version="1.31.2-gke.1384000", source="no primary source", verified=False),
        price=Price(usd_per_chip_hour=2.70, source="[NEO] quoting Google's GA announcement", as_of="2024-12"),
        commitment_price=Price(
            usd_per_chip_hour=1.89,
            source="[NEO] quoting Google's GA announcement, 1-year CUD (a TPU reservation needs a CUD)",
            as_of="2024-12",
        ),
        disk_types=("hyperdisk-balanced", "hyperdisk-ml"),  # setup-persistent-disk: v6e Hyperdisk only
        flex_start=True,
        queued_provisioning=True,  # [CTK] gke-tpu-v6e queued-provisioning example
        sources="[D-v6e], [D-7x], [SB], [XPK]",
    ),
    Generation(
        name="tpu7x",
        aliases=("ironwood", "v7x", "tpu-7x"),
        accelerator_label="tpu7x",  # [XPK], [CTK]; [D-GKE-NAP]'s `tpu7x-standard-4t` looks like an error
        jax_devices_per_chip=2,  # dual chiplet: JAX sees 96 GiB devices [MT]
        hbm_bytes_per_chip=192 * GiB,
        hbm_per_chip_as_documented="192 GiB",
        hbm_bandwidth_bytes_per_s=7380 * GB,
        peak_bf16_flops=2307e12,
        peak_fp8_flops=4614e12,
        performance_source="[D-7x] (bf16 2307 TFLOP/s, fp8 4614 TFLOP/s and no int8 figure, HBM 7380 GB/s per chip)",
        ici_dims=3,
        max_shape=(16, 24, 24),  # 9216 chips [XPK]; [MT] lists tpu7x:16x24x24
        extra_topologies=("1x1x1",),  # tpu7x-standard-1t, [XPK] only
        machine_types=(
            _mt("tpu7x-standard-1t", 1, "1x1x1", False, "[XPK]"),
            _mt("tpu7x-standard-4t", 4, "2x2x1", True, "[XPK], [CTK], [D-GKE-NAP]"),
        ),
        multi_host_placement="workload-policy",
        # [CTK] says 1.34.3-gke.1318000, [REC] 1.34.0-gke.2201000: the higher one, as the catalogue advises.
        min_gke_standard=MinimumVersion(
            version="1.34.3-gke.1318000", source="[CTK] examples/gke-tpu-7x", verified=True
        ),
        min_gke_autopilot=MinimumVersion(
            version="1.34.3-gke.1318000", source="[CTK] (Standard figure)", verified=False
        ),
        price=None,  # not published [D-7x]
        disk_types=("hyperdisk-balanced",),  # [CTK] tpu7x pools use hyperdisk-balanced
        flex_start=True,
        queued_provisioning=True,  # [CTK] gke-tpu-7x queued-provisioning example
        sources="[D-7x], [MT], [XPK], [CTK]",
    ),
)


QUEUED_TPU_GENERATIONS: tuple[str, ...] = tuple(g.name for g in GENERATIONS if g.queued_provisioning)
"""Derived from the records (`Generation.queued_provisioning` says why each is there)."""


def generation_names() -> list[str]:
    return [g.name for g in GENERATIONS]


def names_text(names: list[str] | tuple[str, ...], last: str = "or") -> str:
    """`v4, v5e or v6e`: a list of names as a sentence writes it (specs and the CLI derive theirs here)."""
    return f"{', '.join(names[:-1])} {last} {names[-1]}" if len(names) > 1 else "".join(names)


def generation(name: str, key: str = "generation") -> Generation:
    """Look a generation up by name or alias (`v6e`, `trillium`, `ironwood`, ...)."""
    wanted = str(name).strip().lower()
    for candidate in GENERATIONS:
        if wanted == candidate.name or wanted in candidate.aliases:
            return candidate
    raise UserError(key, name, "is not a TPU generation on GKE", f"valid: {', '.join(generation_names())}")


def generation_of_machine_type(machine_type: str) -> Generation | None:
    """The generation whose machine type this is, or None for a non-TPU machine type."""
    for candidate in GENERATIONS:
        if any(m.name == machine_type for m in candidate.machine_types):
            return candidate
    return None


def generation_of_accelerator(label: str) -> Generation | None:
    """The generation behind a `cloud.google.com/gke-tpu-accelerator` value."""
    for candidate in GENERATIONS:
        if candidate.accelerator_label == label:
            return candidate
    return None


class SliceShape(_Frozen):
    """One TPU slice as GKE builds it: everything a node pool and a workload derive from."""

    generation: str
    topology: str
    machine_type: str
    chips: int
    chips_per_vm: int
    nodes: int
    accelerator_label: str
    hbm_bytes: int
    multi_host_placement: Placement

    @property
    def multi_host(self) -> bool:
        """More than one VM: GKE builds the pool as one atomic unit with placement and topology."""
        return self.nodes > 1

    @property
    def jax_devices(self) -> int:
        """Devices JAX/XLA shards over: chips, or twice that on tpu7x (two devices per chip)."""
        return self.chips * generation(self.generation).jax_devices_per_chip

    @property
    def hourly_usd(self) -> float | None:
        price = generation(self.generation).price
        return hourly_usd(price.usd_per_chip_hour, self.chips) if price else None

    def node_selector(self) -> dict[str, str]:
        """The labels GKE puts on the slice's nodes, which a TPU pod must select ([D-GKE-TPU])."""
        return {ACCELERATOR_LABEL: self.accelerator_label, TOPOLOGY_LABEL: self.topology}

    def tpu_resources(self) -> dict[str, str]:
        """A TPU container must take every chip of its node ([D-GKE-TPU] request rule)."""
        return {TPU_RESOURCE: str(self.chips_per_vm)}


def nodes_for(machine_type: MachineType, topology: Topology) -> int:
    """Nodes in a slice: chips of the topology divided by chips per VM ([CTK], [XPK])."""
    return topology.chips // machine_type.chips_per_vm


def slice_shape(gen: str | Generation, topology: str, machine_type: str | None = None) -> SliceShape:
    """The full shape of a slice from generation + topology (+ optional machine type).

    Without a machine type, the one that needs the fewest VMs is chosen (an 8-chip VM for `2x4`).
    """
    chosen_generation = gen if isinstance(gen, Generation) else generation(gen)
    shape = chosen_generation.topology(topology)
    if machine_type is None:
        machine = chosen_generation.machine_types_for(shape)[0]
    else:
        machine = chosen_generation.machine_type(machine_type)
        if not machine.forms(shape):
            valid = ", ".join(m.name for m in chosen_generation.machine_types_for(shape))
            raise UserError("machineType", machine_type, f"cannot form a {shape.text} slice", f"use one of: {valid}")
    return SliceShape(
        generation=chosen_generation.name,
        topology=shape.text,
        machine_type=machine.name,
        chips=shape.chips,
        chips_per_vm=machine.chips_per_vm,
        nodes=nodes_for(machine, shape),
        accelerator_label=chosen_generation.accelerator_label,
        hbm_bytes=shape.chips * chosen_generation.hbm_bytes_per_chip,
        multi_host_placement=chosen_generation.multi_host_placement,
    )


def all_slice_shapes(gen: str | Generation) -> list[SliceShape]:
    """Every (topology, machine type) pair a generation offers, smallest first."""
    chosen_generation = gen if isinstance(gen, Generation) else generation(gen)
    return [
        slice_shape(chosen_generation, topology.text, machine.name)
        for topology in chosen_generation.topologies
        for machine in chosen_generation.machine_types_for(topology)
    ]
