package otelretry

import (
	"context"
	"math/rand/v2"
	"net/http"
	"strconv"
)

type operationIDKey struct{}

// WithOperationID returns a context that names the logical operation the
// request belongs to. Create it at the operation boundary (where the user
// action or job starts), before the first call, so that every attempt and
// every log line of the operation share one id. An empty id is ignored.
//
// Without it, the Transport generates an id per RoundTrip, which ties the
// attempts of that call together but not separate calls of one operation.
func WithOperationID(ctx context.Context, id string) context.Context {
	if id == "" {
		return ctx
	}
	return context.WithValue(ctx, operationIDKey{}, id)
}

// OperationIDFromContext returns the id set with WithOperationID.
func OperationIDFromContext(ctx context.Context) (string, bool) {
	id, ok := ctx.Value(operationIDKey{}).(string)
	return id, ok
}

// NewOperationID returns a random operation id such as "op-1f3a9c0d5e7b2a64".
// It is not a secret and not a security token.
func NewOperationID() string {
	const digits = "0123456789abcdef"
	b := [3 + 16]byte{'o', 'p', '-'}
	v := rand.Uint64()
	for i := range 8 { // little-endian bytes, each as two hex digits
		c := byte(v >> (8 * i))
		b[3+2*i], b[4+2*i] = digits[c>>4], digits[c&0x0f]
	}
	return string(b[:])
}

// RequestID returns the id of attempt n of an operation:
// "<operationID>/attempt-<n>".
func RequestID(operationID string, attempt int) string {
	return operationID + "/attempt-" + strconv.Itoa(attempt)
}

func methodOf(r *http.Request) string {
	if r.Method == "" {
		return http.MethodGet
	}
	return r.Method
}

// safeMethod reports whether RFC 9110 defines method as safe, and so
// idempotent without any declaration.
func safeMethod(method string) bool {
	switch method {
	case http.MethodGet, http.MethodHead, http.MethodOptions, http.MethodTrace:
		return true
	}
	return false
}
