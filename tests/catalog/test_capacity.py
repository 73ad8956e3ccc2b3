"""The capacity facts: every value names its source; minimum versions order as GKE documents them."""

from tpu_stacks.catalog import capacity, tpu
from tpu_stacks.catalog.tpu import QUEUED_TPU_GENERATIONS, gke_version


def test_every_kind_states_its_risk_and_source():
    assert set(capacity.KIND_FACTS) == {"reservation", "spot", "onDemand", "flexStart"}
    for facts in capacity.KIND_FACTS.values():
        assert facts.preemption and facts.max_run and facts.source.startswith("[")
    assert "30 s" in capacity.KIND_FACTS["spot"].preemption  # [D-GKE-TPU] "TPU consumption"
    assert capacity.KIND_FACTS["flexStart"].max_run.startswith("7 days")  # [D-FLEX]


def test_minimum_versions_are_the_documented_ones():
    assert capacity.CUSTOM_COMPUTE_CLASS.version == "1.30.3-gke.1451000"  # [D-CCC]
    assert capacity.FLEX_START_TPU.version == "1.33.0-gke.1712000"  # [D-FLEX]
    assert capacity.AUTO_CREATION_WITHOUT_NAP.version == "1.33.3-gke.1136000"  # [D-GKE-NAP]
    assert gke_version("1.33.0-gke.1712000") < gke_version("1.33.3-gke.1136000")


def test_prices_are_sourced_or_unknown():
    for generation in ("v4", "v5e", "v5p", "v6e", "tpu7x"):
        for price in capacity.kind_prices(generation):
            assert price.source
            assert (price.usd_per_chip_hour is None) == (price.as_of is None)
    assert [p.usd_per_chip_hour for p in capacity.kind_prices("v5e")] == [None, None, 1.20, None]  # [SB] 2025-02


def test_capacity_facts_are_read_from_the_generation_records():
    """Flex-start, queued provisioning and the commitment price live on each `Generation`; the lists the
    checks name are derived from the records, so a new generation is one record."""
    assert "v4" in capacity.FLEX_START_UNSUPPORTED  # [D-FLEX] "TPU v3 and v4 are not supported"
    assert not {"v5e", "v5p", "v6e", "tpu7x"} & set(capacity.FLEX_START_UNSUPPORTED)
    assert {"v6e", "tpu7x"} <= set(QUEUED_TPU_GENERATIONS)  # [CTK] #5218
    assert not {"v4", "v5e", "v5p"} & set(QUEUED_TPU_GENERATIONS)  # GKE refused the pair (xpk#900)
    reservation = capacity.kind_prices("v6e")[0]
    assert (reservation.kind, reservation.usd_per_chip_hour, reservation.as_of) == ("reservation", 1.89, "2024-12")
    assert reservation.source == tpu.generation("v6e").commitment_price.source
