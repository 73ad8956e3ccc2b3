"""catalog/disks.scratch_disk_type for each way a caller names the VMs: a generation's record, a TPU machine type, a
CPU machine type. The first type each lists is the read-write one: v6e's VMs attach Hyperdisk Balanced and Hyperdisk
ML, which is for read-only model weights (https://cloud.google.com/compute/docs/disks/hyperdisks, "Hyperdisk ML");
C3 VMs attach Persistent Disk and Hyperdisk, N4 Hyperdisk only (Compute Engine's general-purpose machine family)."""

from tpu_stacks.catalog.disks import scratch_disk_type
from tpu_stacks.catalog.tpu import generation


def test_a_generations_record():
    assert scratch_disk_type(generation("v6e")) == "hyperdisk-balanced"
    assert scratch_disk_type(generation("v5e")) == "pd-balanced"


def test_a_tpu_machine_type():
    assert scratch_disk_type("ct6e-standard-4t") == "hyperdisk-balanced"
    assert scratch_disk_type("ct5lp-hightpu-4t") == "pd-balanced"


def test_a_cpu_machine_type():
    assert scratch_disk_type("c3-standard-4") == "pd-balanced"
    assert scratch_disk_type("n4-standard-8") == "hyperdisk-balanced"
