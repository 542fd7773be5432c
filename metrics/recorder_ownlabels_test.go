// Copyright The otelretry Authors
// SPDX-License-Identifier: Apache-2.0

package metrics_test

import (
	"context"
	"testing"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"

	"github.com/otelretry/otelretry-go/attrs"
	"github.com/otelretry/otelretry-go/metrics"
)

// The Recorder's own labels win over a Labels built without NewLabels
// (attribute.NewSet): the method stays in its closed set, whatever the
// caller's set says. The caller's method won (BREW where _OTHER is the
// bound; a reviewer's find), and with it any string a caller put there.
func TestTheRecordersOwnLabelsWinOverTheCallers(t *testing.T) {
	rec, reader := newRecorder(t)
	rec.RecordOperation(context.Background(), metrics.Operation{Method: "BREW", Outcome: attrs.OutcomeReturn, Attempts: 1,
		Labels: attribute.NewSet(attrs.HTTPRequestMethodKey.String("BREW"), attrs.OutcomeKey.String("whatever"))})
	sum := collect(t, reader)["retry.operations"].Data.(metricdata.Sum[int64])
	if len(sum.DataPoints) != 1 {
		t.Fatalf("%d series; want 1", len(sum.DataPoints))
	}
	dp := sum.DataPoints[0]
	if v, _ := dp.Attributes.Value(attrs.HTTPRequestMethodKey); v.AsString() != attrs.MethodOther {
		t.Errorf("http.request.method = %q, want %s", v.AsString(), attrs.MethodOther)
	}
	if v, _ := dp.Attributes.Value(attrs.OutcomeKey); v.AsString() != string(attrs.OutcomeReturn) {
		t.Errorf("retry.outcome = %q, want return", v.AsString())
	}
}

// An id or a URL key spelled as Prometheus spells it (retry_operation_id
// for retry.operation.id) is the same label there, and is dropped as the
// key is. They were kept (a reviewer's remark), as was a bare url, the
// namespace's own name, which a user fills with a whole URL.
func TestIdsAndURLsAreDroppedAsPrometheusSpellsThem(t *testing.T) {
	for _, k := range []attribute.Key{"retry_operation_id", "retry_request_id", "retry_idempotency_key_value",
		"url_full", "url_query", "http_url", "http_target", "retry..operation.id", "url", "URL", "Url.Full", "HTTP.URL", "Retry.Operation.Id"} {
		if set := metrics.NewLabels(k.String("x")); set.Len() != 0 {
			t.Errorf("NewLabels kept %s", k)
		}
	}
	if set := metrics.NewLabels(attribute.String("tenant_tier", "gold")); set.Len() != 1 {
		t.Error("NewLabels dropped an ordinary key")
	}
}
