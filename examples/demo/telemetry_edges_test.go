// Copyright The otelretry Authors
// SPDX-License-Identifier: Apache-2.0

package main

import (
	"net/url"
	"strings"
	"testing"
)

// Port 65535 is a TCP port (dialablePort: "1 to 65535").
func TestTheHighestPortIsTaken(t *testing.T) {
	for _, grpc := range []bool{false, true} {
		if p := otlpEndpointProblem("http://127.0.0.1:65535", grpc, false); p != "" {
			t.Errorf("grpc=%v: port 65535 refused: %s", grpc, p)
		}
	}
	if p := otlpEndpointProblem("http://127.0.0.1:65536", false, false); p == "" {
		t.Error("port 65536 taken")
	}
}

// An empty shared variable is no endpoint: a signal's unparsable one goes
// to the default, not to "the shared one".
func TestAnEmptySharedEndpointIsNoneToFallBackTo(t *testing.T) {
	t.Setenv("OTEL_EXPORTER_OTLP_ENDPOINT", "")
	if got := endpointInstead("TRACES", "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT"); !strings.Contains(got, "default") {
		t.Fatalf("endpointInstead = %q; want its default", got)
	}
}

// The trace exporter trims the blanks around the shared endpoint, so one
// written with blanks is where it falls back to.
func TestABlankPaddedSharedEndpointIsTrimmedForTraces(t *testing.T) {
	t.Setenv("OTEL_EXPORTER_OTLP_ENDPOINT", " http://127.0.0.1:4318 ")
	if got := endpointInstead("TRACES", "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT"); !strings.Contains(got, "OTEL_EXPORTER_OTLP_ENDPOINT") {
		t.Fatalf("endpointInstead = %q; want the shared endpoint", got)
	}
}

// unix-abstract is a scheme grpc-go resolves; its name has no port.
func TestAUnixAbstractTargetIsTaken(t *testing.T) {
	const target = "unix-abstract:/otel/collector"
	u, err := url.Parse(target)
	if err != nil {
		t.Fatal(err)
	}
	if p := grpcTargetProblem(u); p != "" {
		t.Errorf("grpcTargetProblem(%q) = %q; want none", target, p)
	}
	if p := endpointPort(u, target, true); p != "" {
		t.Errorf("endpointPort(%q) = %q; want none", target, p)
	}
}
