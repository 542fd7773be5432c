// Copyright The otelretry Authors
// SPDX-License-Identifier: Apache-2.0

package main

import (
	"strings"
	"testing"
)

// The OTLP trace and metric exporters trim the blanks around an endpoint's
// value, and a signal's variable holding only blanks passes to the shared
// one; the log exporters read it as written. The demo read every signal's
// untrimmed, refused " http://127.0.0.1:4318 " where only the log exporter
// would drop it, without saying so, and checked signals whose exporter is
// not otlp (a find left in the note of stop 86).
func TestAnOTLPEndpointIsReadAsItsExporterReadsIt(t *testing.T) {
	padded := "  http://127.0.0.1:4318\t"
	cleanEnv(t, map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": padded, "OTEL_LOGS_EXPORTER": "none"})
	if err := checkOTLPEndpoints(); err != nil {
		t.Errorf("an endpoint with blanks around it, logs off: %v; want it taken, as the trace and metric exporters take it", err)
	}
	if got := otlpEndpoint("TRACES"); got != "http://127.0.0.1:4318" {
		t.Errorf("otlpEndpoint(TRACES) = %q; want the trimmed value the exporter sends to", got)
	}

	cleanEnv(t, map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": padded})
	err := checkOTLPEndpoints()
	if err == nil || !strings.Contains(err.Error(), "log exporter") || !strings.Contains(err.Error(), "blanks") {
		t.Errorf("an endpoint with blanks around it, logs over OTLP: %v; want it refused for the log exporter, which does not trim", err)
	}

	cleanEnv(t, map[string]string{
		"OTEL_EXPORTER_OTLP_TRACES_ENDPOINT": "   ",
		"OTEL_EXPORTER_OTLP_ENDPOINT":        "http://127.0.0.1:99999",
	})
	err = checkOTLPEndpoints()
	if err == nil || !strings.HasPrefix(err.Error(), "OTEL_EXPORTER_OTLP_ENDPOINT ") {
		t.Errorf("a blank traces endpoint beside a bad shared one: %v; want the shared one refused by name, as the exporter uses it", err)
	}

	cleanEnv(t, map[string]string{
		"OTEL_EXPORTER_OTLP_ENDPOINT": "http://127.0.0.1:99999",
		"OTEL_TRACES_EXPORTER":        "console", "OTEL_METRICS_EXPORTER": "none", "OTEL_LOGS_EXPORTER": "none",
	})
	if err := checkOTLPEndpoints(); err != nil {
		t.Errorf("a bad endpoint no exporter uses: %v; want it left alone", err)
	}
}
