"""What the CLI prints stands alone too: `tpu-stacks size` for every catalogue model, `tpu-stacks plan` of
every shipped stack (console, plan JSON, manifests) and its error messages cite nothing outside the
repository and no key that resolves nowhere; `size` prints the address of every key it shows.

The rules are tests/test_sources.py's (`problems`); the corpus of wrong inputs holds every refusal to
them as well (tests/bad_input/harness.py, `check_refused`).
"""

from __future__ import annotations

import contextlib
import io
import json
import os
import subprocess
import sys
from pathlib import Path

import pulumi_kubernetes.rbac.v1
import pytest

from tests.shipped import SHIPPED, shipped
from tests.test_sources import problems
from tpu_stacks import sources
from tpu_stacks.catalog.models import MODELS
from tpu_stacks.catalog.tpu import GENERATIONS
from tpu_stacks.cli import sdk_bytecode
from tpu_stacks.cli.main import main
from tpu_stacks_preview.report import plan_document
from tpu_stacks_preview.schema import SchemaReport

ROOT = Path(__file__).resolve().parents[2]
PLAN = str(Path(sys.executable).parent / "tpu-stacks")


def size(*argv: str) -> tuple[int, str]:
    stdout, stderr = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(stdout), contextlib.redirect_stderr(stderr):
        code = main(["size", *argv])
    return code, stdout.getvalue() + stderr.getvalue()


def strings(value) -> list[str]:
    """Every string a JSON document holds, keys included."""
    if isinstance(value, dict):
        return [s for k, v in value.items() for s in (k, *strings(v))]
    if isinstance(value, list):
        return [s for item in value for s in strings(item)]
    return [value] if isinstance(value, str) else []


@pytest.mark.parametrize("model", MODELS, ids=lambda m: m.name)
def test_size_of_every_catalogue_model_cites_only_what_it_resolves(model):
    name = model.hf_id or model.aliases[0]
    cited = set()
    for generation in GENERATIONS:
        for workload in ("serve", "train"):
            argv = (name, "--tpu", generation.name, "--workload", workload)
            code, text = size(*argv)
            assert code in (0, 2), text
            assert problems("tpu-stacks size", text) == []
            shown = {key for key in sources.keys_in(text) if key in sources.BY_KEY}
            for key in shown:  # the text table's footer gives each key's address
                assert f"[{key}] {sources.BY_KEY[key].title}: {sources.BY_KEY[key].url}" in text, (argv, key)
            code, text = size(*argv, "--json")
            assert problems("tpu-stacks size --json", text) == []
            if code == 0:
                document = json.loads(text)
                keys = {key for s in strings(document) for key in sources.keys_in(s) if key in sources.BY_KEY}
                assert document["sources"] == {key: sources.BY_KEY[key].url for key in document["sources"]}
                assert set(document["sources"]) == keys
            cited |= shown
    assert cited, "no key shown: the test would hold nothing"


def test_the_footer_names_each_source_once_and_skips_labels():
    text = "price ([NEO]), KV cache ([SB] inference.md), again [NEO]; inferred [I]"
    assert sources.footnotes(text) == [
        f"[NEO] {sources.BY_KEY['NEO'].title}: {sources.BY_KEY['NEO'].url}",
        f"[SB] {sources.BY_KEY['SB'].title}: {sources.BY_KEY['SB'].url}",
    ]
    assert list(sources.addresses(text)) == ["NEO", "SB"]


@pytest.mark.parametrize(
    "argv",
    [
        ("acme/unknown", "--tpu", "v6e"),
        ("llama3-8b", "--tpu", "v9"),
        ("--params", "10T", "--tpu", "v5e"),
        ("llama3-8b", "--tpu", "v6e", "--params", "7B"),
    ],
)
def test_size_errors_stand_alone(argv):
    code, text = size(*argv)
    assert code == 2 and text.startswith("tpu-stacks: ")
    assert problems("tpu-stacks size", text) == []


def test_plan_of_every_shipped_stack_stands_alone(tmp_path, request):
    """Also: the console script loads the provider SDKs with their annotations unevaluated (cli/sdk_bytecode.py);
    each stack's objects and first-`up` record are the same as this process plans them, the SDKs imported the
    ordinary way. Its cache is pytest's (kept between runs; written here whatever PYTHONDONTWRITEBYTECODE says)."""
    cache = request.config.cache.mkdir("tpu-stacks-cache")
    inputs = Path(pulumi_kubernetes.rbac.v1.__file__).with_name("_inputs.py")  # small (60 KB): compiled again at once
    entry = sdk_bytecode.entry_path(Path(cache) / "sdk-bytecode", str(inputs))
    entry.unlink(missing_ok=True)  # written again below only if the console script loads the SDKs the deferred way
    environment = {k: v for k, v in os.environ.items() if k not in ("PYTHONDONTWRITEBYTECODE", sdk_bytecode.SWITCH)}
    result = subprocess.run(
        [PLAN, "plan", "--cwd", str(ROOT), "--all", "--policy-pack", str(ROOT / "policies"), "--placeholder-secrets"]
        + ["--json", str(tmp_path / "plan-{stack}.json"), "--manifests", str(tmp_path / "manifests-{stack}")],
        capture_output=True,
        text=True,
        timeout=600,
        env={**environment, "TPU_STACKS_CACHE": str(cache)},
    )
    assert result.returncode == 0, result.stderr[-2000:]
    assert entry.is_file()  # the deferred way ran
    for stack in SHIPPED:
        planned = json.loads((tmp_path / f"plan-{stack}.json").read_text())
        here = json.loads(json.dumps(plan_document(shipped(stack), shipped(stack), SchemaReport(), None)))
        assert planned["resources"] == here["resources"], stack
        assert planned["before_up"] == here["before_up"], stack
    assert problems("tpu-stacks plan", result.stdout + result.stderr) == []
    documents = sorted(tmp_path.glob("plan-*.json"))
    assert len(documents) >= 10
    for document in documents:  # JSON escapes (a section sign as \u00a7): check the strings it holds
        found = [p for s in strings(json.loads(document.read_text())) for p in problems(document.name, s)]
        assert found == [], found[:5]
    manifests = [p for p in tmp_path.glob("manifests-*/**/*") if p.is_file()]
    assert manifests
    for manifest in manifests:
        assert problems(manifest.name, manifest.read_text()) == []
