"""Pure decisions of the saxml workload: the plan, with no resources and no mocks."""

from tpu_stacks.cluster.spec import ClusterSpec
from tpu_stacks.saxml.args import PublishedModelArgs, SaxmlImagesArgs, SaxmlStackArgs
from tpu_stacks.saxml.plan import plan_saxml
from tpu_stacks.saxml.spec import ImagesSpec, PublishedModelSpec, SaxmlSpec
from tpu_stacks.sizing import tensor_parallel_size

SINGLE_HOST = {"model": "meta-llama/Meta-Llama-3-8B", "models": []}  # fits one v5e VM (2x2 by default)


def test_the_plan_carries_the_cluster_its_pools_and_one_shape():
    cluster = ClusterSpec(project="proj", location="us-central1-a")
    for spec in (SaxmlSpec(), SaxmlSpec(**SINGLE_HOST), SaxmlSpec(**SINGLE_HOST, topology="2x4", replicas=3)):
        plan = plan_saxml(spec, cluster)
        pools = plan.cluster.pools_of(0)
        assert {pool.shape for pool in pools} == {plan.shape}
        assert plan.hosts * plan.chips_per_host == plan.shape.chips
        assert sum(pool.node_count for pool in pools) == plan.slices * plan.hosts
        assert plan.tensor_parallel_size == tensor_parallel_size(plan.shape)
    assert [pool.name for pool in plan_saxml(SaxmlSpec(pool_name="sax-{n}"), cluster).cluster.pools] == [
        "sax-1",
        "sax-2",
    ]


def test_schema_args_and_validated_spec_have_the_same_fields():
    assert set(SaxmlStackArgs.__annotations__) - {"cluster"} == set(SaxmlSpec.model_fields)
    assert set(PublishedModelArgs.__annotations__) == set(PublishedModelSpec.model_fields)
    assert set(SaxmlImagesArgs.__annotations__) == set(ImagesSpec.model_fields)
