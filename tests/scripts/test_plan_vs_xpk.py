"""benchmarks/plan_vs_xpk.py: found or skipped in one line, ratios taken pair by pair (it times nothing here)."""

from pathlib import Path

from benchmarks.plan_vs_xpk import XPK_VERSION, Run, find_xpk, main, paired_ratio, table, xpk_version


def _fake_xpk(tmp_path: Path, version: str = XPK_VERSION) -> str:
    script = tmp_path / "xpk"
    script.write_text(f"#!/bin/sh\necho '[XPK] xpk_version: {version}'\n")
    script.chmod(0o755)
    return str(script)


def test_without_xpk_the_comparison_is_skipped_with_how_to_install_it(monkeypatch, tmp_path, capsys):
    monkeypatch.delenv("XPK", raising=False)
    monkeypatch.setenv("PATH", str(tmp_path))  # no xpk on it
    assert main([]) == 0
    (line,) = capsys.readouterr().out.splitlines()
    assert line.startswith("side by side with xpk: skipped, no xpk found")
    assert f"pip install xpk=={XPK_VERSION}" in line


def test_xpk_is_found_by_flag_then_environment_then_path(monkeypatch, tmp_path):
    fake = _fake_xpk(tmp_path)
    monkeypatch.delenv("XPK", raising=False)
    monkeypatch.setenv("PATH", str(tmp_path))
    assert find_xpk(None) == fake
    monkeypatch.setenv("XPK", "/nonexistent/xpk")
    assert find_xpk(None) is None  # a named xpk that is not there is not replaced by another
    assert find_xpk(fake) == fake
    assert xpk_version(fake) == XPK_VERSION


def test_ratios_are_medians_of_each_rounds_ratio_not_ratios_of_medians():
    plan = [Run(2.0, 2.0, 0), Run(3.0, 3.0, 0), Run(10.0, 5.0, 0)]
    xpk = [Run(1.0, 1.0, 0), Run(1.0, 1.0, 0), Run(10.0, 5.0, 0)]
    assert paired_ratio(plan, xpk, "wall") == 2.0  # rounds: 2x, 3x, 1x; the medians' ratio would say 3x
    lines = table({"xpk": xpk, "plan": plan}, "xpk")
    assert lines[1].split()[1:] == ["1.00", "1.00", "1.00x", "1.00x", "0"]
    assert lines[2].split()[1:] == ["3.00", "3.00", "2.00x", "2.00x", "0"]
