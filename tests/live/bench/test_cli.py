"""`tpu-stacks bench` as a user meets it: bad input is one line and exit 2; `--dry-run` prints the objects; a run
(against fake Kubernetes APIs that answer with the captured inference-perf log) creates the three objects, reads the
Job's log, deletes everything and writes the profile `size --profiles` reads."""

from __future__ import annotations

import contextlib
import json
import subprocess
from pathlib import Path
from types import SimpleNamespace

import pytest
import yaml

from tests.cli_run import tpu_stacks
from tests.live.support import ROOT
from tpu_stacks.errors import UserError
from tpu_stacks.traffic import read_profiles
from tpu_stacks_live.bench import cli
from tpu_stacks_live.bench.cli import parse_rates
from tpu_stacks_live.bench.run import Apis, BenchFailed, Run

FIXTURE = Path(__file__).parent / "fixtures" / "inference-perf-0.7.0-standin.log"


def _bench(*args: str) -> subprocess.CompletedProcess:
    """`tpu-stacks bench ARGS` from the repository, through the command's `main` in this process (tests/cli_run.py):
    the plan it reads is the shared one (tests/live/conftest.py)."""
    with contextlib.chdir(ROOT):
        return tpu_stacks("bench", *args)


@pytest.mark.parametrize(
    ("rates", "said"),
    [
        ("1,x", "--rates: '1,x' has 'x', not a number; give requests per second separated by commas"),
        ("0,2", "--rates: '0,2' has 0, not a rate above 0 and at most 1000"),
        ("2,nan", "--rates: '2,nan' has nan, not a rate above 0"),
        ("-1", "--rates: '-1' has -1, not a rate above 0"),
    ],
)
def test_bad_rates_are_one_line(rates, said):
    with pytest.raises(UserError) as caught:
        parse_rates(rates)
    assert str(caught.value).startswith(said)


def test_rates_keep_their_order_each_once():
    assert parse_rates("1, 2,2,8,4.5") == (1.0, 2.0, 8.0, 4.5)


def test_bad_input_on_the_command_line_is_one_line_and_exit_2_before_any_plan():
    for args, said in [
        (["--stack", "dev", "--rates", "fast"], "tpu-stacks: --rates: 'fast' has 'fast', not a number"),
        (["--stack", "dev", "--duration", "0"], "tpu-stacks: --duration: '0' is not a whole number above 0"),
        (["--rates", "1"], "tpu-stacks: --stack is required; name the stack"),
    ]:
        done = _bench(*args)
        assert (done.returncode, done.stdout) == (2, ""), done.stderr
        assert done.stderr.startswith(said) and done.stderr.count("\n") == 1, done.stderr


def test_an_unknown_stack_and_a_stack_with_no_server_are_one_line_each():
    done = _bench("--stack", "vllm-gatway", "--dry-run")
    assert done.returncode == 2 and done.stderr.count("\n") == 1
    assert "did you mean 'vllm-gateway'?" in done.stderr and "Traceback" not in done.stderr
    done = _bench("--stack", "raytrain", "--dry-run")
    assert done.returncode == 2 and done.stderr.count("\n") == 1
    assert "'raytrain' has no server to bench" in done.stderr


def test_dry_run_prints_the_three_objects():
    done = _bench("--stack", "dev", "--dry-run", "--rates", "1,3")
    assert done.returncode == 0, done.stderr
    kinds = [(o["kind"], o["metadata"]["namespace"]) for o in yaml.safe_load_all(done.stdout)]
    assert kinds == [("NetworkPolicy", "vllm"), ("ConfigMap", "vllm"), ("Job", "vllm")]


class _Fake:
    """The three API groups' methods a run calls, recording them; the Job completes and its pod logs `log`."""

    def __init__(self, log: str, condition: str = "Complete") -> None:
        self.calls: list[tuple] = []
        self.log, self.condition = log, condition

    def __getattr__(self, name: str):
        def call(*args, **kwargs):
            self.calls.append((name, args[:2], kwargs))
            if name == "read_namespaced_job_status":
                return {"status": {"conditions": [{"type": self.condition, "status": "True", "message": "done"}]}}
            if name == "list_namespaced_pod":
                return {"items": [{"metadata": {"name": "bench-dev-abc-pod"}}]}
            if name == "read_namespaced_pod_log":
                return self.log
            return None

        return call


def _run(fake: _Fake, tmp_path: Path, *extra: str) -> int:
    args = SimpleNamespace(
        stack="dev",
        cwd=str(ROOT),
        rates="2,8",
        duration="10",
        input_tokens="64",
        output_tokens="32",
        out=str(tmp_path / "bench-dev.json"),
        kubeconfig=None,
        context=None,
        dry_run=False,
        from_log=None,
        keep=False,
    )
    for item in extra:
        key, _, value = item.partition("=")
        setattr(args, key, value)
    apis = Apis(fake, fake, fake)
    original = cli.live_apis
    cli.live_apis = lambda kubeconfig, context: apis
    try:
        return cli.run(args)
    finally:
        cli.live_apis = original


def test_a_run_creates_waits_reads_the_log_deletes_and_writes_the_profile(tmp_path, capsys):
    fake = _Fake(FIXTURE.read_text())
    assert _run(fake, tmp_path) == 0
    names = [name for name, _, _ in fake.calls]
    assert names[:3] == ["create_namespaced_network_policy", "create_namespaced_config_map", "create_namespaced_job"]
    assert names[-3:] == [
        "delete_namespaced_job",
        "delete_namespaced_config_map",
        "delete_namespaced_network_policy",
    ]
    assert fake.calls[-3][2] == {"propagation_policy": "Background"}  # the Job's pod goes with it
    (profile,) = read_profiles(tmp_path / "bench-dev.json")
    assert profile.model == "Qwen/Qwen2.5-1.5B-Instruct" and profile.tpu_topology == "1x1"
    assert profile.instance_type == "ct6e-standard-1t" and len(profile.points) == 2
    out = capsys.readouterr().out
    assert "2 req/s: 63 output tok/s" in out and f"wrote {tmp_path / 'bench-dev.json'}" in out


def test_a_failed_job_is_exit_1_and_still_cleaned_up(tmp_path, capsys):
    fake = _Fake("Traceback ...\nTimeoutError: Loading tokenizer did not finish", condition="Failed")
    assert _run(fake, tmp_path) == 1
    err = capsys.readouterr().err
    assert "failed: done; log: Traceback ... | TimeoutError: Loading tokenizer did not finish" in err
    assert [name for name, _, _ in fake.calls][-3:][0] == "delete_namespaced_job"
    assert not (tmp_path / "bench-dev.json").exists()


def test_a_job_that_never_finishes_is_given_up_on_after_its_deadline():
    fake = _Fake("", condition="Running")
    job = {"metadata": {"name": "j", "namespace": "n", "labels": {"tpu-stacks.dev/bench-run": "r"}}}
    now = iter(range(0, 10_000, 100))
    run = Run(Apis(fake, fake, fake), [], clock=lambda: next(now), sleep=lambda s: None)
    with pytest.raises(BenchFailed, match="did not finish within 500 s"):
        run.wait(job, 500)


def test_from_log_converts_without_a_cluster(tmp_path):
    out = tmp_path / "p.json"
    done = _bench("--stack", "dev", "--from-log", str(FIXTURE), "--out", str(out))
    assert done.returncode == 0, done.stderr
    document = json.loads(out.read_text())
    assert [s["queriesPerSecond"] > 0 for s in document["profile"][0]["performanceStats"]] == [True, True]


def test_bench_is_a_tpu_stacks_command_with_help():
    from tpu_stacks.cli import main

    assert main.commands()["bench"] is cli
    assert "bench" in main.HELP and "bench" in main.PROVIDED_BY
    args = main.build_parser().parse_args(["bench", "--stack", "dev", "--rates", "1,2"])
    assert (args.stack, args.rates, args.dry_run) == ("dev", "1,2", False)


def test_a_refused_log_read_is_one_line_exit_1_and_still_cleaned_up(tmp_path, capsys):
    """RBAC without pods/log (a 403 while the Job ran) was a traceback; it is BenchFailed's line now."""

    class Forbidden(Exception):
        status, reason, body = 403, "Forbidden", '{"message": "pods \\"x\\" is forbidden: cannot get pods/log"}'

    class NoLog(_Fake):
        def __getattr__(self, name: str):
            if name == "read_namespaced_pod_log":

                def refuse(*args, **kwargs):
                    raise Forbidden()

                return refuse
            return super().__getattr__(name)

    fake = NoLog("")
    assert _run(fake, tmp_path) == 1
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "could not read the log of bench-dev-abc-pod" in err and "Traceback" not in err
    assert [name for name, _, _ in fake.calls][-3:][0] == "delete_namespaced_job"


def test_a_from_log_that_is_not_utf8_is_one_line_naming_the_flag(tmp_path, capsys, monkeypatch):
    """A log saved in another encoding (or a binary file) was a UnicodeDecodeError traceback. The path is relative:
    a long one is shortened in the message, and pytest's temporary paths are long."""
    monkeypatch.chdir(tmp_path)
    log = Path("job.log")
    log.write_bytes(b"=== START_STAGE_0 ===\n\xff\xfe not utf-8\n")
    assert _run(_Fake(""), tmp_path, f"from_log={log}") == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "Traceback" not in err, err
    assert err.startswith(f"tpu-stacks: --from-log: '{log}' is not UTF-8 text (byte 22 is 0xff); give the Job's log")


@pytest.mark.parametrize(
    ("out", "problem"),
    [
        ("file/p.json", "cannot be written (a file stands where one of its folders would be)"),
        ("folder", "is a folder, not a file"),
    ],
)
def test_an_unwritable_out_is_one_line_before_the_job_runs(tmp_path, capsys, monkeypatch, out, problem):
    """An --out that could not be written was an OSError traceback, after the whole sweep had run."""
    monkeypatch.chdir(tmp_path)  # short relative paths: the line shows the value whole
    (tmp_path / "file").write_text("")
    (tmp_path / "folder").mkdir()
    fake = _Fake(FIXTURE.read_text())
    assert _run(fake, tmp_path, f"out={out}") == 2
    err = capsys.readouterr().err
    assert (
        err == f"tpu-stacks: --out: '{out}' {problem}; give --out a file path in a folder you can write, e.g."
        " --out profiles/bench.json\n"
    )
    assert fake.calls == []  # refused before anything was created in the cluster


def test_an_out_that_becomes_unwritable_after_the_run_is_one_line(tmp_path, capsys, monkeypatch):
    """The check before the run cannot see a disk that fills during it: the write's own error is one line too."""
    monkeypatch.chdir(tmp_path)
    fake = _Fake(FIXTURE.read_text())

    def full(self, *args, **kwargs):
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(Path, "write_text", full)
    assert _run(fake, tmp_path, "out=p.json") == 2
    err = capsys.readouterr().err
    assert err.startswith("tpu-stacks: --out: 'p.json' cannot be written (No space left on device); give --out")
    assert err.count("\n") == 1


def test_a_default_out_names_the_path_it_stood_for(tmp_path):
    """Without --out the profile goes to <cwd>/profiles/bench-<stack>.json; a refusal names that path."""
    (tmp_path / "profiles").write_text("")  # a file where the folder would be
    default = tmp_path / "profiles" / "bench-dev.json"
    with pytest.raises(UserError) as caught:
        cli._check_writable(None, default)
    assert (caught.value.key, caught.value.value) == ("--out", str(default))


def test_the_check_before_the_run_leaves_no_file_behind(tmp_path):
    out = tmp_path / "new" / "p.json"
    cli._check_writable(str(out), out)
    assert not out.exists()
    kept = tmp_path / "old.json"
    kept.write_text("earlier profile")
    cli._check_writable(str(kept), kept)
    assert kept.read_text() == "earlier profile"
