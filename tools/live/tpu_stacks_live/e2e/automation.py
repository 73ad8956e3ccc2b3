"""The only code of `e2e` that reaches outside this process: the Automation API stack and `tpu-stacks verify`.

The stack is the project's own program on disk, as `pulumi up` in the project directory would run it: Automation
API's "local program" form, `create_or_select_stack(stack_name, work_dir=...)` (pulumi/automation/
_local_workspace.py line 950 of the pinned SDK 3.272.0: "For local programs, the work_dir keyword argument must be
provided"; it selects the stack, creating it when the backend has none, as CI's `pulumi stack select --create`
does). Building its LocalWorkspace runs `pulumi version` first (PulumiCommand.__init__, _cmd.py line 56 and the
`subprocess.check_output([self.command, "version"])` below it), so a missing CLI fails here, before anything is
created.

`verify` runs as `<this Python> -m tpu_stacks.cli.main verify --stack S` in the project directory: the same
interpreter and installed packages as this command, whatever PATH says.
"""

from __future__ import annotations

import subprocess
import sys
import tempfile
from pathlib import Path
from typing import TextIO

from tpu_stacks_live.e2e.runner import StackOps, StepFailed

PULUMI_DOWNLOAD = "https://www.pulumi.com/docs/iac/download-install/"


def open_stack(stack_name: str, project_dir: Path) -> StackOps:
    """The Automation API stack of the program in `project_dir` (Pulumi.yaml), selected or created."""
    from pulumi import automation  # the SDK: loaded only for a real run

    try:
        return automation.create_or_select_stack(stack_name, work_dir=str(project_dir))
    except FileNotFoundError as error:  # `pulumi version` could not start (_cmd.py, PulumiCommand.__init__)
        raise StepFailed(f"the Pulumi CLI is not on PATH ({error.filename}); install it: {PULUMI_DOWNLOAD}") from error


def verify_command(stack_name: str, kubeconfig: str | None = None) -> list[str]:
    command = [sys.executable, "-m", "tpu_stacks.cli.main", "verify", "--stack", stack_name]
    return [*command, "--kubeconfig", kubeconfig] if kubeconfig else command


def verify_line(lines: list[str], code: int) -> str:
    """The line that says why verify did not pass: its first FAIL check (verdict.CheckResult.line), else its own
    one-line error, else its exit code."""
    for line in lines:
        if line.startswith("FAIL"):
            return line.strip()
    own = [line.strip() for line in lines if line.startswith("tpu-stacks:")]
    return own[-1] if own else f"tpu-stacks verify exited {code}"


def run_verify(
    stack_name: str, project_dir: Path, kubeconfig: str | None = None, out: TextIO = sys.stdout
) -> tuple[int, str]:
    """Run verify against `kubeconfig` (the text of up's output, written to a file only this user can read and
    removed afterwards), echoing its output line by line as it comes; its exit code and, when not 0, its one line."""
    if kubeconfig is None:
        return _run_verify(verify_command(stack_name), project_dir, out)
    with tempfile.TemporaryDirectory(prefix="tpu-stacks-e2e-") as folder:
        path = Path(folder) / "kubeconfig"
        path.touch(mode=0o600)
        path.write_text(kubeconfig)
        return _run_verify(verify_command(stack_name, str(path)), project_dir, out)


def _run_verify(command: list[str], project_dir: Path, out: TextIO) -> tuple[int, str]:
    lines: list[str] = []
    with subprocess.Popen(
        command,
        cwd=project_dir,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
    ) as process:
        assert process.stdout is not None
        for line in process.stdout:
            print(line.rstrip("\n"), file=out, flush=True)
            lines.append(line.rstrip("\n"))
        code = process.wait()
    return code, "" if code == 0 else verify_line(lines, code)
