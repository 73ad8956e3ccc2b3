"""The CPU machine types of catalog/locations.py (`CPU_SERIES`) and their shapes in catalog/cpu_machines.py against
a second transcription of Compute Engine's machine-type tables, vendored in tests/catalog/fixtures (its header names
the source and commit): every catalogued type exists with that many vCPUs and that much memory, and for each series
and kind the catalogue lists, it lists every size.

This found C3D's highcpu types from 30 vCPUs at 59 GB per 30 vCPUs, not the 2 GB a vCPU of the smaller ones.
"""

from pathlib import Path

import pytest

from tpu_stacks.catalog.cpu_machines import NAMED_SHAPES, PREDEFINED
from tpu_stacks.catalog.locations import CPU_SERIES, cpu_machine_types

FIXTURE = Path(__file__).parent / "fixtures" / "gce_machine_types.tsv"
PUBLISHED: dict[str, tuple[float, float]] = {
    name: (float(vcpus), float(gb))
    for name, vcpus, gb in (line.split("\t") for line in FIXTURE.read_text().splitlines() if not line.startswith("#"))
}


@pytest.mark.parametrize("name", sorted(PREDEFINED))
def test_every_catalogued_type_has_the_published_shape(name):
    """Memory in GB (binary, as the catalogue reads them); a shared-core E2 type's vCPU figure there is its fraction
    of a core, so only its memory is compared (the guest sees 2 vCPUs: NAMED_SHAPES)."""
    vcpus, gb = PUBLISHED[name]
    shape = PREDEFINED[name]
    assert shape.memory_gib == gb
    if name not in NAMED_SHAPES:
        assert shape.vcpus == vcpus


@pytest.mark.parametrize("series", CPU_SERIES, ids=lambda series: series.name)
def test_each_catalogued_kind_lists_every_published_size(series):
    for kind, sizes in series.sizes.items():
        prefix = f"{series.name}-{kind}-"
        published = sorted(int(name.removeprefix(prefix)) for name in PUBLISHED if name.startswith(prefix))
        assert list(sizes) == published, f"{series.name}-{kind}"


def test_the_shared_core_types_are_e2s_three():
    assert sorted(NAMED_SHAPES) == sorted(name for name in PUBLISHED if name.count("-") == 1)
    assert set(cpu_machine_types()) <= set(PUBLISHED)


def test_a_shared_core_type_shows_the_guest_two_vcpus():
    """Compute Engine's E2 shared-core table: e2-micro, e2-small and e2-medium each have 2 vCPUs, bursting on 0.25,
    0.5 and 1 of a core (the fixture's fractions)."""
    for name in NAMED_SHAPES:
        assert PREDEFINED[name].vcpus == 2
        assert PUBLISHED[name][0] in (0.25, 0.5, 1)


def test_n1s_custom_spelling_is_an_n1():
    """Compute Engine's custom machine types: N1's are written `custom-VCPUS-MEMORY_MB`, without a series."""
    from tpu_stacks.catalog.cpu_machines import MiB, machine_shape

    shape = machine_shape("custom-4-15360")
    assert (shape.series, shape.vcpus, shape.memory_bytes) == ("n1", 4, 15360 * MiB)
