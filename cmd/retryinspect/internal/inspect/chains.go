// Copyright The otelretry Authors
// SPDX-License-Identifier: Apache-2.0

package inspect

// redirectChains follows the redirect chains of each context (a parent
// span, an operation id) as operations come in start order: an operation
// that is no redirect hop begins a chain, and a hop continues the one
// chain whose last operation ended with a redirect before the hop began
// and that no other hop continued. Chains under one context may run at
// once (a job's fan-out of writes under one WithOperationID); a hop that
// more than one chain may have led to, or none, continues none.
type redirectChains[K comparable] map[K][]*redirectChain

type redirectChain struct{ head, last *group }

// begin starts a chain at g under k.
func (cs redirectChains[K]) begin(k K, g *group) {
	cs[k] = append(cs[k], &redirectChain{head: g, last: g})
}

// follow adds hop g to the chain under k that led to it, and returns that
// chain's first operation: nil when no chain, or more than one, may have.
func (cs redirectChains[K]) follow(k K, g *group) *group {
	var led *redirectChain
	for _, c := range cs[k] {
		if !redirected(c.last) || !endedBefore(c.last, g, 0) {
			continue
		}
		if led != nil {
			return nil // ambiguous
		}
		led = c
	}
	if led == nil {
		return nil
	}
	led.last = g
	return led.head
}

// redirected reports whether g ended on a redirect net/http's client
// follows (301, 302, 303, 307 or 308 its last attempt received): a hop may
// follow it. A 304 or a 300 is an answer, never followed.
func redirected(g *group) bool {
	end := g.op.Ending()
	if end < 0 {
		return false
	}
	s := g.op.Attempts[end].StatusCode
	if s == nil {
		return false
	}
	switch *s {
	case 301, 302, 303, 307, 308:
		return true
	}
	return false
}
