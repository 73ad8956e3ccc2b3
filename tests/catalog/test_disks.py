"""Disk types per TPU generation (catalog/disks.py)."""

from tpu_stacks.catalog import disks
from tpu_stacks.catalog.tpu import GENERATIONS, generation


def test_every_generation_names_the_disks_its_vms_attach():
    assert all(g.disk_types for g in GENERATIONS)
    for name in ("v4", "v5e", "v5p"):
        assert generation(name).disk_types == ("pd-balanced",) and disks.scratch_disk_type(name) == "pd-balanced"
    for name in ("v6e", "tpu7x"):  # Hyperdisk only: a pd-balanced volume (standard-rwo) never attaches
        assert not any(disk.startswith("pd-") for disk in generation(name).disk_types)
        assert disks.scratch_disk_type(name) == "hyperdisk-balanced"
    assert disks.scratch_disk_type("trillium") == "hyperdisk-balanced"  # aliases too


def test_gke_preinstalls_a_storage_class_only_for_persistent_disk():
    assert disks.PREINSTALLED_STORAGE_CLASSES == {"pd-balanced": "standard-rwo"}
