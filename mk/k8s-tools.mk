# Kubernetes test tools and CRD generation (included by the root Makefile).
#
# The Kubernetes suites (test/k8s/) need a real kube-apiserver + etcd, kubectl and helm. Release
# binaries cannot be downloaded here, so they are built from Go modules pinned by the wrapper
# modules under test/k8s/tools/ (kube: k8s.io/kubernetes v1.36.3 + etcd v3.6.8; helm: v3.22.0).
# Binaries land in .tools/k8s/bin (git-ignored); Go's own build and module caches stay at their
# defaults, so a second `make test-tools` does nothing and a rebuild after a version bump is quick.

K8S_TOOLS_BIN := $(TOOLS_DIR)/k8s/bin
K8S_KUBE_MOD := test/k8s/tools/kube
K8S_HELM_MOD := test/k8s/tools/helm
K8S_VERSION := v1.36.3

# Go from PATH, else the usual install location.
GO ?= $(or $(shell command -v go 2>/dev/null),$(wildcard /usr/local/go/bin/go))
# GOTOOLCHAIN=local: never download another Go; -mod=mod: the wrapper's go.sum is the pin.
# CGO_ENABLED=0: static binaries, no C toolchain needed.
K8S_GO_ENV := GOTOOLCHAIN=local GOFLAGS="-mod=mod -buildvcs=false" CGO_ENABLED=0
# Without these the binaries report v0.0.0-master; the API server would still fall back to its
# built-in 1.36 compatibility version, but /version and `kubectl version` should read normally.
K8S_VERSION_LDFLAGS := -s -w \
	-X k8s.io/component-base/version.gitVersion=$(K8S_VERSION) \
	-X k8s.io/component-base/version.gitMajor=1 \
	-X k8s.io/component-base/version.gitMinor=36 \
	-X k8s.io/client-go/pkg/version.gitVersion=$(K8S_VERSION) \
	-X k8s.io/client-go/pkg/version.gitMajor=1 \
	-X k8s.io/client-go/pkg/version.gitMinor=36

# Helm's release Makefile stamps its version and the Kubernetes version its client-go speaks
# (1.37 for helm v3.22.0); unstamped, `helm template` assumes Kubernetes 1.20.
HELM_VERSION := v3.22.0
HELM_LDFLAGS := -s -w \
	-X helm.sh/helm/v3/internal/version.version=$(HELM_VERSION) \
	-X helm.sh/helm/v3/pkg/lint/rules.k8sVersionMajor=1 \
	-X helm.sh/helm/v3/pkg/lint/rules.k8sVersionMinor=37 \
	-X helm.sh/helm/v3/pkg/chartutil.k8sVersionMajor=1 \
	-X helm.sh/helm/v3/pkg/chartutil.k8sVersionMinor=37

K8S_TOOLS := $(K8S_TOOLS_BIN)/kube-apiserver $(K8S_TOOLS_BIN)/etcd $(K8S_TOOLS_BIN)/kubectl $(K8S_TOOLS_BIN)/helm

.PHONY: k8s-tools crds e2e-kind

k8s-tools: $(K8S_TOOLS)

ifeq ($(GO),)
# Without Go the suites in test/k8s skip with a message (and fail under CI=true).
test-tools::
	@echo "warning: Go not found: kube-apiserver, etcd, kubectl and helm not built (test/k8s suites skip)"
else
test-tools:: $(K8S_TOOLS)
endif

$(K8S_TOOLS_BIN)/kube-apiserver: $(K8S_KUBE_MOD)/go.mod $(K8S_KUBE_MOD)/go.sum
	cd $(K8S_KUBE_MOD) && $(K8S_GO_ENV) $(GO) build -trimpath -ldflags '$(K8S_VERSION_LDFLAGS)' -o $@ k8s.io/kubernetes/cmd/kube-apiserver
	@touch $@  # go skips writing an up-to-date binary; make needs the newer mtime

$(K8S_TOOLS_BIN)/kubectl: $(K8S_KUBE_MOD)/go.mod $(K8S_KUBE_MOD)/go.sum
	cd $(K8S_KUBE_MOD) && $(K8S_GO_ENV) $(GO) build -trimpath -ldflags '$(K8S_VERSION_LDFLAGS)' -o $@ k8s.io/kubernetes/cmd/kubectl
	@touch $@  # go skips writing an up-to-date binary; make needs the newer mtime

# etcd's server module is a `package main` at its root; the version is the one k8s.io/apiserver
# v0.36.3 requires, so server and client speak the same protocol revision.
$(K8S_TOOLS_BIN)/etcd: $(K8S_KUBE_MOD)/go.mod $(K8S_KUBE_MOD)/go.sum
	cd $(K8S_KUBE_MOD) && $(K8S_GO_ENV) $(GO) build -trimpath -ldflags '-s -w' -o $@ go.etcd.io/etcd/server/v3
	@touch $@  # go skips writing an up-to-date binary; make needs the newer mtime

$(K8S_TOOLS_BIN)/helm: $(K8S_HELM_MOD)/go.mod $(K8S_HELM_MOD)/go.sum
	cd $(K8S_HELM_MOD) && $(K8S_GO_ENV) GOBIN=$(K8S_TOOLS_BIN) $(GO) install -trimpath -ldflags '$(HELM_LDFLAGS)' helm.sh/helm/v3/cmd/helm
	@touch $@  # go skips writing an up-to-date binary; make needs the newer mtime

# One schema source (crds/src) generates crds/generated/*.yaml and the chart's copies.
crds: $(DEPS_STAMP) $(NODE_STAMP)
	node crds/scripts/generate.ts

# ---------------------------------------------------------------------------------------------
# e2e-kind: a full install on a local kind cluster (needs Docker and kind on PATH; not run in CI).
# Creates the cluster, builds and loads the image, installs the chart (its own random secrets, the
# bundled PostgreSQL and Redis), applies examples/k8s, runs `helm test` and calls the gateway's
# /v1/health through a port-forward.
KIND_CLUSTER ?= gatehouse-e2e
E2E_NAMESPACE ?= gatehouse
E2E_IMAGE_REPOSITORY ?= gatehouse
E2E_IMAGE_TAG ?= e2e
E2E_KUBECTL ?= $(if $(wildcard $(K8S_TOOLS_BIN)/kubectl),$(K8S_TOOLS_BIN)/kubectl,kubectl)
E2E_HELM ?= $(if $(wildcard $(K8S_TOOLS_BIN)/helm),$(K8S_TOOLS_BIN)/helm,helm)
E2E_LOCAL_PORT ?= 18787
E2E_CONTEXT := kind-$(KIND_CLUSTER)

e2e-kind:
	@command -v docker >/dev/null || { echo "e2e-kind needs docker"; exit 1; }
	@command -v kind >/dev/null || { echo "e2e-kind needs kind (https://kind.sigs.k8s.io)"; exit 1; }
	kind get clusters | grep -qx '$(KIND_CLUSTER)' || kind create cluster --name '$(KIND_CLUSTER)' --wait 120s
	docker build -t '$(E2E_IMAGE_REPOSITORY):$(E2E_IMAGE_TAG)' .
	kind load docker-image '$(E2E_IMAGE_REPOSITORY):$(E2E_IMAGE_TAG)' --name '$(KIND_CLUSTER)'
	$(E2E_HELM) upgrade --install gatehouse charts/gatehouse --kube-context '$(E2E_CONTEXT)' \
		--namespace '$(E2E_NAMESPACE)' --create-namespace --wait --timeout 5m \
		--set image.repository='$(E2E_IMAGE_REPOSITORY)' --set image.tag='$(E2E_IMAGE_TAG)' \
		--set image.pullPolicy=Never
	$(E2E_KUBECTL) --context '$(E2E_CONTEXT)' wait --for=condition=Established --timeout=60s \
		$(patsubst crds/generated/gatehouse.dev_%.yaml,crd/%.gatehouse.dev,$(wildcard crds/generated/*.yaml))
	$(E2E_KUBECTL) --context '$(E2E_CONTEXT)' -n '$(E2E_NAMESPACE)' apply --server-side -f examples/k8s/
	$(E2E_KUBECTL) --context '$(E2E_CONTEXT)' -n '$(E2E_NAMESPACE)' get gatehouse
	$(E2E_HELM) test gatehouse --kube-context '$(E2E_CONTEXT)' --namespace '$(E2E_NAMESPACE)' --logs
	@set -e; \
	$(E2E_KUBECTL) --context '$(E2E_CONTEXT)' -n '$(E2E_NAMESPACE)' port-forward svc/gatehouse-gateway $(E2E_LOCAL_PORT):80 >/dev/null 2>&1 & \
	pf=$$!; trap 'kill $$pf' EXIT; \
	for i in $$(seq 1 30); do curl -fsS http://127.0.0.1:$(E2E_LOCAL_PORT)/v1/health && echo && exit 0; sleep 1; done; \
	echo "gateway did not answer /v1/health"; exit 1
