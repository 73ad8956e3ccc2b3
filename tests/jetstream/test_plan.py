"""Pure decisions of the jetstream workload: the plan, with no resources and no mocks."""

import pytest

from tpu_stacks.catalog.models import lookup_model
from tpu_stacks.catalog.tpu import slice_shape
from tpu_stacks.errors import UserError
from tpu_stacks.jetstream.args import JetStreamConverterArgs, JetStreamStackArgs
from tpu_stacks.jetstream.plan import _check_heads
from tpu_stacks.jetstream.spec import ConverterSpec, JetStreamSpec


def test_heads_are_divided_by_devices_not_chips():
    qwen = lookup_model("Qwen/Qwen2.5-1.5B-Instruct")  # 12 attention heads
    _check_heads(qwen, slice_shape("v5e", "2x2"))  # 4 devices divide 12
    ironwood = slice_shape("tpu7x", "2x2x1")  # 4 chips, but 8 JAX devices: 8 does not divide 12
    with pytest.raises(UserError, match=r"jetstream.topology: '2x2x1' gives tensor parallelism 8 \(tpu7x devices\)"):
        _check_heads(qwen, ironwood)


def test_schema_args_and_validated_spec_have_the_same_fields():
    assert set(JetStreamStackArgs.__annotations__) - {"cluster", "hf_token"} == set(JetStreamSpec.model_fields)
    assert set(JetStreamConverterArgs.__annotations__) == set(ConverterSpec.model_fields)


def _gemma(**spec):
    from tpu_stacks.cluster.spec import ClusterSpec
    from tpu_stacks.jetstream.plan import plan_jetstream

    cluster = ClusterSpec(project="proj", location="us-west4", system_pool={"machine_type": "e2-standard-4"})
    return plan_jetstream(JetStreamSpec(model="google/gemma-7b-it", zone="us-west4-a", **spec), cluster, True)


def test_the_servers_sidecar_covers_the_disk_backed_compile_cache():
    """A read-only mount stages nothing, but the sidecar's limit is the pod's: it must hold the 20 GiB
    compile cache (it was 10 GiB)."""
    from tpu_stacks.jetstream.pod import pod_template

    plan = _gemma()
    annotations = pod_template(plan, plan.pool, {"app": "js"}, "bucket", "hf").metadata.annotations
    request = annotations["gke-gcsfuse/ephemeral-storage-request"]
    assert request == annotations["gke-gcsfuse/ephemeral-storage-limit"]
    assert int(request.removesuffix("Gi")) > 20
