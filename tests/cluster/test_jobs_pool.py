"""The jobs pool (`cluster.jobsPool`): a CPU pool from 0 nodes for Jobs the system pool cannot hold, sized from what
the Job requests with GKE's reservations, tainted so nothing else lands there, and every wrong setting refused in
one line before any resource."""

import pytest

from tests.cluster.test_component import POOL, build
from tests.mocks import refused
from tpu_stacks.catalog.cpu_machines import (
    PREDEFINED,
    GiB,
    allocatable,
    disk_types,
    holds,
    machine_shape,
    smallest_holding,
)
from tpu_stacks.catalog.locations import CPU_SERIES, cpu_machine_types
from tpu_stacks.cluster.component import TpuCluster
from tpu_stacks.cluster.jobs_pool import JobRequest, require_jobs_pool
from tpu_stacks.cluster.plan import plan_cluster
from tpu_stacks.cluster.spec import ClusterSpec
from tpu_stacks.errors import UserError

ZONAL = {"location": "us-central1-b", "slices": [{"generation": "v6e", "topology": "2x4"}]}
CONVERTER = JobRequest(job="the converter Job", cpu="8", memory="64Gi", cpu_key="x.cpu", memory_key="x.memory")


def jobs_pool(mocks):
    found = [p.inputs for p in mocks.of_type(POOL) if p.inputs["name"] == "jobs"]
    return found[0] if found else None


# -- GKE's allocatable, against the page's own example ----------------------------------------------------------


def test_the_reservations_give_gkes_own_example_node():
    """plan-node-sizes shows an e2-standard-4 (4 vCPUs, 16 GB) with `cpu: 3920m` and `memory: 13498416Ki`
    allocatable: the CPU rule gives exactly that; the memory model, with its allowance for the kernel, no more
    (a node sized by it can only be roomier than modelled) and within 1%."""
    cpu, memory = allocatable(machine_shape("e2-standard-4"))
    assert cpu == 3920
    assert 0.99 * 13498416 * 1024 <= memory <= 13498416 * 1024


def test_every_catalogued_cpu_type_has_a_shape_and_a_disk():
    assert set(PREDEFINED) == set(cpu_machine_types())
    for name, shape in PREDEFINED.items():
        assert shape.vcpus >= 1 and shape.memory_bytes >= GiB and disk_types(name), name
    assert {series.name for series in CPU_SERIES} <= {shape.series for shape in PREDEFINED.values()}
    assert machine_shape("e2-highmem-16").memory_gib == 128 and machine_shape("n2-highmem-128").memory_gib == 864
    custom = machine_shape("n2-custom-10-81920")
    assert (custom.vcpus, custom.memory_gib) == (10, 80)
    assert disk_types("n4-standard-8") == ("hyperdisk-balanced",) and disk_types("e2-highmem-16") == ("pd-balanced",)


def test_the_converters_node_is_the_smallest_e2_that_holds_it_with_room_for_the_nodes_own_pods():
    """8 CPUs and 64Gi: an e2-highmem-8 has 8 vCPUs, less than 8 after GKE's share; an e2-standard-16 has 64 GB,
    less than 64Gi after it. The first E2 that holds the pod is the e2-highmem-16 (16 vCPUs, 128 GB)."""
    gib64 = 64 * GiB
    assert not holds(machine_shape("e2-highmem-8"), 8000, gib64)
    assert not holds(machine_shape("e2-standard-16"), 8000, gib64)
    assert smallest_holding(8000, gib64).name == "e2-highmem-16"
    assert smallest_holding(64000, 400 * GiB).series == "n2"  # beyond E2's 32 vCPUs and 128 GB
    assert smallest_holding(10**6, 10**15) is None


# -- the pool a TpuCluster declares --------------------------------------------------------------------------------


def test_a_jobs_pool_starts_at_zero_nodes_and_is_tainted():
    mocks = build({**ZONAL, "jobs_pool": {"machine_type": "e2-highmem-16"}})
    pool = jobs_pool(mocks)
    assert pool["autoscaling"] == {"totalMinNodeCount": 0, "totalMaxNodeCount": 1, "locationPolicy": "ANY"}
    assert "nodeCount" not in pool and "initialNodeCount" not in pool  # the provider creates it with 0 nodes
    config = pool["nodeConfig"]
    assert config["machineType"] == "e2-highmem-16" and config["diskType"] == "pd-balanced"
    assert config["taints"] == [{"key": "tpu-stacks.dev/jobs", "value": "true", "effect": "NO_SCHEDULE"}]
    assert config["workloadMetadataConfig"] == {"mode": "GKE_METADATA"}
    assert config["oauthScopes"] == ["https://www.googleapis.com/auth/cloud-platform"]
    assert pool["nodeLocations"] == ["us-central1-b"]


def test_an_n4_jobs_pool_boots_from_hyperdisk():
    """N4 VMs attach no Persistent Disk: the boot disk follows the series (GKE would otherwise pick pd-balanced)."""
    mocks = build({**ZONAL, "jobs_pool": {"machine_type": "n4-highmem-16", "max_nodes": 2}})
    pool = jobs_pool(mocks)
    assert pool["nodeConfig"]["diskType"] == "hyperdisk-balanced" and pool["autoscaling"]["totalMaxNodeCount"] == 2


def test_no_jobs_pool_unless_asked():
    assert jobs_pool(build(ZONAL)) is None


# -- a workload's Job sizes or checks it -------------------------------------------------------------------------


def test_a_workload_sizes_the_pool_or_checks_the_users_machine():
    spec = ClusterSpec(project="p", location="us-central1-b")
    assert require_jobs_pool(spec, CONVERTER).jobs_pool.machine_type == "e2-highmem-16"
    chosen = ClusterSpec(project="p", location="us-central1-b", jobs_pool={"machine_type": "n2-highmem-16"})
    assert require_jobs_pool(chosen, CONVERTER).jobs_pool.machine_type == "n2-highmem-16"
    small = ClusterSpec(project="p", location="us-central1-b", jobs_pool={"machine_type": "e2-standard-16"})
    with pytest.raises(UserError) as error:
        require_jobs_pool(small, CONVERTER)
    assert str(error.value).startswith(
        "cluster.jobsPool.machineType: 'e2-standard-16' leaves a pod 15.39 CPU and 55.5 GiB (GKE's reservations and "
        "the node's own pods taken), less than the converter Job requests: 8 CPU (x.cpu), 64Gi (x.memory); "
        "use e2-highmem-16 (the smallest that holds it), or remove machineType"
    )
    huge = JobRequest(job="the converter Job", cpu="8", memory="4Ti", cpu_key="x.cpu", memory_key="x.memory")
    with pytest.raises(UserError, match=r"^x\.memory: '4Ti' with 8 CPU is more than one node of any catalogued E2/N2"):
        require_jobs_pool(spec, huge)


def test_autopilot_and_an_existing_clusters_pools_get_no_jobs_pool():
    autopilot = ClusterSpec(project="p", location="us-central1", mode="autopilot")
    assert require_jobs_pool(autopilot, CONVERTER).jobs_pool is None
    existing = ClusterSpec(
        project="p", location="us-central1-b", existing={"name": "mine", "location": "us-central1-b"}
    )
    assert require_jobs_pool(existing, CONVERTER).jobs_pool is None
    creates = existing.model_copy(update={"existing": existing.existing.model_copy(update={"create_pools": True})})
    assert require_jobs_pool(creates, CONVERTER).jobs_pool.machine_type == "e2-highmem-16"


@pytest.mark.parametrize(
    "args,message",
    [
        (
            {**ZONAL, "jobs_pool": {}},
            "cluster.jobsPool.machineType is required: no workload of this stack sizes the pool from its Job",
        ),
        (
            {**ZONAL, "jobs_pool": {"machine_type": "ct5lp-hightpu-8t"}},
            "cluster.jobsPool.machineType: 'ct5lp-hightpu-8t' is a TPU machine type",
        ),
        (
            {**ZONAL, "jobs_pool": {"machine_type": "e2-highmem-64"}},
            "cluster.jobsPool.machineType: 'e2-highmem-64' is not a machine type of the E2 series",
        ),
        (
            {**ZONAL, "jobs_pool": {"machine_type": "e2-highmem-16", "max_nodes": 0}},
            "cluster.jobs_pool.max_nodes: 0 is not accepted",
        ),
        (
            {"location": "us-central1", "mode": "autopilot", "jobs_pool": {"machine_type": "e2-highmem-16"}},
            "cluster.jobsPool: '<set>' is for Standard clusters",
        ),
        (
            {
                "location": "us-central1-b",
                "existing": {"name": "mine", "location": "us-central1-b"},
                "jobs_pool": {"machine_type": "e2-highmem-16"},
            },
            "cluster.jobsPool: '<set>' would be a new node pool of the existing cluster",
        ),
        (
            {
                "location": "us-central1-b",
                "jobs_pool": {"machine_type": "e2-highmem-16"},
                "slices": [{"generation": "v6e", "topology": "2x4", "name": "jobs"}],
            },
            "cluster.slices[0].name: 'jobs' is the name of the cluster's CPU pool for Jobs (cluster.jobsPool)",
        ),
    ],
)
def test_a_wrong_jobs_pool_is_refused_before_any_resource(args, message):
    assert message in refused(lambda: TpuCluster("bad", {"project": "proj", **args}))


def test_the_jobs_pool_sends_only_fields_whose_read_back_is_known():
    """A second `up` must find the pool as GKE reads it back (tests/cluster/test_read_back.py): besides the TPU
    pools' fields it sends `diskType` (Optional+Computed; GKE answers the type it was given) and `taints`, which the
    provider's `flattenTaints` reads back only for keys its state has, each with GKE's enum effect (NO_SCHEDULE, not
    Kubernetes' NoSchedule, which the provider's validation refuses) (terraform-provider-google node_config.go)."""
    from tests.cluster.test_read_back import NODE_CONFIG_SENT

    config = jobs_pool(build({**ZONAL, "jobs_pool": {"machine_type": "e2-highmem-16"}}))["nodeConfig"]
    assert set(config) <= NODE_CONFIG_SENT | {"diskType", "taints"}
    assert {taint["effect"] for taint in config["taints"]} == {"NO_SCHEDULE"}


def test_a_jobs_cpu_request_in_millicores():
    """Kubernetes CPU units: 1 CPU is 1000m (kubernetes.io/docs/concepts/configuration/manage-resources-containers,
    "CPU resource units")."""
    assert CONVERTER.cpu_millis == 8000
    assert JobRequest(job="j", cpu="500m", memory="1Gi", cpu_key="c", memory_key="m").cpu_millis == 500
    assert JobRequest(job="j", cpu="1.5", memory="1Gi", cpu_key="c", memory_key="m").cpu_millis == 1500


def test_a_jobs_pool_boots_from_the_first_disk_its_series_attaches():
    """C3 VMs attach Persistent Disk and Hyperdisk (catalog/cpu_machines.py); the catalogue lists the one to use
    first, pd-balanced, as GKE's default boot disk for the series."""
    assert disk_types("c3-standard-8") == ("pd-balanced", "hyperdisk-balanced")
    spec = ClusterSpec.model_validate({**ZONAL, "project": "p", "jobsPool": {"machineType": "c3-standard-8"}})
    decided = plan_cluster(spec).jobs_pool
    assert decided is not None and decided.disk_type == "pd-balanced"
