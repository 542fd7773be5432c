// Copyright The otelretry Authors
// SPDX-License-Identifier: Apache-2.0

// Code generated from docs/sdk-recipes.md (section "go-elasticsearch v8", snippet 1) by readmesnippets; DO NOT EDIT.

package snippets

import (
	"errors"
	"github.com/elastic/elastic-transport-go/v8/elastictransport"
	"github.com/elastic/go-elasticsearch/v8"
	"github.com/otelretry/otelretry-go/otelretry"
	"net"
	"net/http"
	"strings"
)

// elasticsearchReads are the read-only APIs the client sends as POST,
// named by the first path segment that starts with "_" (/items/_search,
// /_msearch, /items/_explain/7); /items/_doc/_search is a write, and so is
// /_search/scroll: each call hands out a scroll's next batch, so a repeat
// would skip one.
var elasticsearchReads = map[string]bool{"_search": true, "_count": true, "_mget": true, "_msearch": true,
	"_field_caps": true, "_validate": true, "_explain": true, "_termvectors": true, "_mtermvectors": true, "_rank_eval": true}

func isElasticsearchRead(path string) bool {
	segs := strings.Split(path, "/")
	for i, seg := range segs {
		if strings.HasPrefix(seg, "_") {
			scroll := seg == "_search" && i+1 < len(segs) && segs[i+1] == "scroll"
			return elasticsearchReads[seg] && !scroll
		}
	}
	return false
}

// elasticsearchIntent marks the reads sent as POST repeatable (in the
// caller's Intent, kept) and gives every call an operation id, unless the
// caller's context has one.
func elasticsearchIntent(next elastictransport.RoundTripFunc) elastictransport.RoundTripFunc {
	return func(req *http.Request) (*http.Response, error) {
		ctx := req.Context()
		if req.Method == http.MethodPost && isElasticsearchRead(req.URL.Path) {
			in := otelretry.CallIntent(ctx) // the caller's, kept
			in.Repeatable = true
			ctx = otelretry.WithIntent(ctx, in)
		}
		ctx = otelretry.EnsureOperationID(ctx)
		return next(req.WithContext(ctx))
	}
}

// otelretryOwnsElasticsearchRetries leaves the retries to otelretry and
// marks the client's reads. The client still tries its next node where
// this one could not be reached (anotherNodeIfUnreachable), which
// otelretry, below its choice of node, cannot: each other node of
// cfg.Addresses once at most, so that a node down is not tried again
// above otelretry's own attempts (with one node, never), and up to the
// client's MaxRetries where it discovers its nodes (DiscoverNodesOnStart,
// DiscoverNodesInterval). It retries no status but 421, which names
// another node.
func otelretryOwnsElasticsearchRetries(cfg *elasticsearch.Config) {
	others := len(cfg.Addresses) - 1
	discovered := cfg.DiscoverNodesOnStart || cfg.DiscoverNodesInterval > 0
	cfg.RetryOnError = func(req *http.Request, err error) bool {
		return (others > 0 || discovered) && anotherNodeIfUnreachable(req, err)
	}
	if !discovered {
		cfg.MaxRetries = max(others, 1) // 0 reads as the client's default, 3
	}
	cfg.RetryOnStatus = []int{http.StatusMisdirectedRequest}
	cfg.Interceptors = append(cfg.Interceptors, elasticsearchIntent)
}

// anotherNodeIfUnreachable has the client send a call to its next node
// when otelretry could not connect to this one: a failed dial sent
// nothing, so any call may go again.
func anotherNodeIfUnreachable(_ *http.Request, err error) bool {
	var op *net.OpError
	return errors.As(err, &op) && op.Op == "dial"
}

func newElasticsearch() (*elasticsearch.Client, error) {
	cfg := elasticsearch.Config{
		Addresses: []string{"http://localhost:9200"},
		Transport: otelretry.NewTransport(http.DefaultTransport),
	}
	otelretryOwnsElasticsearchRetries(&cfg)
	return elasticsearch.NewClient(cfg)
}
