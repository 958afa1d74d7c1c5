# Two commands on a fresh machine:  make demo  (harness -> warehouse -> dashboard)
#                                    make test  (the whole test suite)
# While changing code:               make test-fast  (no model, server, browser or slow test)
PYTHON ?= python3
VENV   ?= .venv
PY     := $(VENV)/bin/python
STAMP  := $(VENV)/.installed
export HF_HUB_OFFLINE := 1
export TRANSFORMERS_OFFLINE := 1
export TOKENIZERS_PARALLELISM := false

.PHONY: venv test bench demo clean

venv: $(STAMP)

# torch is installed first and pinned, so no other package can pull a CUDA build.
# The project itself is installed in editable mode, so `python -m harness` works anywhere.
$(STAMP): requirements.txt requirements-eval.txt requirements-test.txt pyproject.toml
	test -x $(PY) || $(PYTHON) -m venv $(VENV)
	$(PY) -m pip install -q --upgrade pip
	$(PY) -m pip install -q torch==2.13.0
	$(PY) -m pip install -q -r requirements.txt -r requirements-eval.txt -r requirements-test.txt
	$(PY) -m pip install -q --no-deps -e .
	touch $(STAMP)

test: $(STAMP)
	$(PY) -m pytest -q $(PYTEST_ARGS)

# Every test but those that load a model, start a server, drive a browser or are slow
# (pytest.ini lists the markers), one worker per core (TEST_FAST_WORKERS=1 for one process):
# about 2 min 20 s on two cores.  `make test` runs them all, in one process.
TEST_FAST_WORKERS ?= auto
.PHONY: test-fast
test-fast: $(STAMP)
	$(PY) -m pytest -q -n $(TEST_FAST_WORKERS) \
	  -m "not model and not service and not browser and not slow" $(PYTEST_ARGS)

# Lint, types and import contracts, all pinned in requirements-test.txt: ruff over the
# repository, mypy strict on harness.core and harness.claims (pyproject.toml lists the files),
# and the layers and boundaries declared in pyproject.toml ([tool.importlinter]).  All always
# run; the target fails when any finds anything.  CI (.ci/run) runs it before `make test`.
.PHONY: check
check: $(STAMP)
	status=0; \
	$(PY) -m ruff check . || status=1; \
	$(PY) -m mypy || status=1; \
	PYTHONPATH=$(CURDIR) $(VENV)/bin/lint-imports --no-cache || status=1; \
	exit $$status

# The official trec_eval (tools/trec-eval/fetch.sh) is the baseline of `harness score`'s row
# when it has been fetched and TREC_EVAL does not name another binary.
TREC_EVAL_FETCHED := tools/trec-eval/bin/trec_eval
bench: $(STAMP)
	TREC_EVAL="$${TREC_EVAL:-$$(test -x $(TREC_EVAL_FETCHED) && echo $(CURDIR)/$(TREC_EVAL_FETCHED))}" \
	  $(PY) -m benchmarks $(BENCH_ARGS)

# The official trec_eval binary for the reference tests and `make bench`.
.PHONY: trec-eval
trec-eval:
	tools/trec-eval/fetch.sh

demo: $(STAMP)
	$(PY) -m harness demo $(DEMO_ARGS)

clean:
	rm -rf $(VENV) .pytest_cache

# A real single-node OpenSearch 2.19 (assembled from Maven Central by tools/opensearch-node/build.sh)
# in the foreground on 127.0.0.1: prints its URL, Ctrl-C stops it.  OPENSEARCH_ARGS="-Ehttp.port=9250"
.PHONY: opensearch
opensearch:
	tools/opensearch-node/run.sh $(OPENSEARCH_ARGS)

# Team mode under load (docs/team.md): 50 submitters x 20 runs through a local S3 API
# (moto's server), the ingester, 20 readers of the publishable snapshot.
.PHONY: bench-team
bench-team: $(STAMP)
	$(PY) -m benchmarks --only bench_team $(BENCH_ARGS)

# A team on one laptop (docs/team.md): a local S3 API, signed and unsigned runs submitted from
# several processes, the ingester, dashboards on the publishable and internal snapshots, and a
# local OIDC provider with a team-mode dashboard (it prints how to log in, internal or external).
# Ports are free ones unless given: TEAM_DEMO_ARGS="--port N --s3-port N --oidc-port N
# --publishable-port N --internal-port N" (a taken one: exit 2); --no-serve stops after publishing.
.PHONY: team-demo
team-demo: $(STAMP)
	$(PY) tools/team_demo.py $(TEAM_DEMO_ARGS)
