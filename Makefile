# The two commands of the README. Both set up venv/ (the virtualenv Pulumi.yaml names) on demand.
PYTHON ?= python3
VENV := venv
BIN := $(VENV)/bin
STACK ?= dev
STAMP := $(VENV)/.installed

# The project's own modules byte-compiled, as pip compiles the SDKs it installs: an editable install leaves them as
# sources, so where PYTHONDONTWRITEBYTECODE is set (CI images, containers) every `tpu-stacks plan` and every test
# worker compiled them all again (about 0.3 s a plan). These are the interpreter's timestamp caches (an edited source
# is recompiled, never run stale), refreshed before each command that imports the project: only what changed since is
# rewritten. `__pycache__/` is git-ignored.
COMPILE = $(BIN)/python -m compileall -q -x '/(venv|\.venv|build)/' $(wildcard components policies tools stacks tests scripts benchmarks)

.PHONY: plan plan-all e2e test test-network format bench clean policy-pack mutation diagrams security args upstream upstream-docs

# PYTHON must be at least components/pyproject.toml's requires-python: scripts/check_python.py refuses an
# older one in one line before venv/ is touched, and clears a venv/ that an older Python or an unfinished
# install left (no stamp), so the next run starts clean.
$(STAMP): requirements.txt components/pyproject.toml tools/preview/pyproject.toml tools/live/pyproject.toml policies/requirements.txt
	@$(PYTHON) scripts/check_python.py --venv $(VENV)
	test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet -r requirements.txt
	$(COMPILE)
	touch $(STAMP)

plan: $(STAMP)
	$(COMPILE)
	$(BIN)/tpu-stacks plan --stack $(STACK) --policy-pack policies --placeholder-secrets --json plan-$(STACK).json --manifests manifests/$(STACK)

# Every shipped stack in one process (shared imports and policy pack): one document per stack.
plan-all: $(STAMP)
	$(COMPILE)
	$(BIN)/tpu-stacks plan --all --policy-pack policies --placeholder-secrets --json plan-{stack}.json --manifests manifests/{stack}

# The stack for real, then gone: up (its smoke-test Job included), `tpu-stacks verify`, a preview that must
# propose no change, destroy; each step timed, the TPU chip-hours spent (at most), the first failure's one line.
# Needs the Pulumi CLI, a login and Google credentials (docs/ci.md). E2E_ARGS passes options, e.g. --keep.
E2E_ARGS ?=
e2e: $(STAMP)
	$(BIN)/tpu-stacks e2e --stack $(STACK) $(E2E_ARGS)

# docs/diagrams/<stack>.md, each stack's resource graph from its offline plan (tests/preview/test_diagram_docs.py
# fails when a plan change left them stale: run this and commit the result).
diagrams: $(STAMP)
	$(BIN)/tpu-stacks plan --all --placeholder-secrets --diagram docs/diagrams/{stack}.md > /dev/null

# Every component's args.py (the TypedDicts the plugin schema is inferred from), written from its spec.py
# (tests/scripts/test_gen_args.py fails when a spec changed and this was not run).
args: $(STAMP)
	$(BIN)/python scripts/gen_args.py

# The policy pack as a directory that leaves the checkout (its own venv, tpu-stacks as a wheel inside):
# `cd dist/policy-pack && pulumi policy publish <org>` (docs/policies.md).
policy-pack: $(STAMP)
	$(BIN)/python scripts/build_policy_pack.py --out dist/policy-pack

# pytest rewrites each test module's asserts and keeps the result in __pycache__ (a pyc of its own, checked against
# the source), but not where PYTHONDONTWRITEBYTECODE is set (CI images, containers): there every run, and each xdist
# worker within it, rewrote all the test modules again (about half of a worker's collection: docs/testing.md). The
# test targets let it write that cache, as COMPILE writes the modules'; `test-network` then reads what `test` wrote.
# Likewise the console script's cache of the provider SDKs compiled with their annotations unevaluated
# (components/tpu_stacks/cli/sdk_bytecode.py, ~/.cache/tpu-stacks): without it every plan evaluates them all.
test test-network plan plan-all diagrams bench: export PYTHONDONTWRITEBYTECODE :=

# The offline suite on every core (pytest-xdist; -n auto is one worker per CPU): each worker plans a shipped
# stack at most once per mode (tests/shipped.py). The tests marked `network` (pytest.ini: they fill a fresh
# virtualenv from PyPI) are `test-network`'s; the two selections are the whole of tests/ (tests/test_quick_loop.py).
# docs/testing.md: timings and the slowest tests.
test: $(STAMP)
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .
	$(COMPILE)
	$(BIN)/python -m pytest -q -n auto -m "not network" tests

# The rest of tests/: the tests that install from PyPI into a fresh virtualenv (the built policy pack, the
# example project, the plugin directory, the SDK recipe) and network-config-analyzer's connectivity checks
# (its own venv, made on first use). CI runs it after `test`.
test-network: $(STAMP)
	$(COMPILE)
	$(BIN)/python -m pytest -q -n auto -m network tests

# The upstream ledger (components/tpu_stacks/catalog/upstream_ledger.toml) against the pinned upstreams: every
# pinned wheel downloaded from PyPI into .upstream-cache/ (reused; never installed) and each row's file, line,
# literal and value checked (scripts/upstream_check.py), then the tests that need those wheels (tests_upstream/,
# not part of `test`, which stays offline). CI runs it after `test`. UPSTREAM_ARGS passes options, e.g.
# `make upstream UPSTREAM_ARGS="--source kuberay=../kuberay"` to check KubeRay's rows against a clone.
UPSTREAM_ARGS ?=
upstream: $(STAMP)
	$(BIN)/python scripts/upstream_check.py $(UPSTREAM_ARGS)
	$(BIN)/python -m pytest -q tests_upstream

# docs/upstream.md, the ledger as a page (tests/scripts/test_upstream_docs.py fails when it is stale).
upstream-docs: $(STAMP)
	$(BIN)/python scripts/upstream_docs.py

# Mutation testing of the decision layer (sizing, catalogue, the pack's fit and matching checks, each
# workload's plan): minutes, so not part of `test`; run it before a change to those modules lands.
# One line per module `MODULE: killed/total = N%`, then the survivors (scripts/mutation.py).
mutation: $(STAMP)
	$(BIN)/python scripts/mutation.py $(MODULES)

bench: $(STAMP)
	$(COMPILE)
	$(BIN)/python benchmarks/plan_stacks.py
	$(BIN)/python benchmarks/plan_scaling.py
	$(BIN)/python benchmarks/load_stack_files.py
	$(BIN)/python benchmarks/plan_vs_xpk.py

clean:
	rm -rf $(VENV) manifests plan-*.json .pytest_cache dist .upstream-cache

format: $(STAMP)
	$(BIN)/ruff format .
	$(BIN)/ruff check --fix .

# checkov's Kubernetes checks on the four tutorial stacks' manifests (docs/security.md explains each
# remaining finding). checkov is not a dependency: CHECKOV names an install of 3.3.30 of your own, e.g.
# `python3 -m venv /tmp/checkov && /tmp/checkov/bin/pip install checkov==3.3.30`. Not part of `test`.
CHECKOV ?= checkov
security: $(STAMP)
	$(BIN)/python scripts/security_scan.py --checkov $(CHECKOV) --max 60
