// Copyright The otelretry Authors
// SPDX-License-Identifier: Apache-2.0

// Package realclients drives real third-party HTTP clients through
// otelretry.NewTransport and checks, for each, the span tree, the outcome
// and the number of requests the server actually received (counted at the
// server, or at a counting reverse proxy on 127.0.0.1 in front of a real
// server):
//
//   - go-resty (v2) against a loopback server: a GET answered 503, 503, 200
//     and a POST that times out;
//   - golang.org/x/oauth2: a token that expires between attempts, under
//     oauth2.Transport and with docs/layers.md's recipe (oauth2recipe.go),
//     and a token request marked repeatable;
//   - go-retryablehttp (v0.7) stacked over otelretry: how the two layers'
//     attempts multiply, the retry.operation.repeat marker on the outer
//     layer's repeats, the outer-layer-resend finding of cmd/retryinspect on
//     the exported trace, and the outer-layer settings that stop the
//     multiplication;
//   - the Prometheus Go API client (read-only query POSTs) against the real
//     Prometheus of scripts/stack.sh, without and with
//     otelretry.Intent{Repeatable: true};
//   - the OTLP/HTTP trace exporter (otlptracehttp.WithHTTPClient) into the
//     real Collector of scripts/stack.sh.
//
// It is a module of its own so that these clients never reach the
// library's go.mod. The tests against the stack run only when
// OTELRETRY_E2E=1 and the stack's endpoints are set (scripts/e2e.sh does
// both); they skip otherwise:
//
//	OTELRETRY_E2E=1            run the tests against the stack
//	OTELRETRY_PROMETHEUS_URL   Prometheus (http://127.0.0.1:19090)
//	OTELRETRY_OTLP_ENDPOINT    the Collector's OTLP/HTTP endpoint (http://127.0.0.1:14318)
//
// testdata/ holds traces captured from these tests (see testdata/README.md),
// for cmd/retryinspect's own tests to reuse.
package realclients
