# promtool (Prometheus's rule and metrics checker) for the chart's alert and dashboard tests
# (test/k8s/chart-observability.test.ts). Built from Go modules like the other test tools: the
# wrapper module test/tools/promtool pins github.com/prometheus/prometheus; the binary lands next to
# helm in .tools/k8s/bin. Prometheus is a large module: the first build takes minutes, later ones
# hit Go's build cache, and an up-to-date binary is not rebuilt at all (make compares it with the
# wrapper's go.mod/go.sum).

PROMTOOL_MOD := test/tools/promtool
PROMTOOL := $(TOOLS_DIR)/k8s/bin/promtool
PROMTOOL_VERSION := 3.16.0
PROMTOOL_LDFLAGS := -s -w \
	-X github.com/prometheus/common/version.Version=$(PROMTOOL_VERSION) \
	-X github.com/prometheus/common/version.Branch=gatehouse-test-tools

.PHONY: promtool

promtool: $(PROMTOOL)

ifneq ($(GO),)
test-tools:: $(PROMTOOL)
endif

$(PROMTOOL): $(PROMTOOL_MOD)/go.mod $(PROMTOOL_MOD)/go.sum
	@mkdir -p $(dir $@)
	cd $(PROMTOOL_MOD) && GOTOOLCHAIN=local GOFLAGS="-mod=mod -buildvcs=false" CGO_ENABLED=0 GOBIN=$(dir $@) $(GO) install -trimpath -ldflags '$(PROMTOOL_LDFLAGS)' github.com/prometheus/prometheus/cmd/promtool
	@touch $@  # go skips writing an up-to-date binary; make needs the newer mtime
