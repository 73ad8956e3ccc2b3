"""What a first `pulumi up` of a workload costs in time and TPU money before it serves: the "before you run up"
record each workload component registers (as its `first_up` output, beside its typed outputs) and `tpu-stacks
plan` prints and writes (`before_up`).

Nothing here is a new number: every minute is an await budget the component gives the engine (awaits.py:
`pod_budget`, `job_budget`, the RayService's `budget`), built by the helpers below from the same inputs, and
every price is the catalogue's (catalog/capacity.py `kind_prices`; unknown stays unknown, never free).

TPU hours before serving = chips x the minutes of the waits during which the slice's TPU nodes exist and the
server cannot answer yet. Which waits those are depends on the pool:
- a pool that scales from 0 (multi-host vLLM, JetStream) or that GKE creates from a ComputeClass (a capacity
  fallback) has no TPU node before the server's pods ask for one: its hours are the server's own wait (node
  provisioning, image pull, weight load and compile), never a download or conversion that runs before it;
- a pool with a fixed size or a minimum above 0 (single-host vLLM, Saxml, Ray training) is created with the
  cluster, so its nodes bill through every wait until the server is ready (the pool's own creation is the
  provider's and is not counted).
Every figure is a budget, so an upper bound: `up` usually finishes sooner. Pure: no provider SDK.
"""

from __future__ import annotations

import math
from dataclasses import asdict, dataclass, field
from typing import TYPE_CHECKING, Any

from tpu_stacks.catalog.capacity import KindName, KindPrice, kind_prices
from tpu_stacks.cluster.decided import PoolPlan
from tpu_stacks.objects.awaits import (
    IMAGE_PULL_MINUTES,
    JOB_REPORT_MINUTES,
    NODE_PROVISIONING_MINUTES,
    AwaitBudget,
    job_budget,
    pod_budget,
    start_seconds,
)
from tpu_stacks.traffic.pricing import cost_per_million, hourly_price
from tpu_stacks.traffic.target import DEFAULT_PRICING

if TYPE_CHECKING:
    from tpu_stacks.slo.plan import SloPrediction

OUTPUT = "first_up"
"""The key of the record among a workload component's registered outputs (read by `tpu-stacks plan`)."""


@dataclass(frozen=True)
class Wait:
    """One object `pulumi up` waits for on its first run: its create budget and where the minutes go."""

    resource: str
    """The awaited resource's name in the plan (`vllm-deployment`)."""
    what: str
    """What the wait is for, in a few words."""
    minutes: int
    parts: tuple[tuple[str, int], ...] = ()
    """(what, minutes) that add up to `minutes` (empty: one piece)."""
    tpu: bool = False
    """It waits for TPU pods (or for them to load the model) and the workload is not ready before it ends."""
    download: bool = False
    """The model's weights (or checkpoint) are downloaded during it."""


def _checked(
    resource: str, what: str, budget: AwaitBudget, parts: tuple[tuple[str, int], ...], tpu: bool, download: bool
) -> Wait:
    """A wait whose parts must add up to the budget the component gives the engine (one source of truth: a
    changed formula in awaits.py fails here, at plan time, instead of printing numbers that disagree)."""
    if sum(minutes for _, minutes in parts) != budget.create_minutes:
        raise AssertionError(f"{resource}: {parts} do not add up to its budget {budget.create_minutes}m")
    return Wait(resource, what, budget.create_minutes, parts, tpu, download)


def pod_wait(resource: str, what: str, template: Any, *, tpu: bool, download: bool = False) -> Wait:
    """The wait for pods started from `template` (awaits.pod_budget): a node, the image, then the longest start
    the template's probes allow. A first `up` creates the pods, so a rollout's waves (the update budget) never
    enter it."""
    start = math.ceil(start_seconds(template) / 60)
    parts = (("node", NODE_PROVISIONING_MINUTES), ("image", IMAGE_PULL_MINUTES), ("start", start))
    return _checked(resource, what, pod_budget(template), parts, tpu, download)


def started_wait(
    resource: str, what: str, budget: AwaitBudget, start_minutes: int, *, tpu: bool, download: bool = False
) -> Wait:
    """The wait for an object whose budget is a node, the image and `start_minutes` (a RayService's)."""
    parts = (("node", NODE_PROVISIONING_MINUTES), ("image", IMAGE_PULL_MINUTES), ("start", start_minutes))
    return _checked(resource, what, budget, parts, tpu, download)


def job_wait(
    resource: str,
    what: str,
    active_deadline_seconds: int,
    *,
    tpu: bool = False,
    download: bool = False,
    deadline_parts: tuple[tuple[str, int], ...] = (),
) -> Wait:
    """The wait for a Job bounded by its own deadline (awaits.job_budget). `deadline_parts`: what fills the
    deadline, in minutes (they must add up to it; the report minutes follow)."""
    budget = job_budget(active_deadline_seconds)
    if not deadline_parts:
        return Wait(resource, what, budget.create_minutes, (), tpu, download)
    return _checked(resource, what, budget, (*deadline_parts, ("report", JOB_REPORT_MINUTES)), tpu, download)


@dataclass(frozen=True)
class Slices:
    """The TPU capacity a first `up` starts: which slice, how many, and whether a node exists before its pods."""

    generation: str
    topology: str
    count: int
    """Slices (or single-host replicas) started by the first `up`."""
    chips: int
    """Chips of one slice."""
    hosts: int
    """TPU VMs of one slice."""
    kinds: tuple[KindName, ...]
    """The capacity kinds it may run on, in order."""
    from_zero: bool
    """No TPU node exists before the server's pods ask for one."""

    @property
    def total_chips(self) -> int:
        return self.chips * self.count

    @property
    def total_hosts(self) -> int:
        return self.hosts * self.count


def _kinds(pool: PoolPlan) -> tuple[KindName, ...]:
    if pool.capacity:
        return tuple(capacity.kind for capacity in pool.capacity)
    if pool.reservation:
        return ("reservation",)
    if pool.spot:
        return ("spot",)
    if pool.flex_start or pool.queued_provisioning:
        return ("flexStart",)
    return ("onDemand",)


def slices(pool: PoolPlan, count: int) -> Slices:
    """`count` slices of the pool's shape; from zero when the pool's minimum is 0 or GKE creates it (a
    ComputeClass, Autopilot) from the pending pods."""
    creates_itself = pool.node_count is None and pool.autoscaling_min is None
    shape = pool.shape
    return Slices(
        shape.generation,
        shape.topology,
        count,
        shape.chips,
        shape.nodes,
        _kinds(pool),
        creates_itself or pool.autoscaling_min == 0,
    )


@dataclass(frozen=True)
class FirstUp:
    """A workload's first `up`: its waits in the order `up` runs them, the TPU slices, and (with `slo:`) what the
    traffic model chose."""

    workload: str
    waits: tuple[Wait, ...]
    tpu: Slices
    notes: tuple[str, ...] = ()
    """Per-stack facts behind the figures (the assumed download rate, a weights read inside the start)."""
    slo: dict[str, Any] | None = field(default=None)
    ready: str = "serving"
    """What the workload does once the TPU waits are over (`serving`, `training`)."""

    @property
    def total_minutes(self) -> int:
        """The waits one after another (each follows the previous: `dependsOn`)."""
        return sum(wait.minutes for wait in self.waits)

    def billed(self) -> tuple[bool, ...]:
        """Per wait: whether TPU nodes exist during it before the workload is ready. From zero, only the TPU
        waits; a pool created with the cluster, every wait up to the last TPU wait (a download included)."""
        last = max((i for i, wait in enumerate(self.waits) if wait.tpu), default=-1)
        return tuple(wait.tpu or (not self.tpu.from_zero and i < last) for i, wait in enumerate(self.waits))

    @property
    def tpu_minutes(self) -> int:
        return sum(wait.minutes for wait, billed in zip(self.waits, self.billed(), strict=True) if billed)

    @property
    def tpu_during_download(self) -> bool | None:
        """Whether TPU nodes exist while the weights download (None: the first `up` downloads none)."""
        downloads = [billed for wait, billed in zip(self.waits, self.billed(), strict=True) if wait.download]
        return any(downloads) if downloads else None

    @property
    def chip_hours(self) -> float:
        """Chip-hours billed before the server answers (unrounded: prices multiply this)."""
        return self.tpu.total_chips * self.tpu_minutes / 60

    def _priced(self, price: KindPrice, listed: bool) -> dict[str, Any]:
        usd = None if price.usd_per_chip_hour is None else round(price.usd_per_chip_hour * self.chip_hours, 2)
        return {
            "kind": price.kind,
            "usd_per_chip_hour": price.usd_per_chip_hour,
            "usd": usd,
            "source": price.source,
            "listed": listed,
        }

    def prices(self) -> list[dict[str, Any]]:
        """What the TPU hours before serving cost on each kind the slices may run on (`usd` None: no price known);
        when none of them has a price (spot, flex-start), the on-demand list price too, marked `listed: False`."""
        known = {price.kind: price for price in kind_prices(self.tpu.generation)}
        found = [self._priced(known[kind], True) for kind in dict.fromkeys(self.tpu.kinds)]
        if all(p["usd"] is None for p in found) and known["onDemand"].usd_per_chip_hour is not None:
            found.append(self._priced(known["onDemand"], False))
        return found

    def document(self) -> dict[str, Any]:
        """The record as plain data (the component's output and the plan's `before_up` entry)."""
        return {
            "workload": self.workload,
            "ready": self.ready,
            "waits": [{**asdict(wait), "parts": [list(part) for part in wait.parts], "tpu_billed": billed}
                      for wait, billed in zip(self.waits, self.billed(), strict=True)],
            "total_minutes": self.total_minutes,
            "tpu": {**asdict(self.tpu), "kinds": list(self.tpu.kinds), "total_chips": self.tpu.total_chips,
                    "total_hosts": self.tpu.total_hosts},
            "tpu_during_download": self.tpu_during_download,
            "tpu_minutes_before_serving": self.tpu_minutes,
            "chip_hours_before_serving": round(self.chip_hours, 2),
            "prices": self.prices(),
            "notes": list(self.notes),
            "slo": self.slo,
        }  # fmt: skip


def slo_summary(prediction: SloPrediction, generation: str, chips: int) -> dict[str, Any]:
    """The traffic model's choice for a stack's `slo:` (slo/plan.py `SloPrediction`), priced as the traffic model
    prices it (its target's default pricing, traffic/target.py): per replica and for the replicas it needs.
    TTFT is the median (p50) and the 99th percentile of the traffic model's queue at the offered load."""
    price = hourly_price(generation, chips, DEFAULT_PRICING)
    per_million = (
        cost_per_million(
            price.usd_per_hour, prediction.replica_output_tokens_per_second, prediction.replica_input_tokens_per_second
        ).per_million_output
        if price.usd_per_hour is not None
        else None
    )
    replicas = prediction.replicas
    return {
        "replicas": replicas,
        "output_tokens_per_second": round(prediction.replica_output_tokens_per_second * replicas, 2),
        "replica_output_tokens_per_second": prediction.replica_output_tokens_per_second,
        "ntpot_ms": prediction.replica_ntpot_ms,
        "ttft_ms": prediction.replica_ttft_ms,
        "ttft_p99_ms": prediction.replica_ttft_p99_ms,
        "basis": prediction.basis,
        "pricing": DEFAULT_PRICING,
        "usd_per_hour": None if price.usd_per_hour is None else round(price.usd_per_hour * replicas, 4),
        "usd_per_million_output_tokens": None if per_million is None else round(per_million, 4),
        "price_source": price.source,
    }
