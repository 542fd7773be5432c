// Copyright The otelretry Authors
// SPDX-License-Identifier: Apache-2.0

package sdkclients

import (
	"errors"
	"net"
	"net/http"
	"strings"
	"testing"

	"github.com/elastic/go-elasticsearch/v8"

	"github.com/otelretry/otelretry-go/otelretry"
)

// reset closes the connection with a TCP RST (linger 0), after the
// request was read: the client reads "connection reset by peer", a
// *net.OpError whose Op is "read", not "dial".
func reset(w http.ResponseWriter) {
	conn, _, err := w.(http.Hijacker).Hijack()
	if err != nil {
		return
	}
	if tc, ok := conn.(*net.TCPConn); ok {
		tc.SetLinger(0)
	}
	conn.Close()
}

// TestElasticsearchResetWriteNotSentToAnotherNode: two nodes, each
// executing an index request and resetting the connection. The recipe's
// failover (anotherNodeIfUnreachable) is for a failed dial only: a write
// whose connection was reset after it was sent has an unknown outcome and
// goes to no other node.
func TestElasticsearchResetWriteNotSentToAnotherNode(t *testing.T) {
	serve := func(k string, n int, w http.ResponseWriter, r *http.Request) { reset(w) }
	a := newCountingServer(t, methodAndPath, serve)
	b := newCountingServer(t, methodAndPath, serve)
	rt := &tries{next: testTransport()}
	cfg := elasticsearch.Config{Addresses: []string{a.URL, b.URL}, Transport: rt}
	otelretryOwnsElasticsearchRetries(&cfg)
	es, err := elasticsearch.NewClient(cfg)
	if err != nil {
		t.Fatal(err)
	}
	res, err := es.Index("items", strings.NewReader(`{"name":"a small item"}`), es.Index.WithContext(t.Context()))
	esStatus(res)
	got := a.executed("POST /items/_doc") + b.executed("POST /items/_doc")
	t.Logf("reset write, two nodes: executed %d in %d client tries, err %v", got, rt.n.Load(), err)
	if got != 1 || rt.n.Load() != 1 {
		t.Errorf("executed %d in %d client tries; want 1 in 1 (a reset write is not sent to another node)", got, rt.n.Load())
	}
	if !errors.Is(err, otelretry.ErrOutcomeUnknown) {
		t.Errorf("error %v: want ErrOutcomeUnknown", err)
	}
}

// TestElasticsearchTwoNodesDownEachTriedOnce: two nodes, both refusing
// connections. The recipe (esrecipe.go, otelretryOwnsElasticsearchRetries)
// tries "each other node of cfg.Addresses once at most": two client tries,
// not a third back at the first node.
func TestElasticsearchTwoNodesDownEachTriedOnce(t *testing.T) {
	d := &dialCounter{n: map[string]int{}}
	rt := &tries{next: otelretry.NewTransport(d.transport(), testOptions()...)}
	cfg := elasticsearch.Config{Addresses: []string{"http://" + deadAddr(t), "http://" + deadAddr(t)}, Transport: rt}
	otelretryOwnsElasticsearchRetries(&cfg)
	es, err := elasticsearch.NewClient(cfg)
	if err != nil {
		t.Fatal(err)
	}
	res, err := esSearch(t.Context(), es, strings.NewReader(esQuery))
	esStatus(res)
	t.Logf("two nodes down: %d client tries, %d dials, err %v", rt.n.Load(), d.total(), err)
	if err == nil {
		t.Fatal("no error")
	}
	if rt.n.Load() != 2 {
		t.Errorf("%d client tries; want 2 (each node once)", rt.n.Load())
	}
}
