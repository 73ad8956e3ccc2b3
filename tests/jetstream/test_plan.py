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


def test_the_converters_scratch_disk_follows_the_pools_generation():
    """v5e VMs attach pd-balanced (GKE's standard-rwo); v6e and tpu7x VMs attach only Hyperdisk, for which
    GKE has no StorageClass, so the converter brings its own (JetStream serves v5e today: the pool is swapped)."""
    from tpu_stacks.jetstream.converter import scratch_storage

    plan = _gemma()
    assert scratch_storage(plan, plan.pool) == ("standard-rwo", None)
    for gen, topology in (("v6e", "2x4"), ("tpu7x", "2x2x1")):
        pool = plan.pool.model_copy(update={"shape": slice_shape(gen, topology)})
        assert scratch_storage(plan, pool) == (f"jetstream-{plan.converter_job_name}", "hyperdisk-balanced")


def test_a_chosen_class_or_other_nodes_keep_the_specs_class():
    from tpu_stacks.jetstream.converter import scratch_storage

    v6e = slice_shape("v6e", "2x4")
    chosen = _gemma(converter={"storage_class": "my-hyperdisk"})
    assert scratch_storage(chosen, chosen.pool.model_copy(update={"shape": v6e})) == ("my-hyperdisk", None)
    elsewhere = _gemma(converter={"node_selector": {"pool": "cpu"}})
    assert scratch_storage(elsewhere, elsewhere.pool.model_copy(update={"shape": v6e})) == ("standard-rwo", None)
    autopilot = _gemma()
    pool = autopilot.pool.model_copy(update={"shape": v6e, "autopilot": True})
    assert scratch_storage(autopilot, pool) == ("standard-rwo", None)  # a general-purpose node


def test_on_hyperdisk_vms_the_job_claims_a_class_it_declares():
    import pulumi

    from tests.mocks import capture
    from tpu_stacks.jetstream.converter import converter_job

    plan = _gemma()
    pool = plan.pool.model_copy(update={"shape": slice_shape("v6e", "2x4")})
    mocks = capture(lambda: converter_job("js", plan, pool, "bucket", "hf", pulumi.ResourceOptions()))
    storage_class = mocks.named("kubernetes:storage.k8s.io/v1:StorageClass", "js-converter-scratch").inputs
    assert storage_class["provisioner"] == "pd.csi.storage.gke.io"
    assert storage_class["parameters"] == {"type": "hyperdisk-balanced"}
    assert storage_class["volumeBindingMode"] == "WaitForFirstConsumer"
    job = mocks.named("kubernetes:batch/v1:Job", "js-converter").inputs
    (scratch,) = [v for v in job["spec"]["template"]["spec"]["volumes"] if v["name"] == "scratch"]
    claim = scratch["ephemeral"]["volumeClaimTemplate"]["spec"]
    assert claim["storageClassName"] == storage_class["metadata"]["name"]


def test_the_servers_sidecar_covers_the_disk_backed_compile_cache():
    """A read-only mount stages nothing, but the sidecar's limit is the pod's: it must hold the 20 GiB
    compile cache (it was 10 GiB)."""
    from tpu_stacks.jetstream.pod import pod_template

    plan = _gemma()
    annotations = pod_template(plan, plan.pool, {"app": "js"}, "bucket", "hf").metadata.annotations
    request = annotations["gke-gcsfuse/ephemeral-storage-request"]
    assert request == annotations["gke-gcsfuse/ephemeral-storage-limit"]
    assert int(request.removesuffix("Gi")) > 20
