// Copyright The otelretry Authors
// SPDX-License-Identifier: Apache-2.0

package otelretry

import (
	"net/http"
	"slices"
	"strconv"
	"strings"
)

// What services say to their clients, and what clients say to services,
// beyond HTTP itself: a service's verdict on whether its answer may be
// retried, and the attempt's number on the wire. (The servers' retry hints
// in other units are read with Retry-After: see WithRetryHint.)

// defaultShouldRetryHeaders are the headers whose value is a service's
// verdict on retrying its answer, read unless WithShouldRetryHeaders names
// others (it says which, and why). "true" says the request may be
// repeated, "false" says it must not be; any other value is no verdict.
// Each call returns a new slice.
func defaultShouldRetryHeaders() []string { return []string{"Stripe-Should-Retry", "X-Should-Retry"} }

// serverVerdict is what a service said of retrying its answer.
type serverVerdict uint8

const (
	verdictNone    serverVerdict = iota // it said nothing, or nothing readable
	verdictRetry                        // "true": the request may be repeated
	verdictNoRetry                      // "false": it must not be
)

// shouldRetry reads the service's verdict from h: the first of names that
// carries "true" or "false" (in any case), and the header that said it.
func shouldRetry(h http.Header, names []string) (serverVerdict, string) {
	for _, name := range names {
		v := h[name] // the names are canonical
		if len(v) == 0 {
			continue
		}
		switch strings.ToLower(strings.TrimSpace(v[0])) {
		case "true":
			return verdictRetry, name
		case "false":
			return verdictNoRetry, name
		}
	}
	return verdictNone, ""
}

// attemptHeader is the header that tells the server which attempt it
// receives (WithAttemptHeader): its name, and its value for attempt number
// n (retry.attempt, from 1) of an operation allowed maxAttempts.
type attemptHeader struct {
	name  string
	value func(n, maxAttempts int) string
}

// attemptConventions are the attempt headers otelretry knows, by their
// canonical name, each written as its own clients write it.
var attemptConventions = map[string]func(n, maxAttempts int) string{
	// The AWS SDKs: "attempt=N; max=M".
	"Amz-Sdk-Request": func(n, maxAttempts int) string {
		return "attempt=" + strconv.Itoa(n) + "; max=" + strconv.Itoa(maxAttempts)
	},
	// openai-go and the clients generated like it: the retries before.
	"X-Stainless-Retry-Count": func(n, _ int) string { return strconv.Itoa(n - 1) },
	// gRPC: the attempts before this one.
	"Grpc-Previous-Rpc-Attempts": func(n, _ int) string { return strconv.Itoa(n - 1) },
	// Envoy: this attempt's number.
	"X-Envoy-Attempt-Count": attemptNumber,
}

func attemptNumber(n, _ int) string { return strconv.Itoa(n) }

// newAttemptHeader is the attempt header name, in its convention where
// otelretry knows it, else the attempt's number.
func newAttemptHeader(name string) *attemptHeader {
	name = http.CanonicalHeaderKey(name)
	value, ok := attemptConventions[name]
	if !ok {
		value = attemptNumber
	}
	return &attemptHeader{name: name, value: value}
}

// stamp sets the attempt header on h for attempt n of maxAttempts, unless
// the caller or an SDK set the header already: the wire stays theirs.
func (a *attemptHeader) stamp(h http.Header, n, maxAttempts int) {
	if a == nil || present(h, a.name) {
		return
	}
	h.Set(a.name, a.value(n, maxAttempts))
}

// unstamp takes the attempt header off h, a copy of an attempt's request,
// unless the caller's own request (callers) carried it.
func (a *attemptHeader) unstamp(h, callers http.Header) {
	if a != nil && !present(callers, a.name) {
		h.Del(a.name)
	}
}

// headerValue is a header otelretry sets on every attempt of an operation
// (its idempotency key, its id), with the operation's value; zero for
// none.
type headerValue struct{ name, value string }

// stamp sets the header on h, unless the caller or an SDK set it already.
func (v headerValue) stamp(h http.Header) {
	if v.name != "" && !present(h, v.name) {
		h.Set(v.name, v.value)
	}
}

// unstamp takes the header off h, a copy of an attempt's request, unless
// the caller's own request (callers) carried it.
func (v headerValue) unstamp(h, callers http.Header) {
	if v.name != "" && !present(callers, v.name) {
		h.Del(v.name)
	}
}

// valuesIn is every value h holds under name, in any spelling: net/http
// sends a header under the very key a caller or an SDK wrote (a lower-case
// one too), and servers read names case-insensitively. The canonical
// spelling's values come first, then the others', by spelling, so that
// two readings of one header compare equal.
func valuesIn(h http.Header, name string) []string {
	canonical := http.CanonicalHeaderKey(name)
	vs := h[canonical]
	var others []string
	for n := range h {
		if n != canonical && strings.EqualFold(n, canonical) {
			others = append(others, n)
		}
	}
	if len(others) == 0 {
		return vs
	}
	slices.Sort(others)
	vs = slices.Clone(vs)
	for _, n := range others {
		vs = append(vs, h[n]...)
	}
	return vs
}

// present reports whether h holds name, in any spelling.
func present(h http.Header, name string) bool {
	for n := range h {
		if strings.EqualFold(n, name) {
			return true
		}
	}
	return false
}
