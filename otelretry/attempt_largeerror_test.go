// Copyright The otelretry Authors
// SPDX-License-Identifier: Apache-2.0

package otelretry_test

import (
	"errors"
	"fmt"
	"net/http"
	"testing"
	"time"

	"github.com/otelretry/otelretry-go/otelretry"
)

// manyError is a base's error type that wraps many errors and holds
// no typed nil.
type manyError struct{ errs []error }

func (e *manyError) Error() string   { return "many failures" }
func (e *manyError) Unwrap() []error { return e.errs }

// Answer.Err is the transport error: a Classifier that tells the base's
// error by its type sees it as the base returned it, also when its tree
// holds more than 256 errors (no typed nil among them; a reviewer's find:
// a tree that large was put behind the typed-nil stand-in).
func TestAClassifierSeesALargeBaseErrorAsItIs(t *testing.T) {
	for _, n := range []int{10, 300} {
		t.Run(fmt.Sprint(n), func(t *testing.T) {
			var errs []error
			for i := range n {
				errs = append(errs, fmt.Errorf("part %d", i))
			}
			baseErr := &manyError{errs}
			var seen error
			base := roundTripFunc(func(r *http.Request) (*http.Response, error) { return nil, baseErr })
			_, opts := tracingProviders()
			opts = append(opts, otelretry.WithMaxAttempts(1), otelretry.WithDeadline(10*time.Second),
				otelretry.WithClassifier(func(a otelretry.Answer) otelretry.Classification {
					seen = a.Err
					return otelretry.Classification{}
				}))
			req, _ := http.NewRequestWithContext(t.Context(), http.MethodGet, "http://127.0.0.1:1/x", nil)
			_, err := otelretry.NewTransport(base, opts...).RoundTrip(req)
			if err == nil {
				t.Fatal("no error")
			}
			if _, ok := seen.(*manyError); !ok {
				t.Errorf("Classifier's Answer.Err is %T, not the base's *manyError", seen)
			}
			var oe *otelretry.Error
			if !errors.As(err, &oe) {
				t.Fatalf("err %T is no *otelretry.Error", err)
			}
			var m *manyError
			if !errors.As(err, &m) || m != baseErr {
				t.Errorf("errors.As(err, *manyError) = %v", m)
			}
		})
	}
}
