// Copyright The otelretry Authors
// SPDX-License-Identifier: Apache-2.0

package main

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"net/http"
	"regexp"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"go.opentelemetry.io/otel/trace"

	"github.com/otelretry/otelretry-go/internal/scripted"
	"github.com/otelretry/otelretry-go/otelretry"
)

// The headline of a dependency says where the client-side throttle held
// the client back, and how much: the requests it refused (first attempts
// never sent, retries) of those the client asked for, counted from the
// real transport's spans, against a dependency that only answers 503.
func TestThrottleRefusalsInTheDependencysHeadline(t *testing.T) {
	var spans []byte
	refusedFirst := 0
	synctest.Test(t, func(t *testing.T) {
		var out bytes.Buffer
		tp := spanWriter(t, &out)
		rt := throttled503s(tp)
		refusedFirst = getsRefused(t, rt, "http://inventory.test/items", 40)
		if err := tp.Shutdown(context.Background()); err != nil {
			t.Fatal(err)
		}
		spans = out.Bytes()
	})
	if refusedFirst == 0 {
		t.Fatal("the throttle refused nothing: the test shows nothing")
	}
	code, out, errOut := runOnFile(t, spans)
	if errOut != "" || code == exitError {
		t.Fatalf("exit %d, stderr %q", code, errOut)
	}
	want := fmt.Sprintf("the throttle refused %d of 40 requests (%.1f%%)", refusedFirst, 100*float64(refusedFirst)/40)
	headline := regexp.MustCompile(`(?m)^  inventory\.test: .*$`).FindString(out)
	if !strings.Contains(headline, want) {
		t.Errorf("headline %q lacks %q:\n%s", headline, want, out)
	}
}

// A layer above (an SDK's retryer written as docs/sdk-recipes.md writes
// it: EnsureOperationID at its top) sends a POST once more only when the
// client-side throttle refused its try: a refused try sent nothing
// ("refused locally, before anything about it starts"), so the try after
// it resends nothing. retryinspect does not call that an outer layer's
// resend of a failed write (it did: 35 findings in 20 layers, where each
// POST was sent at most once).
func TestAThrottledTryRepeatedByALayerIsNoResend(t *testing.T) {
	var spans []byte
	throttled, sent, layers, throttledGET := 0, 0, 0, 0
	synctest.Test(t, func(t *testing.T) {
		var out bytes.Buffer
		tp := spanWriter(t, &out)
		rt := throttled503s(tp)
		throttledGET = getsRefused(t, rt, "http://orders.test/items", 40) // the throttle warmed up
		layers = 20
		throttled, sent = throttledLayers(t, tp, rt, layers, 10*time.Millisecond)
		if err := tp.Shutdown(context.Background()); err != nil {
			t.Fatal(err)
		}
		spans = out.Bytes()
	})
	if throttled == 0 {
		t.Fatal("the throttle refused nothing: the test shows nothing")
	}
	code, out, errOut := runOnFile(t, spans)
	t.Logf("layers %d, tries throttled %d, POSTs sent %d; exit %d stderr %q", layers, throttled, sent, code, errOut)
	if n := strings.Count(out, "[outer-layer-resend]"); n > 0 {
		t.Errorf("%d outer-layer-resend findings, where each POST was sent at most once (a layer repeated only tries the throttle refused before anything was sent):\n%s", n, grepLines(out, "outer-layer-resend"))
	}
	headline := regexp.MustCompile(`(?m)^  orders\.test: .*$`).FindString(out)
	want := fmt.Sprintf("the throttle refused %d of %d requests", throttled+throttledGET, throttled+throttledGET+sent+40-throttledGET)
	if !strings.Contains(headline, want) {
		t.Errorf("headline %q lacks %q", headline, want)
	}
}

// throttledLayers has n layers above rt (an SDK's retryer written as
// docs/sdk-recipes.md writes it: EnsureOperationID at its top, each under
// a span of its own) send a POST, trying again after pause only when the
// client-side throttle refused its try, up to 3 tries; it returns the
// tries throttled and the POSTs sent.
func throttledLayers(t *testing.T, tp trace.TracerProvider, rt http.RoundTripper, n int, pause time.Duration) (throttled, sent int) {
	for range n {
		ctx, handler := tp.Tracer("app").Start(t.Context(), "handler", trace.WithSpanKind(trace.SpanKindServer))
		ctx = otelretry.EnsureOperationID(ctx) // the layer's top
		for try := 0; try < 3; try++ {
			req, _ := http.NewRequestWithContext(ctx, http.MethodPost, "http://orders.test/orders", strings.NewReader(`{"sku":1}`))
			resp, err := rt.RoundTrip(req)
			if err == nil {
				resp.Body.Close()
			}
			if errors.Is(err, otelretry.ErrThrottled) {
				throttled++
				time.Sleep(pause)
				continue // nothing was sent: the layer tries again
			}
			sent++
			break // sent and failed (503): the layer gives up, no resend
		}
		handler.End()
	}
	return throttled, sent
}

// throttled503s is a Transport with a client-side throttle, one attempt
// per operation and no CLIENT spans, over a dependency that answers 503.
func throttled503s(tp trace.TracerProvider) *otelretry.Transport {
	return otelretry.NewTransport(scripted.New(scripted.Step{Delay: time.Millisecond, Status: 503}),
		otelretry.WithTracerProvider(tp), otelretry.WithoutClientSpans(), otelretry.WithMaxAttempts(1),
		otelretry.WithThrottle(&otelretry.Throttle{}))
}

// getsRefused sends n GETs to url through rt and returns how many the
// throttle refused; any other error fails t.
func getsRefused(t *testing.T, rt http.RoundTripper, url string, n int) int {
	refused := 0
	for range n {
		req, _ := http.NewRequestWithContext(t.Context(), http.MethodGet, url, nil)
		resp, err := rt.RoundTrip(req)
		switch {
		case err == nil:
			resp.Body.Close()
		case errors.Is(err, otelretry.ErrThrottled):
			refused++
		default:
			t.Fatal(err)
		}
	}
	return refused
}
