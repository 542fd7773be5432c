// Copyright The otelretry Authors
// SPDX-License-Identifier: Apache-2.0

package otelretry_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptrace"
	"net/url"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/otelretry/otelretry-go/otelretry"
)

// quietError's Error does not read its receiver: a nil one prints as a
// non-nil one does, so a tree holding a nil one prints the same text as
// the same tree holding a non-nil one.
type quietError struct{ n int }

func (*quietError) Error() string { return "quiet" }

// nilTimeoutError reads its receiver in Timeout, as a net.Error of a
// base's may.
type nilTimeoutError struct{ timeout bool }

func (e *nilTimeoutError) Error() string   { return "i/o stalled" }
func (e *nilTimeoutError) Timeout() bool   { return e.timeout }
func (e *nilTimeoutError) Temporary() bool { return e.timeout }

// secretNotRecordedBeside fails t when secret, in the error base returns
// for an error beside either a non-nil *quietError or a typed nil one,
// reaches the returned error or a span: the typed nil's stand-in must
// leave the error's sanitizing as the non-nil one does.
func secretNotRecordedBeside(t *testing.T, secret string, base func(r *http.Request, other error) error, rawURL string, opts ...otelretry.Option) {
	t.Helper()
	for name, other := range map[string]error{
		"non-nil":   &quietError{},
		"typed nil": (*quietError)(nil),
	} {
		t.Run(name, func(t *testing.T) {
			rec, all := tracingProviders()
			rt := roundTripFunc(func(r *http.Request) (*http.Response, error) { return nil, base(r, other) })
			all = append(append(all, otelretry.WithMaxAttempts(1)), opts...)
			_, err := otelretry.NewTransport(rt, all...).RoundTrip(get(t, t.Context(), rawURL))
			if err == nil {
				t.Fatal("no error")
			}
			if recorded := recordedText(err, rec.Ended(), ""); strings.Contains(recorded, secret) {
				t.Errorf("the secret was recorded:\n%s", recorded)
			}
		})
	}
}

// A proxy's phrase a layer joined beside a typed nil is replaced as it is
// beside a non-nil error of the same type (a reviewer's find: the
// stand-in, a type of otelretry's own, ended the phrases' walk).
func TestAProxyPhraseBesideATypedNilIsNotRecorded(t *testing.T) {
	const secret = "cHVzZXI6UFJPWFlQQVNTMDc="
	secretNotRecordedBeside(t, secret, func(r *http.Request, other error) error {
		if tr := httptrace.ContextClientTrace(r.Context()); tr != nil && tr.GetConn != nil {
			tr.GetConn(r.URL.Host + ":443")
		}
		return errors.Join(errors.New("credentials rejected: "+secret), other)
	}, "https://api.test/x", otelretry.WithDeadline(10*time.Second))
}

// A *url.Error whose tree holds a typed nil has its URL sanitized as one
// whose tree holds a non-nil error of the same type.
func TestAURLErrorBesideAPrintableTypedNilIsSanitized(t *testing.T) {
	const secret = "s3cr3tT0kenValue0123456789"
	secretNotRecordedBeside(t, secret, func(_ *http.Request, other error) error {
		return &url.Error{Op: "Get", URL: "http://other.test/next?token=" + secret, Err: errors.Join(io.ErrUnexpectedEOF, other)}
	}, "http://api.test/")
}

// A typed nil below a *net.OpError is read past: classifying the error
// (its Timeout, through errors.As's net.Error) does not panic, and the
// GET is retried and answered (a reviewer's find: it panicked).
func TestATypedNilTimeoutBelowAnOpErrorIsReadPast(t *testing.T) {
	for name, mk := range map[string]func() error{
		"op error": func() error {
			return &net.OpError{Op: "read", Net: "tcp", Err: (*nilTimeoutError)(nil)}
		},
		"url error": func() error {
			return &url.Error{Op: "Get", URL: "http://api.test/", Err: &net.OpError{Op: "read", Net: "tcp", Err: (*nilTimeoutError)(nil)}}
		},
	} {
		t.Run(name, func(t *testing.T) { aGETFailedOnceIsRetried(t, mk) })
	}
}

var opID = regexp.MustCompile(`op-[0-9a-f]+`)

// The caller's cancel cause, holding a typed nil, is told as the
// caller's cause: the error the caller gets is the same as for the same
// cause holding a non-nil error of the same type (a reviewer's find: the
// stand-in was not told as the cause, and the cause was printed twice).
func TestACallersCauseHoldingATypedNilIsTheCallersCause(t *testing.T) {
	got := map[string]string{}
	for name, other := range map[string]error{
		"non-nil":   &quietError{},
		"typed nil": (*quietError)(nil),
	} {
		cause := errors.Join(errors.New("shutting down"), other)
		ctx, cancel := context.WithCancelCause(t.Context())
		base := roundTripFunc(func(r *http.Request) (*http.Response, error) {
			cancel(cause)
			<-r.Context().Done()
			return nil, context.Cause(r.Context())
		})
		_, err := otelretry.NewTransport(base, otelretry.WithMaxAttempts(3)).RoundTrip(get(t, ctx, "http://api.test/"))
		if err == nil {
			t.Fatal("no error")
		}
		got[name] = fmt.Sprintf("%v | is cause %v | is canceled %v", opID.ReplaceAllString(err.Error(), "op-X"), errors.Is(err, cause), errors.Is(err, context.Canceled))
	}
	if got["non-nil"] != got["typed nil"] {
		t.Errorf("the caller's error differs:\n non-nil:   %s\n typed nil: %s", got["non-nil"], got["typed nil"])
	}
}
