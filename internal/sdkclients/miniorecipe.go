// Copyright The otelretry Authors
// SPDX-License-Identifier: Apache-2.0

package sdkclients

import (
	"bytes"
	"context"
	"encoding/xml"
	"errors"
	"io"
	"net/http"
	"sync"

	"github.com/minio/minio-go/v7"

	"github.com/otelretry/otelretry-go/otelretry"
)

// The minio-go recipe of docs/sdk-recipes.md, as code the tests use: keep
// the two the same.

// otelretryOwnsMinioRetries makes one try per call (otelretry retries, a
// write S3 throttled too: s3SlowDowns) and keeps otelretry's errors,
// which minio-go rewrites. o.Transport, if set,
// is otelretry's base; else minio-go's own default transport, which leaves
// an object stored gzip-encoded as it is (DisableCompression), where
// http.DefaultTransport would decompress it.
func otelretryOwnsMinioRetries(o *minio.Options, opts ...otelretry.Option) error {
	base := o.Transport
	if base == nil {
		tr, err := minio.DefaultTransport(o.Secure)
		if err != nil {
			return err
		}
		base = tr
	}
	opts = append([]otelretry.Option{otelretry.WithShouldRetryHeaders(s3Verdict), otelretry.WithShouldRetryWrites()}, opts...)
	o.Transport = keepOtelretryErrors{otelretry.NewTransport(s3SlowDowns{base}, opts...)}
	o.MaxRetries = 1
	return nil
}

// s3Verdict is the should-retry header s3SlowDowns sets: the service's
// word, in the form otelretry reads it, that a request was refused unrun.
const s3Verdict = "S3-Should-Retry"

// s3SlowDowns goes below otelretry: it reads the error code of a 503
// (S3's XML body, <Code>SlowDown</Code>: "reduce your request rate", the
// request refused) and says "true" in s3Verdict for it, so that otelretry
// retries a write S3 throttled, as minio-go did. The body stays as it
// came.
type s3SlowDowns struct{ next http.RoundTripper }

func (t s3SlowDowns) RoundTrip(req *http.Request) (*http.Response, error) {
	resp, err := t.next.RoundTrip(req)
	if err != nil || resp.StatusCode != http.StatusServiceUnavailable {
		return resp, err
	}
	head, _ := io.ReadAll(io.LimitReader(resp.Body, 64<<10))
	resp.Body = struct {
		io.Reader
		io.Closer
	}{io.MultiReader(bytes.NewReader(head), resp.Body), resp.Body}
	var e struct {
		Code string `xml:"Code"`
	}
	if xml.Unmarshal(head, &e) == nil && e.Code == "SlowDown" {
		resp.Header.Set(s3Verdict, "true")
	}
	return resp, nil
}

// keepOtelretryErrors puts otelretry's error of a call where
// withOtelretryError's function finds it: minio-go replaces an error whose
// message contains "EOF" with its own, which errors.Is cannot see through.
type keepOtelretryErrors struct{ next http.RoundTripper }

type otelretryErrorKey struct{}

type otelretryErrorSlot struct {
	mu  sync.Mutex
	err error
}

func (t keepOtelretryErrors) RoundTrip(req *http.Request) (*http.Response, error) {
	resp, err := t.next.RoundTrip(req)
	var oe *otelretry.Error
	if slot, ok := req.Context().Value(otelretryErrorKey{}).(*otelretryErrorSlot); ok && errors.As(err, &oe) {
		slot.mu.Lock()
		if !errors.Is(slot.err, otelretry.ErrOutcomeUnknown) { // an unknown write is never forgotten
			slot.err = err
		}
		slot.mu.Unlock()
	}
	return resp, err
}

// withOtelretryError returns a context for one call and a function that
// returns otelretry's error of that call (nil if otelretry returned none).
func withOtelretryError(ctx context.Context) (context.Context, func() error) {
	slot := &otelretryErrorSlot{}
	return context.WithValue(ctx, otelretryErrorKey{}, slot), func() error {
		slot.mu.Lock()
		defer slot.mu.Unlock()
		return slot.err
	}
}
