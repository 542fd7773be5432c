package otelretry

import (
	"context"
	"io"
	"net/http"
	"reflect"
	"strings"
	"testing"
	"time"
)

// countingBody counts what was read from it and whether it was closed.
type countingBody struct {
	r      io.Reader
	read   int
	closed bool
}

func (b *countingBody) Read(p []byte) (int, error) {
	n, err := b.r.Read(p)
	b.read += n
	return n, err
}

func (b *countingBody) Close() error { b.closed = true; return nil }

func TestDiscardDrainsAtMostMaxDrainAndCloses(t *testing.T) {
	for _, size := range []int{0, 100, maxDrain - 1, maxDrain, maxDrain + 1, 10 * maxDrain} {
		body := &countingBody{r: strings.NewReader(strings.Repeat("x", size))}
		actx := new(attemptContext)
		actx.init(context.Background(), time.Now(), time.Hour)
		discard(&http.Response{Body: body}, actx)
		released := actx.Err() == context.Canceled
		if want := min(size, maxDrain); body.read != want || !body.closed || !released {
			t.Errorf("size %d: read %d (want %d), closed %v, released %v", size, body.read, want, body.closed, released)
		}
	}
	discard(nil, nil)                               // no response
	discard(&http.Response{}, nil)                  // no body
	discard(&http.Response{Body: http.NoBody}, nil) // empty body
}

// The carrier writes what http.Header.Set writes, into a copy made on the
// first write only.
func TestHeaderCarrierCopiesOnFirstWrite(t *testing.T) {
	caller := http.Header{"X-Caller": {"1"}}
	req := &http.Request{Header: caller}
	c := headerCarrier{req: req}
	if c.Get("x-caller") != "1" || !reflect.DeepEqual(c.Keys(), []string{"X-Caller"}) {
		t.Fatalf("Get/Keys do not read the caller's header")
	}
	want := caller.Clone()
	for _, kv := range [][2]string{{"traceparent", "00-a-b-01"}, {"tracestate", "k=v"}, {"baggage", "b=1"}, {"x-b3-traceid", "abc"}, {"Uber-Trace-Id", "u"}} {
		c.Set(kv[0], kv[1])
		want.Set(kv[0], kv[1])
	}
	if !reflect.DeepEqual(req.Header, want) {
		t.Errorf("header = %v, want %v", req.Header, want)
	}
	if len(caller) != 1 {
		t.Errorf("the caller's header was written: %v", caller)
	}
	empty := &http.Request{} // a nil header gets a fresh one
	(&headerCarrier{req: empty}).Set("traceparent", "x")
	if empty.Header.Get("Traceparent") != "x" {
		t.Errorf("nil header: %v", empty.Header)
	}
}
