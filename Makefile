# The two set-up commands of the README. Both create .venv on first use and reinstall only when pyproject.toml changes.
PYTHON ?= python3
VENV   := .venv
BIN    := $(VENV)/bin
# The embedded default model; `make demo DEMO_MODEL=llamacpp:qwen2.5-coder-0.5b` for the fast tier.
DEMO_MODEL ?= llamacpp:qwen2.5-coder-1.5b
DEMO_TASK  ?= microwave salmon
export CMAKE_BUILD_PARALLEL_LEVEL ?= 2
# llama.cpp's AMX kernels, which -march=native turns on where the CPU has AMX, crash llama_decode (segfault,
# llama-cpp-python 0.3.36, seen on this project's Xeon machines): the CPU backend is built without them. Set
# CMAKE_ARGS yourself to build otherwise. pip reuses a wheel it cached from an earlier build whatever these flags
# say; for such an AMX build, situated.llm.llamacpp_buffers keeps the weights out of the AMX buffers at run time.
ifeq ($(shell uname -m),x86_64)
NO_AMX := -mno-amx-tile -mno-amx-int8 -mno-amx-bf16
export CMAKE_ARGS ?= -DCMAKE_C_FLAGS="$(NO_AMX)" -DCMAKE_CXX_FLAGS="$(NO_AMX)"
endif

.PHONY: demo test lint clean

$(BIN)/python:
	$(PYTHON) -m venv $(VENV)
	$(BIN)/pip install --quiet --upgrade pip wheel setuptools

.stamp-demo: pyproject.toml | $(BIN)/python
	$(BIN)/pip install --quiet -e '.[llm,model-1_5b,retrieval]'
	touch $@

.stamp-test: pyproject.toml | $(BIN)/python
	$(BIN)/pip install --quiet -e '.[test]'
	# VirtualHome's own executor, used only by tests and benchmarks to check our simulator against it.
	$(BIN)/pip install --quiet --no-deps eai-eval==1.0.5
	# EAI's 1.0.4 evaluator (the published table's), in its own venv in the user cache: both versions install
	# the package virtualhome_eval, so they cannot share .venv.
	sh benchmarks/eai_setup_104.sh
	touch $@

demo: .stamp-demo
	$(BIN)/situated plan "$(DEMO_TASK)" --scene examples/scenes/apartment.json --tasks examples/tasks/apartment_tasks.json --model $(DEMO_MODEL)

test: .stamp-test
	$(BIN)/ruff check src tests benchmarks
	$(BIN)/lint-imports
	$(BIN)/pytest

lint: .stamp-test
	$(BIN)/ruff check src tests benchmarks
	$(BIN)/lint-imports

clean:
	rm -rf $(VENV) .stamp-demo .stamp-test .pytest_cache .ruff_cache
