"""Check the upstream ledger (components/tpu_stacks/catalog/upstream_ledger.toml and each workload folder's
upstream.toml) against the pinned upstreams.

Why: a row says "this upstream, at the version we pin, does X at file:line, where the text is L". A pin that moves,
or a row typed wrong, must fail somewhere a person sees it. For each `wheel` pin this script downloads the pinned
wheel (`pip download --no-deps`, into `.upstream-cache/`, reused when it is there), reads it as the zip archive it
is (never installing it), and checks every row: the file exists at `path`, line `line` (1-based) is `literal` once
leading and trailing whitespace is stripped, and the row's `value` is what its literal says (`Row.value_problem`).
`source` rows are read the same way from a local git clone (`--source NAME=GIT_DIR`, `git show <tag>:<path>`);
without one they are listed as read by hand on their date. `documented` rows are counted: a cluster check settles
them (docs/verify-on-a-cluster.md).

One line per failing row, `row ID: pin NAME VERSION path:line: expected ..., found ...`, and exit status 1 on any.

    python scripts/upstream_check.py                              # every wheel row at its pin (`make upstream`)
    python scripts/upstream_check.py --version ray=2.61.0          # the ray rows against a release before the pin moves
    python scripts/upstream_check.py --rows ray.serve.http-port    # some rows only
    python scripts/upstream_check.py --source kuberay=/path/to/kuberay/.git   # KubeRay's rows from a clone
"""

from __future__ import annotations

import argparse
import hashlib
import subprocess
import sys
import zipfile
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

from tpu_stacks.catalog.upstream import Ledger, Pin, Row, ledger_files, parse_files

ROOT = Path(__file__).resolve().parents[1]
CACHE = ROOT / ".upstream-cache"

Reader = Callable[[str], "str | None"]
"""A pinned tree: the text of a file by its path in the tree, None when the tree has no such file."""


class CheckError(Exception):
    """A pin that could not be read at all (the download failed, no such tag): the run stops, exit status 2."""


@dataclass(frozen=True)
class Outcome:
    row: Row
    pin: Pin
    version: str
    problem: str | None
    """None: the row holds."""

    def line(self) -> str:
        return f"row {self.row.id}: pin {self.pin.name} {self.version} {self.row.path}:{self.row.line}: {self.problem}"


def directory_reader(root: Path) -> Reader:
    def read(path: str) -> str | None:
        file = root / path
        return file.read_text(encoding="utf-8", errors="replace") if file.is_file() else None

    return read


def git_reader(git_dir: Path, ref: str) -> Reader:
    """Files at `ref` of a clone (bare or not), through `git show`, which needs no work tree."""
    probe = subprocess.run(
        ["git", "-C", str(git_dir), "rev-parse", "--verify", "--quiet", f"{ref}^{{commit}}"],
        capture_output=True,
        text=True,
    )
    if probe.returncode != 0:
        raise CheckError(f"{git_dir} has no commit {ref!r} (fetch the tag, or give --version NAME=REF)")

    def read(path: str) -> str | None:
        shown = subprocess.run(
            ["git", "-C", str(git_dir), "show", f"{ref}:{path}"], capture_output=True, text=True, errors="replace"
        )
        return shown.stdout if shown.returncode == 0 else None

    return read


def cache_folder(cache: Path, pin: Pin, version: str) -> Path:
    """One folder per distribution, version and download arguments (two pins of one release share it)."""
    extra = ""
    if pin.download_args:
        extra = "-" + hashlib.sha256("\0".join(pin.download_args).encode()).hexdigest()[:8]
    return cache / f"{pin.package}-{version}{extra}"


def download(pin: Pin, version: str, folder: Path) -> Path:
    """The pinned wheel in `folder`, downloaded once: a wheel already there is used as it is."""
    wheels = sorted(folder.glob("*.whl"))
    if not wheels:
        folder.mkdir(parents=True, exist_ok=True)
        # Wheels only: a wheel is what is installed, and some sdists do not even build their metadata here
        # (vllm-tpu 0.29.0's says 0.29.0+cpu).
        binary = [] if "--only-binary=:all:" in pin.download_args else ["--only-binary=:all:"]
        command = [sys.executable, "-m", "pip", "download", "--no-deps", f"{pin.package}=={version}"]
        command += [*pin.download_args, *binary, "-d", str(folder)]
        print(f"downloading {pin.package}=={version} ({' '.join(pin.download_args) or 'this platform'})", flush=True)
        done = subprocess.run(command, capture_output=True, text=True)
        wheels = sorted(folder.glob("*.whl"))
        if done.returncode != 0 or not wheels:
            tail = "\n".join((done.stderr or done.stdout).strip().splitlines()[-5:])
            raise CheckError(f"pip download {pin.package}=={version} failed:\n{tail}")
    if len(wheels) != 1:
        raise CheckError(f"{folder} holds {len(wheels)} wheels; remove the folder and run again")
    return wheels[0]


def wheel_reader(pin: Pin, version: str, cache: Path) -> Reader:
    """The pinned wheel's files, read out of the archive (zipfile): nothing is installed, and nothing is extracted to
    disk (a ray wheel unpacks to half a gigabyte; the rows need a few dozen files)."""
    wheel = download(pin, version, cache_folder(cache, pin, version))
    try:
        archive = zipfile.ZipFile(wheel)
    except zipfile.BadZipFile as error:
        raise CheckError(f"{wheel} is not a wheel ({error}); remove it and run again") from error
    names = set(archive.namelist())

    def read(path: str) -> str | None:
        return archive.read(path).decode("utf-8", errors="replace") if path in names else None

    return read


def check_row(row: Row, pin: Pin, version: str, read: Reader) -> Outcome:
    """One row against its pinned tree: the file, the line's text, then the value."""
    assert row.path is not None and row.line is not None and row.literal is not None  # wheel and source rows
    expected = row.literal.strip()
    content = read(row.path)
    if content is None:
        return Outcome(row, pin, version, f"expected {expected!r}, found no such file")
    lines = content.splitlines()
    found = lines[row.line - 1].strip() if row.line <= len(lines) else None
    if found != expected:
        elsewhere = [number for number, text in enumerate(lines, 1) if text.strip() == expected]
        where = f" (the literal is at line {', '.join(map(str, elsewhere))})" if elsewhere else ""
        seen = repr(found) if found is not None else f"the end of the file (it has {len(lines)} lines)"
        return Outcome(row, pin, version, f"expected {expected!r}, found {seen}{where}")
    return Outcome(row, pin, version, row.value_problem())


def _assignments(values: Sequence[str], option: str, ledger: Ledger) -> dict[str, str]:
    pairs: dict[str, str] = {}
    for value in values:
        name, sep, setting = value.partition("=")
        if not sep or not setting:
            raise SystemExit(f"{option} {value!r}: give NAME=VALUE")
        if name not in ledger.pins:
            raise SystemExit(f"{option} {value!r}: the ledger has no pin {name!r} (one of {', '.join(ledger.pins)})")
        pairs[name] = setting
    return pairs


def run(
    ledger: Ledger,
    *,
    cache: Path = CACHE,
    versions: dict[str, str] | None = None,
    rows: Sequence[str] = (),
    sources: dict[str, Path] | None = None,
    offline: Path | None = None,
    out: Callable[[str], None] = print,
) -> int:
    """Check the rows (all, or `rows`); 0 when every checked row holds, 1 when one does not."""
    versions, sources = versions or {}, sources or {}
    unknown = sorted(set(rows) - {row.id for row in ledger.rows})
    if unknown:
        raise SystemExit(f"--rows: the ledger has no row {', '.join(unknown)}")
    chosen = [row for row in ledger.rows if not rows or row.id in rows]
    failures = checked = by_hand = documented = 0
    for name, pin in ledger.pins.items():
        own = [row for row in chosen if row.pin == name]
        if not own:
            continue
        if pin.kind == "documented":
            documented += len(own)
            continue
        version = versions.get(name) or pin.pinned
        if pin.kind == "source" and name not in sources:
            for row in own:
                out(f"row {row.id}: pin {name} {version} {row.path}:{row.line}: read by hand on {row.read}")
            by_hand += len(own)
            continue
        if pin.kind == "source":
            read = git_reader(sources[name], version)
        elif offline is not None:
            read = directory_reader(offline / name)
        else:
            read = wheel_reader(pin, version, cache)
        outcomes = [check_row(row, pin, version, read) for row in own]
        bad = [outcome for outcome in outcomes if outcome.problem is not None]
        for outcome in bad:
            out(outcome.line())
        out(f"pin {name} {version}: {len(outcomes) - len(bad)} of {len(outcomes)} rows hold")
        failures += len(bad)
        checked += len(outcomes)
    out(
        f"{checked} rows checked, {failures} failed; {by_hand} source rows read by hand (--source NAME=GIT_DIR checks "
        f"them); {documented} documented rows (a cluster check settles them)"
    )
    return 1 if failures else 0


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n", 1)[0])
    parser.add_argument(
        "--ledger",
        type=Path,
        help="one ledger file (default: the package's, with every workload folder's upstream.toml)",
    )
    parser.add_argument("--cache", type=Path, default=CACHE, help="where wheels are downloaded and unpacked")
    parser.add_argument(
        "--version", action="append", default=[], metavar="NAME=VERSION", help="check a pin's rows at another version"
    )
    parser.add_argument("--rows", nargs="+", default=[], metavar="ID", help="check these rows only")
    parser.add_argument(
        "--source", action="append", default=[], metavar="NAME=GIT_DIR", help="read a source pin from a clone"
    )
    parser.add_argument(
        "--offline", type=Path, metavar="DIR", help="wheel pins from DIR/<pin>/ (unpacked), no download"
    )
    args = parser.parse_args(argv)
    ledger = parse_files([args.ledger] if args.ledger else ledger_files())
    sources = {name: Path(path) for name, path in _assignments(args.source, "--source", ledger).items()}
    for name in sources:
        if ledger.pins[name].kind != "source":
            raise SystemExit(f"--source {name}: pin {name} is a {ledger.pins[name].kind} pin, not a source pin")
    try:
        return run(
            ledger,
            cache=args.cache,
            versions=_assignments(args.version, "--version", ledger),
            rows=args.rows,
            sources=sources,
            offline=args.offline,
        )
    except CheckError as error:
        print(f"upstream_check: {error}", file=sys.stderr)
        return 2


if __name__ == "__main__":
    sys.exit(main())
