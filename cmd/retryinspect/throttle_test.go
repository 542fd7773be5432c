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
		rt := otelretry.NewTransport(scripted.New(scripted.Step{Delay: time.Millisecond, Status: 503}),
			otelretry.WithTracerProvider(tp), otelretry.WithoutClientSpans(), otelretry.WithMaxAttempts(1),
			otelretry.WithThrottle(&otelretry.Throttle{}))
		for range 40 {
			req, _ := http.NewRequestWithContext(t.Context(), http.MethodGet, "http://inventory.test/items", nil)
			resp, err := rt.RoundTrip(req)
			switch {
			case err == nil:
				resp.Body.Close()
			case errors.Is(err, otelretry.ErrThrottled):
				refusedFirst++
			default:
				t.Fatal(err)
			}
		}
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
