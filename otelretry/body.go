package otelretry

import (
	"context"
	"io"
	"net/http"

	"go.opentelemetry.io/otel/trace"

	"github.com/otelretry/otelretry-go/attrs"
)

// releaseOnClose wraps a returned response body so that the attempt's
// context (and its timer) is released when the caller closes the body, not
// when RoundTrip returns: the body stays readable until then. A body that
// is also an io.Writer (a 101 Switching Protocols connection) stays one.
func releaseOnClose(body io.ReadCloser, release context.CancelFunc) io.ReadCloser {
	if rwc, ok := body.(io.ReadWriteCloser); ok {
		return &releasingReadWriteCloser{releasingBody{body, release}, rwc}
	}
	return &releasingBody{body, release}
}

type releasingBody struct {
	io.ReadCloser
	release context.CancelFunc
}

func (b *releasingBody) Close() error {
	err := b.ReadCloser.Close()
	b.release()
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
type redactClientSpan struct{ base http.RoundTripper }

func (r redactClientSpan) RoundTrip(req *http.Request) (*http.Response, error) {
	if span := trace.SpanFromContext(req.Context()); span.IsRecording() {
		span.SetAttributes(attrs.URLFullKey.String(SanitizeURL(req.URL)))
	}
	return r.base.RoundTrip(req)
}
