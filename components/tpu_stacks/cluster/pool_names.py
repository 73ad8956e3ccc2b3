"""The names of a cluster's node pools and ComputeClasses: derived from the slice specs, then checked.

A pool is named after its slice (`name`, or generation and topology), numbered when a multi-host slice
spec asks for several; a ComputeClass after its slice spec without the number. Every name the plan
derives must be a valid, distinct GKE name that is not the system pool's. Pure: no provider SDK.
"""

from __future__ import annotations

from tpu_stacks.catalog.tpu import SliceShape
from tpu_stacks.cluster.decided import PoolPlan
from tpu_stacks.cluster.spec import ClusterSpec, SliceSpec
from tpu_stacks.errors import UserError
from tpu_stacks.names import GKE_NAME, JOBS_POOL_NAME, SYSTEM_POOL_NAME


def pool_name(spec: SliceSpec, shape: SliceShape, replica: int) -> str:
    """The slice's name, numbered per slice when there are several: `{n}` in the name places the
    number (`tpu{n}` gives the Saxml tutorial's tpu1, tpu2), otherwise `-1`, `-2` is appended."""
    generation_name = shape.generation if shape.generation.startswith("tpu") else f"tpu-{shape.generation}"
    base = spec.name or f"{generation_name}-{shape.topology}"
    if "{n}" in base:
        return base.replace("{n}", str(replica + 1))
    return base if spec.count == 1 or not shape.multi_host else f"{base}-{replica + 1}"


def class_name(spec: SliceSpec, shape: SliceShape) -> str:
    """The ComputeClass of a slice spec: its pool name without the slice number (one class serves all)."""
    generation_name = shape.generation if shape.generation.startswith("tpu") else f"tpu-{shape.generation}"
    base = spec.name or f"{generation_name}-{shape.topology}"
    return base.replace("{n}", "").strip("-") or generation_name


def refuse_shared_classes(pools: list[PoolPlan]) -> None:
    """One ComputeClass per slice spec: two specs deriving the same class name would share one class
    whose TPU shape fits only the first (`ClusterPlan.compute_classes` keeps one per name)."""
    first: dict[str, int] = {}
    for pool in pools:
        if pool.compute_class is None:
            continue
        owner = first.setdefault(pool.compute_class, pool.slice_index)
        if owner != pool.slice_index:
            raise UserError(
                f"cluster.slices[{pool.slice_index}].name",
                pool.compute_class,
                f"names the ComputeClass of cluster.slices[{owner}] too",
                "give each slice with a capacity list a distinct name",
            )


def check_pool_names(spec: ClusterSpec, pools: list[PoolPlan]) -> None:
    """Every pool's name is free (not the system pool's, nor the jobs pool's), distinct, and a valid GKE name; every
    ComputeClass belongs to one slice spec."""
    if spec.mode == "standard" and spec.existing is None:
        taken = {SYSTEM_POOL_NAME: "the cluster's CPU system pool"}
        if spec.jobs_pool is not None:
            taken[JOBS_POOL_NAME] = "the cluster's CPU pool for Jobs (cluster.jobsPool)"
        for pool in pools:
            if pool.name in taken:
                raise UserError(
                    f"cluster.slices[{pool.slice_index}].name",
                    pool.name,
                    f"is the name of {taken[pool.name]}",
                    "give the slice another name",
                )
    names = [pool.name for pool in pools]
    duplicates = sorted({name for name in names if names.count(name) > 1})
    if duplicates:
        raise UserError(
            "cluster.slices[].name", duplicates[0], "names two node pools", "give each slice a distinct name"
        )
    refuse_shared_classes(pools)
    for pool in pools:
        if not GKE_NAME.matches(pool.name):
            raise UserError(
                f"cluster.slices[{pool.slice_index}].name",
                pool.name,
                "is not a valid node pool name",
                "use lowercase letters, digits and '-'",
            )
