# `make demo` and `make test` do all set-up on a fresh machine, then run.
PY ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed
# wait for another apt (a helper, unattended upgrades) rather than fail on its lock
APT := apt-get -o DPkg::Lock::Timeout=600

.PHONY: demo test test-deep test-durations lint bench java clean record record-deps systems fuzz kernel

# a C compiler and Python's headers let the install compile the simulator's kernel
# (model/kernel.py, mypyc); without them it runs as Python, with the same traces. ccache
# keeps the compiled C (14 of the install's 38 CPU seconds), so that the next clone or
# venv with the same kernel source compiles nothing (the clone's folder and the build
# folder are not part of the key: CCACHE_BASEDIR, CCACHE_NOHASHDIR)
KERNEL_CC = CC="$$(command -v ccache >/dev/null && echo 'ccache ')$$($(BIN)/python -c \
  'import sysconfig; print(sysconfig.get_config_var("CC"))')" CCACHE_BASEDIR=$(CURDIR) \
  CCACHE_NOHASHDIR=1
$(STAMP): pyproject.toml
	@command -v cc >/dev/null 2>&1 || ($(APT) update -q && $(APT) install -y -q gcc) || true
	@command -v ccache >/dev/null 2>&1 || ($(APT) update -q && $(APT) install -y -q ccache) || true
	@$(PY) -c "import os, sysconfig; raise SystemExit(not os.path.exists(os.path.join(sysconfig.get_paths()['include'], 'Python.h')))" || \
	  ($(APT) update -q && $(APT) install -y -q python3-dev) || true
	$(PY) -m venv $(VENV)
	$(BIN)/pip install -q --upgrade pip 'tomli>=1.1; python_version < "3.11"'
	@# pyproject.toml's build requirements (mypyc for the kernel) into the venv first, so that
	@# tomkit's editable build uses them rather than fetching them again into an isolated
	@# one; and no byte-compiling of the 10,000 installed files (32 s of CPU): a module is
	@# compiled when first imported (docs/testing.md)
	$(BIN)/python -c "import sys; t = __import__('tomllib' if sys.version_info >= (3, 11) \
	  else 'tomli'); print('\n'.join(t.load(open('pyproject.toml', 'rb'))['build-system'] \
	  ['requires']))" > $(VENV)/build-requires.txt
	$(BIN)/pip install -q --no-compile -r $(VENV)/build-requires.txt
	$(KERNEL_CC) $(BIN)/pip install -q --no-compile --no-build-isolation -e '.[all,dev]'
	touch $(STAMP)

# Spark and TLC need Java 17, counterexample pictures need Graphviz's dot, the HTML
# report's test a real headless browser (Chromium);
# install Debian's packages where they are missing.
java:
	@command -v java >/dev/null 2>&1 && java -version 2>&1 | grep -q 'version "17' || \
	  ($(APT) update -q && $(APT) install -y -q openjdk-17-jre-headless)
	@command -v dot >/dev/null 2>&1 || \
	  ($(APT) update -q && $(APT) install -y -q graphviz)
	@command -v chromium >/dev/null 2>&1 || \
	  ($(APT) update -q && $(APT) install -y -q chromium)

demo: $(STAMP) java
	$(BIN)/python -m tomkit.demo --out out/demo --seed 1

# the suite on pytest-xdist workers, two more than the cores: much of a 2-core run is
# spent waiting (JVMs starting, live systems booting, Maelstrom runs lasting their time
# limits), which the extra workers overlap (docs/testing.md, round 6: pytest 640 s on
# three workers, 574 s on four); tests/conftest.py keeps a module on one worker and
# starts the longest modules first (tests/xdist_schedule.py); TEST_WORKERS=0 runs it in
# this process
TEST_WORKERS ?= $(shell echo $$(( $$(nproc 2>/dev/null || echo 1) + 2 )))
# Python's bytecode is kept for the run, in the venv (not beside the sources): with
# PYTHONDONTWRITEBYTECODE set (as on this machine) and an install that compiles nothing,
# every process of the suite (each worker's collection, each `python -m tomkit`, Maelstrom
# node, recorder and Spark worker) compiled every module it imported from source again
PYC := PYTHONDONTWRITEBYTECODE= PYTHONPYCACHEPREFIX=$(abspath $(VENV))/pycache
test: $(STAMP) java systems
	$(PYC) $(BIN)/python -m pytest -q -n $(TEST_WORKERS) --dist loadgroup

# the same suite with ten times the Hypothesis budgets, fresh examples each run
# (tests/budget.py): before a release, or after changing a checker
test-deep: $(STAMP) java systems
	TOMKIT_TEST_DEPTH=10 $(PYC) $(BIN)/python -m pytest -q -n $(TEST_WORKERS) --dist loadgroup

# the same run, rewriting tests/durations.json (each module's seconds, which orders the
# schedule) from what it measured: after adding or changing slow tests
test-durations: $(STAMP) java systems
	$(PYC) $(BIN)/python -m pytest -q -n $(TEST_WORKERS) --dist loadgroup --record-durations

# the simulator's compiled kernel (model/kernel.py) again, after an edit of its modules
# (until then the edited Python file runs)
kernel: $(STAMP)
	$(KERNEL_CC) $(BIN)/pip install -q --no-deps --no-build-isolation -e .

lint: $(STAMP)
	$(BIN)/ruff check .

bench: $(STAMP)
	$(BIN)/python bench/check_bench.py

# The input fuzzer of the readers and the checker (fuzz/inputs.py) for about ten
# minutes; SEED=... repeats a run, failing inputs go to out/fuzz-inputs
FUZZ_SECONDS ?= 600
fuzz: $(STAMP)
	$(BIN)/python -m tomkit.fuzz.inputs --inputs 10000000 --seconds $(FUZZ_SECONDS) \
	  $(if $(SEED),--seed $(SEED),)

# Real systems recorded as traces (tomkit/record/, docs/case-studies.md), each from
# Debian's packages, installed where missing, each member in a network namespace of its
# own (iproute2's ip; tomkit/record/netns.py):
# make record SYSTEM=etcd|corosync|jgroups|zookeeper|nats|rabbitmq
SYSTEM ?= etcd
RECORD_PKGS_etcd := etcd-server etcd-client iproute2
RECORD_BIN_etcd := etcd
RECORD_PKGS_corosync := corosync libcpg-dev iproute2
RECORD_BIN_corosync := corosync
RECORD_PKGS_jgroups := libjgroups-java openjdk-17-jdk-headless iproute2
RECORD_BIN_jgroups := javac
RECORD_PKGS_zookeeper := zookeeper openjdk-17-jre-headless iproute2
RECORD_BIN_zookeeper := /usr/share/java/zookeeper.jar
RECORD_PKGS_nats := nats-server iproute2
RECORD_BIN_nats := nats-server
RECORD_PKGS_rabbitmq := rabbitmq-server iproute2
RECORD_BIN_rabbitmq := rabbitmq-server

record-deps:
	@{ command -v $(RECORD_BIN_$(SYSTEM)) || [ -e $(RECORD_BIN_$(SYSTEM)) ]; } >/dev/null 2>&1 && \
	  command -v ip >/dev/null 2>&1 && \
	  { [ "$(SYSTEM)" != jgroups ] || [ -e /usr/share/java/jgroups.jar ]; } || \
	  ($(APT) update -q && $(APT) install -y -q $(RECORD_PKGS_$(SYSTEM)))

# make test records each system live (tests/record/): install all six where
# possible; a system that cannot be installed is skipped by its tests, with the reason
systems:
	-@for s in etcd corosync jgroups zookeeper nats rabbitmq; do $(MAKE) -s record-deps SYSTEM=$$s; done

record: $(STAMP) record-deps
	timeout 600 $(BIN)/python -m tomkit.record $(SYSTEM) --out out/record $(if $(WATCH),--watch,)

clean:
	rm -rf $(VENV) out build *.egg-info
