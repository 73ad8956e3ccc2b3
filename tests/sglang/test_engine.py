"""What shared code asks of SGLang-JAX, answered by its records, not by its name: the engine record the policy pack
reads the flags with, the traffic record (flagged uncalibrated), the descriptor's optional capabilities (none it
does not have), and the smoke answer the script judges."""

from __future__ import annotations

import pytest

from tests.sglang.test_plan import plan
from tpu_policies.engine_args import infer
from tpu_policies.workloads import PodTemplate
from tpu_stacks import registry
from tpu_stacks.catalog.engine_traffic import TRAFFIC, traffic_of
from tpu_stacks.catalog.engines import engine_of_command
from tpu_stacks.catalog.upstream import ledger
from tpu_stacks.errors import UserError
from tpu_stacks.k8s import smoke_check
from tpu_stacks.sglang.engine import SGLANG
from tpu_stacks.sglang.monitoring import sglang_sections, sglang_target
from tpu_stacks.sglang.pod import SERVER_COMMAND
from tpu_stacks.traffic.model import calibration


def template(args: list[str], image: str = "us-central1-docker.pkg.dev/p/r/sglang-jax:0.0.1.post1") -> PodTemplate:
    container = {"name": "c", "image": image, "args": args, "command": SERVER_COMMAND}
    return PodTemplate("spec.template", {"containers": [container]}, {}, 1, None)


def test_the_pack_finds_the_server_by_its_command_and_reads_the_request_the_component_sized():
    assert engine_of_command(SERVER_COMMAND) is SGLANG
    for decided in (plan(), plan(topology="2x4", context_length=8192)):
        found = infer(template(decided.engine_args()), {})
        assert found is not None and found.engine is SGLANG
        assert found.problem is None and found.request == decided.request
        assert found.tensor_parallel == decided.tensor_parallel_size


def test_the_pack_reads_a_wrong_tensor_parallel_flag_as_written():
    found = infer(template(["--model-path=Qwen/Qwen3-30B-A3B", "--tp-size=8"]), {})
    assert found is not None and found.tensor_parallel == 8 and found.tp_name == "--tp-size"


def test_the_pack_reads_the_model_under_the_alias_the_server_accepts():
    """`--model` is the same argument as `--model-path` (ledger: sglang.flag.model-path): a pod written that way is
    sized, not "names no --model-path"."""
    found = infer(template(["--model=Qwen/Qwen3-30B-A3B", "--tp-size=4"]), {})
    assert found is not None and found.problem is None and found.request.model.id == "Qwen/Qwen3-30B-A3B"


def test_the_traffic_record_pages_the_kv_cache_and_says_it_is_uncalibrated():
    record = traffic_of("sglang")
    assert record.kv_cache == "paged" and not record.fixed_batch and record.builds == (SGLANG,)
    assert record.calibrations == () and record.calibration("v6e") == (None, record.uncalibrated)
    assert record.uncalibrated.startswith("uncalibrated: no published row measures SGLang-JAX 0.0.1.post1")
    assert all(TRAFFIC[name].calibrations and not TRAFFIC[name].uncalibrated for name in ("vllm", "jetstream"))
    with pytest.raises(UserError, match=r"^--tpu: 'v6e' uncalibrated: no published row measures SGLang-JAX"):
        calibration("sglang", "v6e")


def test_the_descriptor_declares_only_what_the_pinned_build_has():
    workload = registry.workload("sglang")
    assert workload.smoke_answer == "openai-completion" and workload.smoke_answer in smoke_check.CHECKS
    assert workload.status_cards is None and workload.alerts is None
    assert workload.engines == ("sglang",) and workload.sizing_engine == "sglang"
    assert SGLANG.metrics == () and SGLANG.metrics_port is None and SGLANG.metric_prefix is None


def test_the_monitoring_target_has_no_metrics_port_and_the_section_says_why():
    target = sglang_target(plan(), "sglang-jax", "sglang-jax")
    assert not target.exports_metrics and target.hpa is None and target.replicas == 1
    (section,) = sglang_sections(target)
    assert "exports no Prometheus metrics" in str(section)


def test_every_sglang_fact_is_a_row_read_in_the_pinned_wheel():
    rows = ledger().rows_of("sglang-jax")
    inside = ("sgl_jax/", f"sglang_jax-{SGLANG.version}.dist-info/")  # its code, or its METADATA's requirements
    assert len(rows) >= 15 and all(r.path and r.path.startswith(inside) for r in rows)
    assert SGLANG.version == "0.0.1.post1"  # the release the rows were read in (`make upstream` re-reads them)


def test_the_engine_is_declared_in_the_folder_and_collected_by_the_catalogue():
    """The record, its traffic entry, HTTP API, model-class check and gateway answer live in sglang/engine.py; the
    catalogue's shared tables find them through the descriptor (catalog/engines/declared.py), not by name."""
    from tpu_stacks.catalog import engines
    from tpu_stacks.catalog.engine_models import architecture_checks
    from tpu_stacks.catalog.inference_gateway import gateway_support, serving_api
    from tpu_stacks.sglang.engine import ENGINE, check_architecture

    assert registry.workload("sglang").engine.load() is ENGINE
    assert SGLANG in engines.ENGINES and SGLANG not in engines.CATALOGUED
    assert traffic_of("sglang") is ENGINE.traffic and serving_api(SGLANG) is ENGINE.api
    assert architecture_checks()["sglang"] is check_architecture
    answer = gateway_support(SGLANG)
    assert answer is not None and not answer.fronts and "exports no metrics" in answer.why


def test_the_image_runs_as_the_catalogues_nonroot_user():
    """The Dockerfile's USER is the catalogue's NONROOT_UID, the user the pod's security context names."""
    from pathlib import Path

    from tpu_stacks.catalog.image_users import NONROOT_UID
    from tpu_stacks.sglang.spec import IMAGE_DIR

    dockerfile = (Path(__file__).resolve().parents[2] / IMAGE_DIR / "Dockerfile").read_text()
    users = [line.split()[1] for line in dockerfile.splitlines() if line.startswith("USER ")]
    assert users == [str(NONROOT_UID)] and SGLANG.image_user().uid == NONROOT_UID
