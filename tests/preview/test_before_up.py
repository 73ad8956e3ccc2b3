"""`tpu-stacks plan`'s "before you run up" block: every shipped stack's workload registers its first-`up` record,
whose minutes are the budgets the plan gives the engine, the plan prints it and writes it (`before_up`), and
docs/first-deploy.md shows the same figures."""

from __future__ import annotations

import argparse
import contextlib
import io
import json
import math
import re
import shutil
from pathlib import Path

import pytest
import yaml

from scripts import before_up_doc
from tests.shipped import shipped
from tpu_stacks.objects.awaits import IMAGE_PULL_MINUTES, NODE_PROVISIONING_MINUTES, job_budget
from tpu_stacks.vllm import download_plan
from tpu_stacks_preview import cli as plan
from tpu_stacks_preview.engine import run_program
from tpu_stacks_preview.report import before_up, before_up_lines

ROOT = Path(__file__).resolve().parents[2]
DOC = (ROOT / "docs" / "first-deploy.md").read_text(encoding="utf-8")


def record_of(stack: str) -> dict:
    capture = shipped(stack)
    assert capture.error is None, capture.error
    (record,) = before_up(capture)  # one workload component per stack
    return record


@pytest.mark.parametrize("stack", before_up_doc.stacks())
def test_every_wait_is_the_budget_the_plan_gives_the_engine(stack):
    record = record_of(stack)
    planned = {r.name: r.options.custom_timeouts for r in shipped(stack).resources if r.options.custom_timeouts}
    waits = record["waits"]
    assert waits
    for wait in waits:
        assert planned[wait["resource"]]["create"] == f"{wait['minutes']}m", (stack, wait)
        if wait["parts"]:
            assert sum(minutes for _, minutes in wait["parts"]) == wait["minutes"]
    # every object the plan gives a budget is in the record, each after the one before it (`up` waits in turn)
    assert {w["resource"] for w in waits} == set(planned)
    by_name = {r.name: r for r in shipped(stack).resources}
    for before, after in zip(waits, waits[1:]):
        assert by_name[before["resource"]].urn in by_name[after["resource"]].dependencies, (before, after)
    assert record["total_minutes"] == sum(w["minutes"] for w in waits)
    billed = sum(w["minutes"] for w in waits if w["tpu_billed"])
    assert record["tpu_minutes_before_serving"] == billed
    assert record["chip_hours_before_serving"] == round(record["tpu"]["total_chips"] * billed / 60, 2)


def test_vllm_405b_agrees_with_awaits_and_bills_no_tpu_during_the_download():
    record = record_of("vllm-405b")
    section = yaml.safe_load((ROOT / "Pulumi.vllm-405b.yaml").read_text())["config"]["tpu-stacks:vllm"]
    startup = section["startupMinutes"]
    # 811.7 GB at 100 MB/s: 8117 s = 135.3 min, 136 whole minutes; the Job's deadline adds a CPU node and the image
    download = 136
    deadline = (NODE_PROVISIONING_MINUTES + IMAGE_PULL_MINUTES + download) * 60
    assert download_plan.DOWNLOAD_BYTES_PER_S == 100 * 10**6
    assert [(w["resource"], w["minutes"], w["tpu_billed"]) for w in record["waits"]] == [
        ("vllm-weights-download", job_budget(deadline).create_minutes, False),
        ("vllm-rayservice", NODE_PROVISIONING_MINUTES + IMAGE_PULL_MINUTES + startup, True),
        ("vllm-smoke-test", 22, False),
    ]
    assert [w["minutes"] for w in record["waits"]] == [15 + 10 + 136 + 2, 15 + 10 + 120, 22] == [163, 145, 22]
    assert record["waits"][0]["parts"] == [["CPU node", 15], ["image", 10], ["download", 136], ["report", 2]]
    tpu = record["tpu"]
    assert (tpu["count"], tpu["total_chips"], tpu["total_hosts"], tpu["from_zero"]) == (1, 32, 8, True)
    assert record["tpu_during_download"] is False
    # 32 chips x 145 min = 77.33 chip-hours; x $2.70 on-demand = $208.80
    assert record["chip_hours_before_serving"] == 77.33
    assert [(p["kind"], p["usd"]) for p in record["prices"]] == [("onDemand", 208.8)]


def test_single_host_vllm_downloads_on_its_tpu_node_and_jetstream_converts_before_its_nodes_come():
    dev = record_of("dev")
    assert dev["tpu_during_download"] is True and not dev["tpu"]["from_zero"]
    assert [p["kind"] for p in dev["prices"]] == ["spot", "onDemand"] and dev["prices"][0]["usd"] is None
    jetstream = record_of("jetstream-gemma")
    assert jetstream["tpu_during_download"] is False and jetstream["tpu"]["from_zero"]
    assert [w["tpu_billed"] for w in jetstream["waits"]] == [False, True, False]
    saxml = record_of("saxml")  # fixed pools: billed through the servers' start and the publisher
    assert [w["tpu_billed"] for w in saxml["waits"]] == [True, True, False] and saxml["tpu"]["total_chips"] == 64


def test_the_405b_prose_agrees_with_the_computation():
    """docs/first-deploy.md's vllm-405b section states the budgets in words too: each must be the plan's."""
    body = DOC.split("\n## vllm-405b\n", 1)[1].split("\n## ", 1)[0]
    record = record_of("vllm-405b")
    waits = {w["resource"]: w for w in record["waits"]}
    note = record["notes"][0]
    weights_gb = re.search(r"weights ([\d.]+) GB", note).group(1)
    load = int(re.search(r"in about (\d+)m", note).group(1))
    assert f"{weights_gb} GB at an assumed 100 MB/s (136m)" in body
    assert f"({waits['vllm-rayservice']['minutes']} minutes, in the table above)" in body
    assert f"about {download_plan.download_minutes(int(float(weights_gb) * 1e9)) / 60:.1f} hours" in body
    assert f"about {load} minutes at an assumed {download_plan.READ_BYTES_PER_S // 2**20} MiB/s per host" in body
    assert f"up to {NODE_PROVISIONING_MINUTES} minutes" in body
    start = waits["vllm-rayservice"]["parts"][-1]
    assert f"`startupMinutes: {start[1]}`" in body and start[0] == "start"
    assert load == math.ceil(float(weights_gb) * 1e9 / download_plan.READ_BYTES_PER_S / 60)


def test_the_docs_table_is_the_plans():
    """Regenerate with `venv/bin/python scripts/before_up_doc.py` when this fails."""
    records = {stack: before_up(shipped(stack)) for stack in before_up_doc.stacks()}
    assert before_up_doc.replace_section(DOC, before_up_doc.table(records)) == DOC


def _plan(*argv: str) -> int:
    parser = argparse.ArgumentParser()
    plan.add_arguments(parser)
    return plan.run(parser.parse_args(list(argv)))


def test_plan_prints_the_block_and_writes_it_in_the_json(tmp_path):
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        code = _plan("--stack", "vllm-405b", "--cwd", str(ROOT), "--placeholder-secrets", "--json", str(tmp_path / "p.json"))  # fmt: skip
    assert code == 0
    text = out.getvalue()
    document = json.loads((tmp_path / "p.json").read_text())
    (record,) = document["before_up"]
    assert record == json.loads(json.dumps(record_of("vllm-405b")))
    block = before_up_lines(record)
    assert "\n".join(block) in text
    assert block[0] == "Before you run up (vllm, budgets, so at most):"
    assert block[1].startswith("  waits in turn: vllm-weights-download 163m (CPU node 15 + image 10 + download 136")
    assert block[1].endswith("vllm-smoke-test 22m = 330m after the cluster")
    assert "none during the download" in block[2] and "32 chips on 8 hosts" in block[2]
    assert block[3].startswith("  TPU before serving: 32 chips x 145m = 77.33 chip-hours: $208.80 on-demand")
    assert len(block) <= 7


def test_several_stacks_get_one_before_up_line_each(capsys):
    assert _plan("--stack", "dev", "--stack", "raytrain", "--cwd", str(ROOT), "--placeholder-secrets") == 0
    lines = [line for line in capsys.readouterr().out.splitlines() if line.startswith("  before up:")]
    assert lines == [
        "  before up: waits up to 87m; TPU before serving 1.08 chip-hours ($2.92 on-demand)",  # 1 x 65 / 60
        "  before up: waits up to 50m; TPU before training 13.33 chip-hours ($36.00 on-demand)",  # 16 x 50 / 60
    ]


@pytest.fixture(scope="module")
def project(tmp_path_factory):
    directory = tmp_path_factory.mktemp("project")
    for name in ("Pulumi.yaml", "__main__.py"):
        shutil.copy(ROOT / name, directory / name)
    shutil.copytree(ROOT / "stacks", directory / "stacks", ignore=shutil.ignore_patterns("__pycache__"))
    return directory


def test_a_stack_with_an_slo_shows_the_traffic_models_choice(project):
    document = yaml.safe_load((ROOT / "Pulumi.vllm.yaml").read_text())
    section = document["config"]["tpu-stacks:vllm"]
    for key in ("maxNumSeqs", "autoscaling"):
        section.pop(key)
    section["replicas"] = {"min": 1}
    section["slo"] = {"outputTokensPerSecond": 4000, "ntpotMs": 50, "ttftMs": 2000}
    (project / "Pulumi.slo-vllm.yaml").write_text(yaml.safe_dump(document))
    capture = run_program(project, "slo-vllm", preview=False)
    assert capture.ok, capture.error
    (record,) = before_up(capture)
    slo = record["slo"]
    (deployment,) = [r for r in capture.of_type("kubernetes:apps/v1:Deployment") if r.name == "vllm-deployment"]
    notes = deployment.inputs["metadata"]["annotations"]
    # the figures the stack's annotations carry (the traffic model's prediction), not another computation
    assert str(slo["replicas"]) == notes["tpu-stacks.dev/slo-replicas"]
    assert (
        f"{slo['replica_output_tokens_per_second']:.2f}".rstrip("0").rstrip(".")
        == notes["tpu-stacks.dev/slo-replica-output-tokens-per-second"]
    )
    assert slo["ttft_ms"] is not None and slo["ntpot_ms"] is not None and slo["usd_per_hour"] is not None
    # a replica is 8 v6e chips at $2.70: $21.60/h each
    assert slo["usd_per_hour"] == round(21.6 * slo["replicas"], 4)
    line = before_up_lines(record)[-1]
    assert line.startswith(f"  slo ({slo['basis']}): {slo['replicas']} x v6e 2x4 carry ")
    assert "NTPOT" in line and "TTFT" in line and "TTFT p99" in line and "/M output tokens" in line
