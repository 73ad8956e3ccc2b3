"""Every workload takes `capacity`: the shipped tutorial configs plus a fallback list give a ComputeClass
of the slice each one sized (never a fixed pool size), and a mistake names the workload's own key."""

from pathlib import Path

import pytest
import yaml

from tpu_stacks.cluster.compute_class import compute_class_spec
from tpu_stacks.cluster.spec import ClusterSpec
from tpu_stacks.errors import UserError
from tpu_stacks.jetstream.plan import plan_jetstream
from tpu_stacks.jetstream.spec import JetStreamSpec
from tpu_stacks.raytrain.plan import plan_raytrain
from tpu_stacks.raytrain.spec import RayTrainSpec

ROOT = Path(__file__).resolve().parents[2]
MIN_VERSION = "1.33.3-gke.1136000"


def config(stack: str, section: str, **changes):
    loaded = yaml.safe_load((ROOT / f"Pulumi.{stack}.yaml").read_text())["config"]
    cluster = {**loaded["tpu-stacks:cluster"], "project": "p", "minVersion": MIN_VERSION}
    return {**loaded[f"tpu-stacks:{section}"], **changes}, ClusterSpec.model_validate(cluster)


def test_jetstream_fallback_leaves_the_node_count_to_gke():
    """The tutorial's v5e 2x4 on ct5lp-hightpu-8t, 8 chips per node; no fixed `nodes` from the replicas."""
    section, cluster = config("jetstream-gemma", "jetstream", capacity=["spot", "onDemand"])
    plan = plan_jetstream(JetStreamSpec.model_validate(section), cluster, hf_token_given=True)
    (pool,) = plan.cluster.compute_classes
    assert pool.node_count is None and pool.zone == "us-west4-a"
    rules = compute_class_spec(pool, autopilot=False)["priorities"]
    assert {(r["tpu"]["type"], r["tpu"]["count"], r["tpu"]["topology"], r["machineType"]) for r in rules} == {
        ("tpu-v5-lite-podslice", 8, "2x4", "ct5lp-hightpu-8t")
    }


def test_raytrain_fallback_is_the_4x4_of_four_hosts():
    """Llama 3 8B training on v6e 4x4: four ct6e-standard-4t hosts of 4 chips each."""
    section, cluster = config("raytrain", "raytrain", capacity=["spot", "onDemand"])
    plan = plan_raytrain(RayTrainSpec.model_validate(section), cluster)
    (pool,) = plan.cluster.compute_classes
    assert compute_class_spec(pool, autopilot=False)["priorities"][0]["tpu"] == {
        "type": "tpu-v6e-slice",
        "count": 4,
        "topology": "4x4",
    }


def test_raytrain_threads_per_core_with_a_fallback_names_the_raytrain_key():
    section, cluster = config("raytrain", "raytrain", capacity=["spot", "onDemand"], threadsPerCore=1)
    with pytest.raises(UserError) as caught:
        plan_raytrain(RayTrainSpec.model_validate(section), cluster)
    assert str(caught.value).startswith("raytrain.threadsPerCore: 1 cannot be set with several capacity kinds")


def test_jetstream_spot_and_capacity_together_name_the_jetstream_key():
    section, cluster = config("jetstream-gemma", "jetstream", capacity=["onDemand"], spot=True)
    with pytest.raises(UserError) as caught:
        plan_jetstream(JetStreamSpec.model_validate(section), cluster, hf_token_given=True)
    assert str(caught.value).startswith("jetstream.spot: True cannot be combined with capacity")
