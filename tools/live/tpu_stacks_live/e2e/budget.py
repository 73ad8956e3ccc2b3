"""What the offline plan says about a stack's TPU time, before anything is created: its TPU node pools (hosts
and chips at most), the TPU ComputeClasses whose pools GKE creates itself, and its smoke-test Job.

Why from the plan: the run has to tell its user what it spent, and the only numbers known before (and
after) `up` without reading the cloud are the ones the program declares. The plan is the same offline run
`tpu-stacks plan` makes (tpu_stacks_preview.engine.run_program, up mode so every input is filled).

The bound: a TPU node pool holds at most `maxNodeCount` nodes per zone when it autoscales, else
`nodeCount` (or `initialNodeCount`) per zone (Terraform google provider, google_container_node_pool:
"autoscaling.max_node_count - Maximum number of nodes per zone", "node_count - The number of nodes per
instance group"; https://registry.terraform.io/providers/hashicorp/google/latest/docs/resources/container_node_pool),
times the zones it names (`nodeLocations`, one zone when unset: the cluster's, as every shipped TPU pool is).
A node has its machine type's chips (components/tpu_stacks/catalog/tpu.py). TPU is billed per chip-hour
(https://cloud.google.com/tpu/pricing), so the run reports chip-hours: those chips times the wall time
during which the pools could exist (from the start of `up` to the end of `destroy`). That is an upper bound:
pools are created partway through `up`, autoscaling pools may hold fewer nodes, spot nodes may go away.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from tpu_stacks.catalog.tpu import generation_of_machine_type, parse_topology
from tpu_stacks.errors import UserError
from tpu_stacks.serving.smoke_plan import SMOKE_TEST_LABELS

NODE_POOL = "gcp:container/nodePool:NodePool"
COMPUTE_CLASS = "kubernetes:cloud.google.com/v1:ComputeClass"
JOB = "kubernetes:batch/v1:Job"


@dataclass(frozen=True)
class TpuPool:
    """One TPU node pool of the plan, at its largest."""

    name: str
    machine_type: str
    hosts: int
    chips: int


@dataclass(frozen=True)
class ClassSlice:
    """A TPU ComputeClass: GKE creates its pools (node pool auto-creation), so the plan bounds one slice's
    chips but not how many slices the workload asks for."""

    name: str
    chips_per_slice: int


@dataclass(frozen=True)
class Budget:
    """A stack's TPU footprint at most, and its smoke-test Jobs (Kubernetes names)."""

    stack: str
    pools: tuple[TpuPool, ...]
    classes: tuple[ClassSlice, ...]
    smoke_jobs: tuple[str, ...]

    @property
    def chips(self) -> int:
        return sum(pool.chips for pool in self.pools)

    @property
    def hosts(self) -> int:
        return sum(pool.hosts for pool in self.pools)

    def chip_hours(self, seconds: float) -> float:
        """Chips of every TPU pool at its largest, for `seconds` of wall time."""
        return self.chips * seconds / 3600

    def describe(self) -> str:
        """One line for the start of the run: what could be running."""
        parts = [f"{p.name}: {p.hosts} x {p.machine_type} = {count(p.chips, 'chip')}" for p in self.pools]
        parts += [f"ComputeClass {c.name}: {c.chips_per_slice} chips per slice GKE creates" for c in self.classes]
        if not parts:
            return "no TPU node pool or TPU ComputeClass in the plan"
        return f"TPU at most {count(self.chips, 'chip')} on {count(self.hosts, 'host')} ({'; '.join(parts)})"

    def smoke_line(self) -> str:
        if not self.smoke_jobs:
            return "no smoke-test Job in this stack's plan (a training stack): up checks no request"
        names = ", ".join(self.smoke_jobs)
        return f"the smoke-test Job ({names}) is part of up: pulumi-kubernetes awaits a Job until it completes"

    def spent_line(self, seconds: float, *, still_running: bool) -> str:
        """The TPU hours line: an upper bound, said as one."""
        window = "from the start of up until now (the stack is still up)" if still_running else "from up to destroy"
        line = (
            f"TPU time: at most {self.chip_hours(seconds):.2f} chip-hours ({count(self.chips, 'chip')},"
            f" the TPU pools at their largest, for {clock(seconds)} {window}; pools are created partway through"
            " up and autoscaling ones may hold fewer nodes, so the real figure is lower)"
        )
        if self.classes:
            per = ", ".join(f"{c.name} {c.chips_per_slice}" for c in self.classes)
            line += f"; plus {per} chips per slice GKE created from a ComputeClass (the plan has no bound)"
        return line


def count(number: int, noun: str) -> str:
    """`1 chip`, `8 chips`."""
    return f"{number} {noun}" if number == 1 else f"{number} {noun}s"


def clock(seconds: float) -> str:
    """`1h 02m 03s`, `4m 05s`, `12s`: a wall time as people read it."""
    total = round(seconds)
    hours, rest = divmod(total, 3600)
    minutes, secs = divmod(rest, 60)
    if hours:
        return f"{hours}h {minutes:02d}m {secs:02d}s"
    if minutes:
        return f"{minutes}m {secs:02d}s"
    return f"{secs}s"


def _per_zone(inputs: dict[str, Any]) -> int:
    autoscaling = inputs.get("autoscaling") or {}
    if autoscaling.get("totalMaxNodeCount"):  # a pool-wide maximum, not per zone
        return int(autoscaling["totalMaxNodeCount"])
    count = autoscaling.get("maxNodeCount") or inputs.get("nodeCount") or inputs.get("initialNodeCount") or 0
    zones = inputs.get("nodeLocations") or [None]
    return int(count) * len(zones)


def tpu_pool(name: str, inputs: dict[str, Any]) -> TpuPool | None:
    """The pool at its largest, or None when its machine type is not a TPU one."""
    machine_type = str((inputs.get("nodeConfig") or {}).get("machineType") or "")
    generation = generation_of_machine_type(machine_type)
    if generation is None:
        return None
    hosts = _per_zone(inputs)
    return TpuPool(name, machine_type, hosts, hosts * generation.machine_type(machine_type).chips_per_vm)


def class_slices(name: str, inputs: dict[str, Any]) -> ClassSlice | None:
    """A ComputeClass's largest TPU slice over its priorities (its `tpu.topology`), or None without TPU."""
    chips = [
        parse_topology(rule["tpu"]["topology"]).chips
        for rule in (inputs.get("spec") or {}).get("priorities") or []
        if isinstance(rule.get("tpu"), dict) and rule["tpu"].get("topology")
    ]
    return ClassSlice(name, max(chips)) if chips else None


def _is_smoke_job(inputs: dict[str, Any]) -> bool:
    labels = (inputs.get("metadata") or {}).get("labels") or {}
    return all(labels.get(key) == value for key, value in SMOKE_TEST_LABELS.items())


def budget_of(stack: str, resources: Iterable[Any]) -> Budget:
    """The budget of a captured plan: `resources` are its records (`.type`, `.name`, `.inputs`)."""
    pools: list[TpuPool] = []
    classes: list[ClassSlice] = []
    jobs: list[str] = []
    for record in resources:
        if record.type == NODE_POOL and (pool := tpu_pool(record.name, record.inputs)):
            pools.append(pool)
        elif record.type == COMPUTE_CLASS and (found := class_slices(record.name, record.inputs)):
            classes.append(found)
        elif record.type == JOB and _is_smoke_job(record.inputs):
            jobs.append(str(record.inputs["metadata"].get("name") or record.name))
    return Budget(stack, tuple(sorted(pools, key=lambda p: p.name)), tuple(classes), tuple(sorted(jobs)))


def plan_budget(project_dir: Path, stack: str) -> Budget:
    """Run the stack's program offline (up mode, the program's missing secrets as placeholders: nothing is
    sent anywhere) and read its budget. A program error is the user's to fix before any cloud call."""
    from tpu_stacks_preview.engine import run_program  # the provider SDKs: loaded only when planning

    capture = run_program(project_dir, stack, preview=False)
    if capture.error is not None:
        raise UserError(f"Pulumi.{stack}.yaml", stack, f"does not plan offline: {capture.error.message}",
                        f"run `tpu-stacks plan --stack {stack}` and fix it before e2e")  # fmt: skip
    return budget_of(stack, capture.resources)
