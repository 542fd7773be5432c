package otelretry

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/url"

	"go.opentelemetry.io/otel/trace"

	"github.com/otelretry/otelretry-go/attrs"
)

// releaseOnClose wraps a returned response body so that the attempt's
// context (and its timer) is released when the caller closes the body, not
// when RoundTrip returns: the body stays readable until then. A body that
// is also an io.Writer (a 101 Switching Protocols connection) stays one.
// The wrapper lives in the operation, which is done by then, so wrapping
// allocates nothing.
func (op *operation) releaseOnClose(body io.ReadCloser, actx *attemptContext) io.ReadCloser {
	if rwc, ok := body.(io.ReadWriteCloser); ok {
		return &releasingReadWriteCloser{releasingBody{body, actx}, rwc}
	}
	op.releasing = releasingBody{body, actx}
	return &op.releasing
}

type releasingBody struct {
	io.ReadCloser
	actx *attemptContext
}

func (b *releasingBody) Close() error {
	err := b.ReadCloser.Close()
	b.actx.release()
	return err
}

type releasingReadWriteCloser struct {
	releasingBody
	w io.Writer
}

func (b *releasingReadWriteCloser) Write(p []byte) (int, error) { return b.w.Write(p) }

// redactClientSpan sits inside the otelhttp transport and overwrites the
// url.full that otelhttp recorded on its client span, which keeps the query
// string, with the sanitized URL. The SDK keeps the last value set for a key.
// Nothing is written when the URL has nothing to redact. The sanitized URL
// is the operation's, computed once per operation: the request reaching
// here is otelhttp's copy of the attempt's, whose URL is the caller's.
type redactClientSpan struct{ base http.RoundTripper }

func (r redactClientSpan) RoundTrip(req *http.Request) (*http.Response, error) {
	if redactable(req.URL) {
		ctx := req.Context()
		if span := trace.SpanFromContext(ctx); span.IsRecording() {
			op, _ := ctx.Value(opContextKey{}).(*operation)
			if op != nil && sameURL(op.req.URL, req.URL) {
				span.SetAttributes(append(op.attrs(), attrs.URLFullKey.String(op.sanitizedURL()))...)
			} else {
				span.SetAttributes(attrs.URLFullKey.String(SanitizeURL(req.URL)))
			}
		}
	}
	return r.base.RoundTrip(req)
}

// sameURL reports whether a and b have the fields SanitizeURL reads alike.
func sameURL(a, b *url.URL) bool {
	return a.Scheme == b.Scheme && a.Opaque == b.Opaque && a.Host == b.Host && a.Path == b.Path &&
		a.RawPath == b.RawPath && a.OmitHost == b.OmitHost && a.RawQuery == b.RawQuery
}

// opContext is the caller's context with the operation attached, embedded
// in the operation so that attaching it allocates nothing. Only
// redactClientSpan reads it, and the nearest operation in a context chain
// is always the one whose attempt is being sent.
type opContext struct {
	context.Context
	op *operation
}

type opContextKey struct{}

func (c *opContext) String() string { return fmt.Sprint(c.Context) + ".WithValue(otelretry.operation)" }

func (c *opContext) Value(key any) any {
	if key == (opContextKey{}) {
		return c.op
	}
	return c.Context.Value(key)
}
