"""`tpu-stacks verify` as a user runs it: --help, --list, a PASS and a FAIL run on the synthetic answers, one-line
errors for bad input, and --probe handing the plan's objects to tpu_stacks_live.probe."""

from __future__ import annotations

import sys
import types

import pytest

from tests.live.support import FIXTURES, ROOT
from tpu_stacks.cli.main import main
from tpu_stacks_live.verdict import CheckResult, Verdict
from tpu_stacks_live.verify.checks import registry


def verify(*args: str) -> int:
    return main(["verify", "--cwd", str(ROOT), *args])


def test_help_names_the_options(capsys):
    with pytest.raises(SystemExit) as done:
        main(["verify", "--help"])
    out = capsys.readouterr().out
    assert done.value.code == 0
    assert all(flag in out for flag in ("--stack", "--only", "--list", "--kubeconfig", "--fixtures", "--probe"))


def test_list_names_every_check(capsys):
    assert verify("--list") == 0
    listed = [line.split()[0] for line in capsys.readouterr().out.splitlines()]
    assert listed == list(registry())


def test_a_passing_run_exits_0(capsys):
    assert verify("--stack", "vllm-gateway", "--fixtures", str(FIXTURES / "vllm-gateway-pass.json")) == 0
    out = capsys.readouterr().out
    assert "PASS    gateway-picker-health-check" in out
    assert "vllm-gateway: 12 passed, 0 failed, 0 unknown (recorded synthetic answers)" in out


def test_a_failing_run_exits_1_with_the_change_to_make(capsys):
    assert verify("--stack", "vllm-gateway", "--fixtures", str(FIXTURES / "vllm-gateway-fail.json")) == 1
    line = next(x for x in capsys.readouterr().out.splitlines() if "gateway-picker-health-check" in x)
    assert line.startswith("FAIL") and "not 9003 ->" in line


def test_only_runs_one_check(capsys):
    assert (
        verify("--stack", "raytrain", "--only", "drift-none", "--fixtures", str(FIXTURES / "raytrain-pass.json")) == 0
    )
    assert capsys.readouterr().out.splitlines()[0].startswith("PASS    drift-none")


def test_only_a_check_that_does_not_apply_says_so(capsys):
    args = ("--stack", "raytrain", "--only", "hpa-metrics-read", "--fixtures", str(FIXTURES / "raytrain-pass.json"))
    assert verify(*args) == 0
    assert "does not apply to stack raytrain" in capsys.readouterr().out


@pytest.mark.parametrize(
    "args, expected",
    [
        (
            ("--stack", "dev", "--only", "smoke-tst"),
            "--only: 'smoke-tst' is not a verify check; did you mean 'smoke-test'?",
        ),
        (("--stack", "vlm-gateway"), "did you mean 'vllm-gateway'?"),
        ((), "--stack: '(unset)' is required"),
        (("--stack", "raytrain", "--fixtures", "/nonexistent.json"), "--fixtures: '/nonexistent.json' cannot be read"),
    ],
)
def test_bad_input_is_one_line_and_exit_2(capsys, args, expected):
    assert verify(*args) == 2
    err = capsys.readouterr().err
    assert expected in err and err.count("\n") == 1, err


def test_no_kubeconfig_is_one_line(capsys, monkeypatch, tmp_path):
    monkeypatch.setenv("KUBECONFIG", str(tmp_path / "missing"))
    monkeypatch.setenv("HOME", str(tmp_path))
    assert verify("--stack", "raytrain", "--only", "drift-none") == 2
    err = capsys.readouterr().err
    assert err.startswith("tpu-stacks: --kubeconfig:") and "pulumi stack output kubeconfig" in err
    assert err.count("\n") == 1


def test_probe_hands_the_plans_objects_to_the_probe_package(capsys, monkeypatch):
    seen = {}

    def probe_checks(objects, api_client):
        seen["kinds"] = {o["kind"] for o in objects}
        seen["api_client"] = api_client
        return [CheckResult("ipblock-admits-no-node", Verdict.FAIL, "a node reached the server", "make it port-only")]

    monkeypatch.setitem(sys.modules, "tpu_stacks_live.probe", types.SimpleNamespace(probe_checks=probe_checks))
    args = ("--stack", "raytrain", "--probe", "--fixtures", str(FIXTURES / "raytrain-pass.json"))
    assert verify(*args) == 1
    assert {"RayJob", "RayCluster"} <= seen["kinds"] and seen["api_client"] is None
    assert "FAIL    ipblock-admits-no-node: a node reached the server -> make it port-only" in capsys.readouterr().out
