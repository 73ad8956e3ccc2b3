"""Capacity kinds for TPU slices and GKE's custom ComputeClass: facts, minimum versions and prices.

One source of truth for what a `capacity` list may hold, what GKE needs to fall back across the kinds,
and what each kind costs and risks. Every value carries its source; a value no source gives is None
and is shown as unknown, never guessed. Pure: no provider SDK.

Sources (read 2026-11-23):
- [D-CCC] GKE "About custom ComputeClasses", cloud.google.com/kubernetes-engine/docs/concepts/
  about-custom-compute-classes, and the ComputeClass CRD reference, cloud.google.com/kubernetes-engine/
  docs/reference/crds/computeclass (fields `priorities[].tpu{type,count,topology}`, `machineType`, `spot`,
  `reservations{affinity: Specific, specific[].name}`, `flexStart.enabled`, `maxRunDurationSeconds`,
  `location.zones`, `nodePoolAutoCreation.enabled`, `activeMigration.optimizeRulePriority`,
  `whenUnsatisfiable: ScaleUpAnyway|DoNotScaleUp`, `nodePoolConfig{serviceAccount,nodeLabels,taints}`).
- [D-GKE-NAP] GKE "About node pool auto-creation": ComputeClass node-pool
  auto-creation without cluster-level node auto-provisioning from 1.33.3-gke.1136000 (Standard); "if you
  select a ComputeClass in a Pod, GKE adds a node label with the key cloud.google.com/compute-class set to
  the ComputeClass's name" (zh-cn edition, docs.cloud.google.com/kubernetes-engine/docs/concepts/
  node-auto-provisioning); an older edition (documentation.s3ns.fr, same path) lists "configuring
  simultaneous multithreading (SMT)" among what auto-provisioning does not create.
- [D-FLEX] GKE "About flex-start provisioning mode", cloud.google.com/kubernetes-engine/docs/concepts/
  provisioning-model: "To run TPUs, use GKE version 1.33.0-gke.1712000 or later"; "TPU v3 and v4 are
  not supported"; `maxRunDurationSeconds` defaults to seven days.
- [D-TPU-CONS] Cloud TPU "Consumption options", cloud.google.com/tpu/docs/consumption-options: "You can
  only use a reservation for TPUs if you have a committed use discount (CUD)"; on-demand "won't be
  preempted"; spot "can be preempted at any time with 30 s warning" ([D-GKE-TPU]).
- [ACP] GoogleCloudPlatform/accelerated-platforms, platforms/gke/base/core/custom_compute_class/templates/
  manifests/tpu/v6e/custom-compute-tpu-v6e-2x4.yaml (commit 07d895fb): Google's own TPU ComputeClass,
  `tpu.count` = chips of one node (8 on ct6e-standard-8t, 4 on the v5p 2x2x4 multi-host class) with
  `machineType`; an earlier version of its v5e class: "TPU currently only supports Specific affinity".
- Prices: [NEO], [SB]; cloud.google.com/tpu/pricing as stored gives no Trillium,
  spot or flex-start figure, so those are unknown here, and no 3-year commitment figure for any generation
  (GIQ's `3-years-cud` pricing model is unknown; its `1-year-cud` is `Generation.commitment_price`).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from tpu_stacks.catalog.tpu import GENERATIONS, Generation, MinimumVersion, generation
from tpu_stacks.catalog.tpu_prices import hourly_usd

COMPUTE_CLASS_API_VERSION = "cloud.google.com/v1"
COMPUTE_CLASS_KIND = "ComputeClass"
COMPUTE_CLASS_LABEL = "cloud.google.com/compute-class"
"""The node label pods select a ComputeClass with; GKE puts it on the class's nodes ([D-CCC])."""

KindName = Literal["reservation", "spot", "onDemand", "flexStart"]
PLAIN_KINDS: tuple[KindName, ...] = ("spot", "onDemand", "flexStart")
"""Capacity kinds written as a bare word; a reservation is written `{reservation: NAME}`."""

WHEN_UNSATISFIABLE = "DoNotScaleUp"
"""With `ScaleUpAnyway` GKE creates nodes outside the priorities when none can be had ([D-CCC]): the TPU
pods would land on capacity the user did not list (spot they did not accept, or on-demand they did
not budget). The list is the contract, so pods wait instead."""

RESERVATION_AFFINITY = "Specific"
"""The only reservation affinity TPU rules accept ([ACP]: "TPU currently only supports Specific affinity")."""

CUSTOM_COMPUTE_CLASS = MinimumVersion(version="1.30.3-gke.1451000", source="[D-CCC]", verified=True)
"""Custom ComputeClasses, Autopilot and Standard."""
AUTO_CREATION_WITHOUT_NAP = MinimumVersion(version="1.33.3-gke.1136000", source="[D-GKE-NAP]", verified=True)
"""`nodePoolAutoCreation.enabled` creates pools without cluster-level node auto-provisioning (Standard)."""
FLEX_START_TPU = MinimumVersion(version="1.33.0-gke.1712000", source="[D-FLEX]", verified=True)
"""Flex-start TPUs."""
FLEX_START_UNSUPPORTED: tuple[str, ...] = tuple(g.name for g in GENERATIONS if not g.flex_start)
"""TPU generations flex-start does not provision (`Generation.flex_start`, [D-FLEX]: "TPU v3 and v4 are not
supported")."""


@dataclass(frozen=True)
class KindFacts:
    """What a capacity kind risks and how long its VMs may run."""

    label: str
    preemption: str
    max_run: str
    source: str


KIND_FACTS: dict[KindName, KindFacts] = {
    "reservation": KindFacts(
        "reservation",
        "not preempted; capacity held for you (a TPU reservation needs a committed use discount)",
        "the reservation's term",
        "[D-TPU-CONS]",
    ),
    "spot": KindFacts("spot", "preempted at any time with 30 s warning", "no limit", "[D-GKE-TPU], [D-TPU-CONS]"),
    "onDemand": KindFacts(
        "on-demand", "not preempted; needs quota, obtainability not guaranteed", "no limit", "[D-TPU-CONS]"
    ),
    "flexStart": KindFacts(
        "flex-start", "not preempted while it runs; allocated best-effort", "7 days (default and maximum)", "[D-FLEX]"
    ),
}


@dataclass(frozen=True)
class KindPrice:
    """Price per chip-hour of one capacity kind of one generation; None when no source gives it."""

    kind: KindName
    usd_per_chip_hour: float | None
    source: str
    as_of: str | None


UNKNOWN_SOURCE = "not found in a primary source (cloud.google.com/tpu/pricing)"


def kind_prices(generation_name: str) -> list[KindPrice]:
    """The hourly price per chip of every capacity kind of a generation, unknown where no source gives it."""
    gen: Generation = generation(generation_name)
    on_demand = (
        KindPrice("onDemand", gen.price.usd_per_chip_hour, gen.price.source, gen.price.as_of)
        if gen.price
        else KindPrice("onDemand", None, UNKNOWN_SOURCE, None)
    )
    # A TPU reservation is paid at the commitment's price ([D-TPU-CONS]): the record's `commitment_price`.
    cud = gen.commitment_price
    reservation = (
        KindPrice("reservation", cud.usd_per_chip_hour, cud.source, cud.as_of)
        if cud
        else KindPrice("reservation", None, UNKNOWN_SOURCE, None)
    )
    return [
        reservation,
        KindPrice("spot", None, UNKNOWN_SOURCE, None),
        on_demand,
        KindPrice("flexStart", None, UNKNOWN_SOURCE, None),
    ]


PRICING_URL = "https://cloud.google.com/tpu/pricing"


def slice_prices(generation_name: str, chips: int) -> list[dict[str, object]]:
    """Hourly price of a slice of `chips` chips on each capacity kind, with source and date (None: unknown)."""
    return [
        {
            "kind": price.kind,
            "usd_per_hour": hourly_usd(price.usd_per_chip_hour, chips),
            "usd_per_chip_hour": price.usd_per_chip_hour,
            "source": price.source,
            "as_of": price.as_of,
        }
        for price in kind_prices(generation_name)
    ]


PRICING_MODEL_KIND: dict[str, KindName | None] = {
    "on-demand": "onDemand",
    "spot": "spot",
    "1-year-cud": "reservation",
    "3-years-cud": None,
}
"""GKE Inference Quickstart's pricing model names ([GIQ] `Cost.pricing_model`) and the capacity kind
whose price each is. A 1-year CUD is what a TPU reservation is paid at (`Generation.commitment_price`); no
source gives a 3-year TPU commitment price here, so it stays unknown."""


def pricing_model_price(generation_name: str, pricing: str) -> KindPrice:
    """The price per chip-hour of a GIQ pricing model, unknown (None) where no source gives it."""
    kind = PRICING_MODEL_KIND[pricing]
    if kind is None:
        return KindPrice("reservation", None, UNKNOWN_SOURCE, None)
    return next(price for price in kind_prices(generation_name) if price.kind == kind)
