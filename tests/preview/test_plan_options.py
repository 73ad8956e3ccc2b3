"""The plan document gives every resource its options as the engine receives them: what decides a
second `up`'s diff (ignoreChanges, replaceOnChanges), how long the first one waits (customTimeouts),
what `destroy` keeps (retainOnDelete, protect) and the order (dependsOn, dependencies)."""

from pathlib import Path

from tpu_stacks_preview.engine import run_program

from .conftest import FIXTURES

OPTIONS = FIXTURES / "options"


def _by_name(stack_dir: Path) -> dict[str, dict]:
    capture = run_program(stack_dir, "dev", preview=False)
    assert capture.error is None, capture.error
    return {r.name: {"urn": r.urn, **r.options_document()} for r in capture.sorted_resources()}


def test_every_option_is_reported_as_set():
    resources = _by_name(OPTIONS)
    data, first, reader = resources["data"], resources["first"], resources["reader"]
    assert (data["retainOnDelete"], data["protect"], data["ignoreChanges"]) == (True, True, ["labels"])
    assert reader["customTimeouts"] == {"create": "45m", "delete": "5m"}
    assert reader["deleteBeforeReplace"] is True and reader["replaceOnChanges"] == ["role"]
    assert reader["dependsOn"] == [first["urn"]]  # the explicit dependency only
    assert set(reader["dependencies"]) == {first["urn"], data["urn"]}  # explicit and from the bucket input


def test_defaults_are_reported_too():
    first = _by_name(OPTIONS)["first"]
    assert first["retainOnDelete"] is False and first["protect"] is False
    assert first["customTimeouts"] == {} and first["ignoreChanges"] == [] and first["deleteBeforeReplace"] is None
