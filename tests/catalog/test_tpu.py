"""The TPU catalogue against its sources' facts (keys in docs/sources.md), one table per generation."""

import re

import pytest

from tpu_stacks.catalog import flex_start, tpu
from tpu_stacks.catalog.engines.ray import RAY
from tpu_stacks.errors import UserError

GiB, GB = 1024**3, 10**9

# generation: (accelerator label, HBM bytes per chip, HBM bandwidth, peak bf16, ICI dims, max chips,
#              machine types {name: chips per VM}, standard minimum GKE version)
FACTS = {
    "v4": ("tpu-v4-podslice", 32 * GiB, 1200 * GB, 275e12, 3, 3072, {"ct4p-hightpu-4t": 4}, "1.26.1-gke.1500"),
    "v5e": (
        "tpu-v5-lite-podslice",
        16 * GB,
        819 * GB,
        197e12,
        2,
        256,
        {"ct5lp-hightpu-1t": 1, "ct5lp-hightpu-4t": 4, "ct5lp-hightpu-8t": 8},
        "1.27.2-gke.2100",
    ),
    "v5p": ("tpu-v5p-slice", 95 * GiB, 2765 * GB, 459e12, 3, 6144, {"ct5p-hightpu-4t": 4}, "1.28.3-gke.1024000"),
    "v6e": (
        "tpu-v6e-slice",
        32 * GB,
        1640 * GB,
        918e12,
        2,
        256,
        {"ct6e-standard-1t": 1, "ct6e-standard-4t": 4, "ct6e-standard-8t": 8},
        "1.31.2-gke.1115000",
    ),
    "tpu7x": (
        "tpu7x",
        192 * GiB,
        7380 * GB,
        2307e12,
        3,
        9216,
        {"tpu7x-standard-1t": 1, "tpu7x-standard-4t": 4},
        "1.34.3-gke.1318000",
    ),
}


@pytest.mark.parametrize("name", sorted(FACTS))
def test_generation_facts(name):
    label, hbm, bandwidth, flops, dims, max_chips, machines, min_version = FACTS[name]
    gen = tpu.generation(name)
    assert gen.accelerator_label == label
    assert gen.hbm_bytes_per_chip == hbm
    assert gen.hbm_bandwidth_bytes_per_s == bandwidth
    assert gen.peak_bf16_flops == flops
    assert gen.ici_dims == dims
    assert gen.max_chips == max_chips
    assert {m.name: m.chips_per_vm for m in gen.machine_types} == machines
    assert gen.min_gke_standard.version == min_version
    assert gen.topologies[-1].chips == max_chips


def test_every_generation_usable_on_gke_is_listed():
    assert tpu.generation_names() == ["v4", "v5e", "v5p", "v6e", "tpu7x"]


@pytest.mark.parametrize("name", ["v5e", "v6e"])
def test_2d_topologies_are_the_documented_table(name):
    assert tpu.generation(name).topology_names == ["1x1", "2x2", "2x4", "4x4", "4x8", "8x8", "8x16", "16x16"]


def test_3d_rule_below_64_chips_and_multiples_of_four_above():
    names = tpu.generation("v5p").topology_names
    assert names[:5] == ["2x2x1", "2x2x2", "2x2x4", "2x4x4", "4x4x4"]
    for shape in tpu.generation("v5p").topologies:
        a, b, c = shape.dims
        if shape.chips >= 64:
            assert a <= b <= c and a % 4 == b % 4 == c % 4 == 0
    # the documented v5p table ([D-v5p]) is a subset of the rule's output
    for documented in [
        "4x4x8",
        "4x4x12",
        "4x8x8",
        "8x8x8",
        "8x8x12",
        "8x8x16",
        "8x16x16",
        "12x16x16",
        "16x16x16",
        "16x16x24",
    ]:
        assert documented in names
    assert "16x16x28" not in names  # beyond the documented v5p maximum
    assert "12x16x16" in tpu.generation("v4").topology_names
    assert "16x16x16" not in tpu.generation("v4").topology_names  # v4's largest is 12x16x16
    assert "1x1x1" in tpu.generation("tpu7x").topology_names


# (generation, topology) -> (machine type chosen, nodes); nodes = chips / chips per VM
SHAPES = [
    ("v5e", "1x1", "ct5lp-hightpu-1t", 1),
    ("v5e", "2x2", "ct5lp-hightpu-4t", 1),
    ("v5e", "2x4", "ct5lp-hightpu-8t", 1),
    ("v5e", "4x8", "ct5lp-hightpu-4t", 8),
    ("v5e", "16x16", "ct5lp-hightpu-4t", 64),
    ("v6e", "2x4", "ct6e-standard-8t", 1),
    ("v6e", "4x4", "ct6e-standard-4t", 4),
    ("v4", "2x2x1", "ct4p-hightpu-4t", 1),
    ("v4", "2x2x2", "ct4p-hightpu-4t", 2),
    ("v5p", "4x4x8", "ct5p-hightpu-4t", 32),
    ("v5p", "16x16x24", "ct5p-hightpu-4t", 1536),
    ("tpu7x", "2x2x2", "tpu7x-standard-4t", 2),
    ("tpu7x", "8x8x8", "tpu7x-standard-4t", 128),
]


@pytest.mark.parametrize("gen,topology,machine,nodes", SHAPES)
def test_node_count_rule(gen, topology, machine, nodes):
    shape = tpu.slice_shape(gen, topology)
    assert (shape.machine_type, shape.nodes) == (machine, nodes)
    assert shape.nodes * shape.chips_per_vm == shape.chips
    assert shape.multi_host == (nodes > 1)


def test_every_shape_obeys_nodes_equals_chips_over_chips_per_vm():
    for gen in tpu.GENERATIONS:
        for shape in tpu.all_slice_shapes(gen):
            assert shape.nodes == shape.chips // shape.chips_per_vm
            assert shape.chips % shape.chips_per_vm == 0


def test_2x4_on_four_chip_vms_is_a_two_node_slice():
    shape = tpu.slice_shape("v5e", "2x4", "ct5lp-hightpu-4t")
    assert shape.nodes == 2 and shape.multi_host


def test_labels_and_requests_for_a_pool():
    shape = tpu.slice_shape("v5e", "4x8")
    assert shape.node_selector() == {
        "cloud.google.com/gke-tpu-accelerator": "tpu-v5-lite-podslice",
        "cloud.google.com/gke-tpu-topology": "4x8",
    }
    assert shape.tpu_resources() == {"google.com/tpu": "4"}


def test_placement_kind():
    assert tpu.slice_shape("tpu7x", "4x4x4").multi_host_placement == "workload-policy"
    assert tpu.slice_shape("v6e", "4x4").multi_host_placement == "compact"


def test_prices_have_sources_or_are_unknown():
    assert tpu.slice_shape("v6e", "2x4").hourly_usd == pytest.approx(21.6)
    assert tpu.slice_shape("v5e", "4x8").hourly_usd == pytest.approx(38.4)
    assert tpu.slice_shape("tpu7x", "2x2x1").hourly_usd is None
    for gen in tpu.GENERATIONS:
        if gen.price:
            assert gen.price.source and gen.price.as_of


def test_unverified_minimums_are_marked():
    assert tpu.generation("v6e").min_gke_standard.verified
    assert not tpu.generation("v5p").min_gke_standard.verified


def test_aliases_and_lookups():
    assert tpu.generation("Trillium").name == "v6e"
    assert tpu.generation_of_machine_type("ct5lp-hightpu-4t").name == "v5e"
    assert tpu.generation_of_machine_type("e2-standard-4") is None
    assert tpu.generation_of_accelerator("tpu-v6e-slice").name == "v6e"


def test_versions_compare_numerically():
    assert tpu.gke_version("1.31") < tpu.gke_version("1.31.2-gke.1115000")
    assert tpu.gke_version("1.31.10-gke.1") > tpu.gke_version("1.31.2-gke.1115000")
    with pytest.raises(UserError, match="is not a GKE version"):
        tpu.gke_version("latest")


@pytest.mark.parametrize(
    "gen,topology,machine,message",
    [
        ("v5e", "4x9", None, r"topology: '4x9' is not a v5e topology; valid: 1x1, 2x2, 2x4, 4x4"),
        ("v5e", "2x2x2", None, r"is not a v5e topology"),
        ("v5p", "4x4", None, r"is not a v5p topology"),
        ("v5e", "huge", None, r"is not a TPU topology; write it as AxB"),
        (
            "v5e",
            "4x8",
            "ct5lp-hightpu-8t",
            r"machineType: 'ct5lp-hightpu-8t' cannot form a 4x8 slice; use one of: ct5lp-hightpu-4t",
        ),
        ("v5e", "2x4", "ct6e-standard-8t", r"is not a v5e machine type"),
        ("v9", "2x2", None, rf"is not a TPU generation on GKE; valid: {', '.join(tpu.generation_names())}$"),
    ],
)
def test_invalid_shapes_are_refused_with_the_fix(gen, topology, machine, message):
    with pytest.raises(UserError, match=message):
        tpu.slice_shape(gen, topology, machine)


def test_ray_accelerator_names():
    """Ray's names are the RAY engine record's platforms (ray.util.accelerators); Ray names no tpu7x type."""
    assert {s.generation: s.platform for s in RAY.serves or ()} == {
        "v4": "TPU-V4",
        "v5e": "TPU-V5LITEPOD",
        "v5p": "TPU-V5P",
        "v6e": "TPU-V6E",
    }
    assert RAY.platform("tpu7x") is None and not RAY.serves_generation("tpu7x")


def test_topology_fix_names_the_generations_of_each_shape_from_the_records():
    with pytest.raises(UserError) as refused:
        tpu.parse_topology("4-8")
    two_d, three_d = re.fullmatch(r"write it as AxB \((.*)\) or AxBxC \((.*)\)", refused.value.fix).groups()
    assert {"v5e", "v6e"} <= set(two_d.split(", ")) and {"v4", "v5p", "tpu7x"} <= set(three_d.split(", "))
    for gen in tpu.GENERATIONS:  # every record is named, in the group of its ICI dimensions
        assert gen.name in (two_d if gen.ici_dims == 2 else three_d).split(", ")
    assert tpu.names_text(["v4"]) == "v4" and tpu.names_text(["a", "b", "c"], "and") == "a, b and c"


def test_flex_start_and_queued_provisioning_facts_match_gkes_flags():
    """`--reservation-affinity=none --no-enable-autorepair --location-policy=ANY --num-nodes=0`, flex-start
    with queued provisioning, VMs for up to 7 days, queued TPUs only where Google's tooling builds them."""
    assert (
        flex_start.DWS_RESERVATION_AFFINITY,
        flex_start.DWS_AUTO_REPAIR,
        flex_start.DWS_LOCATION_POLICY,
        flex_start.DWS_MIN_NODES,
    ) == (
        "NO_RESERVATION",
        False,
        "ANY",
        0,
    )
    assert flex_start.QUEUED_NEEDS_FLEX_START is True and flex_start.FLEX_START_MAX_RUN_SECONDS == 604800
    assert set(tpu.QUEUED_TPU_GENERATIONS) <= set(tpu.generation_names())
    assert (tpu.QUEUED_LABEL, flex_start.QUEUED_NODE_LABEL_VALUE) == ("cloud.google.com/gke-queued", "true")


# JAX devices per chip ([D-GKE-TPU], "TensorCores / chip"): v4 and v5p chips have two
# TensorCores fused as one megacore device; v5e and v6e have one TensorCore; a tpu7x chip is two
# chiplets and JAX sees 2 devices per chip ([MT]).
JAX_DEVICES_PER_CHIP = {"v4": 1, "v5e": 1, "v5p": 1, "v6e": 1, "tpu7x": 2}


@pytest.mark.parametrize("name", sorted(JAX_DEVICES_PER_CHIP))
def test_jax_devices_per_chip(name):
    assert tpu.generation(name).jax_devices_per_chip == JAX_DEVICES_PER_CHIP[name]


@pytest.mark.parametrize(
    "gen,topology,devices",
    [("v4", "2x2x1", 4), ("v5p", "2x2x2", 8), ("v5e", "2x4", 8), ("v6e", "4x4", 16), ("tpu7x", "2x2x1", 8)],
)
def test_a_slice_has_chips_times_devices_per_chip(gen, topology, devices):
    assert tpu.slice_shape(gen, topology).jax_devices == devices


@pytest.mark.parametrize("prefix,full", [("1.31", "1.31.0"), ("1.31", "1.31.0-gke.0"), ("1.31.2", "1.31.2-gke.0")])
def test_a_version_prefix_is_the_lowest_version_it_names(prefix, full):
    # Users write `minVersion: 1.31`, the catalogue writes minimums both ways (`1.29.0`,
    # `1.31.2-gke.1115000`): a prefix stands for the lowest release it names, so `1.31` == `1.31.0`.
    short, long = tpu.gke_version(prefix), tpu.gke_version(full)
    assert short.key == long.key
    assert not short < long and not long < short
    assert short < tpu.gke_version(full + "1" if "-gke." in full else full + "-gke.1")


def test_version_parts_compare_as_numbers_in_order():
    assert tpu.gke_version(" 1.31.2-gke.1115000 ").key == (1, 31, 2, 1115000)
    assert tpu.gke_version("1.9") < tpu.gke_version("1.10")
    assert tpu.gke_version("1.31.9-gke.999") < tpu.gke_version("1.31.10-gke.1")
    assert tpu.gke_version("1.30.99-gke.1") < tpu.gke_version("1.31")
    assert not tpu.gke_version("1.31") < tpu.gke_version("1.31")
    for bad in ("1", "1.31.2.3", "v1.31", "1.31-gke.1x"):
        with pytest.raises(UserError, match=f"^'{bad}' is not a GKE version; use a form like 1.31"):
            tpu.gke_version(bad)


def test_an_invalid_topology_lists_at_most_fourteen_valid_ones():
    # scripts/mutation_equivalent.txt relies on these counts: no generation has exactly 14 or 15 topologies
    assert {g.name: len(g.topologies) for g in tpu.GENERATIONS} == {
        "v4": 23,
        "v5e": 8,
        "v5p": 44,
        "v6e": 8,
        "tpu7x": 57,
    }
    with pytest.raises(UserError) as short:
        tpu.slice_shape("v5e", "3x3")
    assert str(short.value).endswith("valid: 1x1, 2x2, 2x4, 4x4, 4x8, 8x8, 8x16, 16x16")  # all 8, no ellipsis
    with pytest.raises(UserError) as long:
        tpu.slice_shape("v5p", "3x3x3")
    listed = str(long.value).split("valid: ", 1)[1]
    assert listed.endswith(", ...") and len(listed.removesuffix(", ...").split(", ")) == 14
    assert listed.startswith("2x2x1, 2x2x2, 2x2x4, 2x4x4, 4x4x4, ")


def test_minimum_versions_parse():
    # v6e Standard from 1.31.2-gke.1115000 ([RAY]), Autopilot TPUs from 1.29.2-gke.1521000
    assert tpu.generation("v6e").min_gke_standard.parsed.key == (1, 31, 2, 1115000)
    assert tpu.generation("v5e").min_gke_autopilot.parsed.key == (1, 29, 2, 1521000)


def test_multi_host_pools_get_fifteen_pods_per_node():
    assert tpu.MULTI_HOST_MAX_PODS_PER_NODE == 15  # [XPK] --max-pods-per-node 15


def test_v5p_price_per_slice():
    # v5p $4.20 per chip-hour ([SB] applied-inference.md); 2x2x2 is 8 chips
    assert tpu.slice_shape("v5p", "2x2x2").hourly_usd == pytest.approx(33.6)
    assert tpu.slice_shape("v5e", "1x1").hourly_usd == pytest.approx(1.2)


def test_the_2d_rule_reads_each_axis_limit_from_its_own_axis():
    """[D-v5e], [D-v6e], [XPK]: 1x1, 2x2, 2x4, then AxB, A <= B <= 2A, powers of two. Every catalogued 2D
    generation's largest slice is square (16x16), so the rule is pinned here on an 8x16 limit: A up to 8,
    B up to 16."""
    from tpu_stacks.catalog.tpu import _shapes_2d

    assert [t.text for t in _shapes_2d((8, 16))] == ["1x1", "2x2", "2x4", "4x4", "4x8", "8x8", "8x16"]
    assert [t.text for t in _shapes_2d((16, 8))] == ["1x1", "2x2", "2x4", "4x4", "4x8", "8x8"]  # B <= 8


@pytest.mark.parametrize(
    ("limit", "shapes"),
    [
        ((7, 8, 8), ["4x4x4", "4x4x8", "4x8x8"]),  # A stops at 4: 8 > 7
        ((4, 7, 8), ["4x4x4", "4x4x8"]),  # B stops at 4
        ((4, 4, 7), ["4x4x4"]),  # C stops at 4
        ((8, 8, 8), ["4x4x4", "4x4x8", "4x8x8", "8x8x8"]),
    ],
)
def test_the_3d_rule_stops_each_axis_at_its_limit(limit, shapes):
    """[D-GKE-TPU]: from 64 chips A <= B <= C, each a multiple of 4, no axis beyond the largest slice. The
    catalogue's limits are all multiples of 4 (v4 12x16x16, v5p 16x16x24, tpu7x 16x24x24), so the bound
    is pinned on limits that are not."""
    from tpu_stacks.catalog.tpu import _shapes_3d

    below_64 = ["2x2x1", "2x2x2", "2x2x4", "2x4x4"]
    assert [t.text for t in _shapes_3d(limit)] == below_64 + shapes
