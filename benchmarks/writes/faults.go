// Copyright The otelretry Authors
// SPDX-License-Identifier: Apache-2.0

package main

import (
	"context"
	"errors"
	"math/rand/v2"
	"net"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"sync"
)

// fault is what becomes of one request on its way to the server and back.
type fault uint8

const (
	faultNone fault = iota
	// faultLost: the server applies the write, then closes the connection
	// without an answer.
	faultLost
	// faultUnavailable: the server answers 503 before applying anything.
	faultUnavailable
	// faultSlow: the server answers only after the slow delay, longer
	// than otelretry's attempt timeout (having applied the write at once).
	faultSlow
	// faultRefused: the connection is refused; the request never leaves.
	faultRefused
	faultKinds
)

var faultNames = [faultKinds]string{"none", "lost", "503", "slow", "refused"}

func (f fault) String() string { return faultNames[f] }

// parseFault reads a fault's name, faultNone for any other.
func parseFault(s string) fault {
	for f, name := range faultNames {
		if name == s {
			return fault(f)
		}
	}
	return faultNone
}

// faultRates are the probabilities of each fault, per request.
type faultRates struct {
	lost, unavailable, slow, refused float64
}

func (r faultRates) total() float64 { return r.lost + r.unavailable + r.slow + r.refused }

// at is the fault of the ordinal-th request (from 1) sent for write: a
// pure function of the seed, the write and the ordinal, so that every
// configuration meets the same fault at the same attempt of the same
// write, whatever its timing.
func (r faultRates) at(seed uint64, write, ordinal int) fault {
	u := rand.New(rand.NewPCG(seed, uint64(write)<<20|uint64(ordinal))).Float64()
	for _, c := range []struct {
		p float64
		f fault
	}{{r.lost, faultLost}, {r.unavailable, faultUnavailable}, {r.slow, faultSlow}, {r.refused, faultRefused}} {
		if u < c.p {
			return c.f
		}
		u -= c.p
	}
	return faultNone
}

// faultHeader carries a request's fault to the server, which obeys it.
const faultHeader = "X-Bench-Fault"

// writesPath is the path of write i: /writes/<i>.
const writesPath = "/writes/"

// writeOf reads the write a request is for from its path.
func writeOf(path string) (int, bool) {
	s, ok := strings.CutPrefix(path, writesPath)
	if !ok {
		return 0, false
	}
	i, err := strconv.Atoi(s)
	return i, err == nil
}

// network is what lies between a configuration's client and the server,
// below its retries: it numbers the requests of each write and gives each
// its fault from the schedule. A refused connection it makes itself, by
// dialling a port nothing listens on (the error is the kernel's); any
// other fault it names in a header that the server obeys. Keep-alives are
// off below it, so no layer under it sends a request it did not see.
type network struct {
	base    http.RoundTripper
	refused string // a loopback address nothing listens on
	rates   faultRates
	seed    uint64

	mu sync.Mutex
	// seen is, per write, what came of each request sent for it, as the
	// client saw it: seenRefused, seenFailed (no answer: the connection
	// lost, a timeout), or the answer's status.
	seen  map[int][]int
	drawn [faultKinds]int // faults drawn
	stray int             // requests for no write
	dial  func(context.Context, string, string) (net.Conn, error)
}

// What a request came to, when it got no answer.
const (
	seenRefused = -1
	seenFailed  = 0
)

func newNetwork(base http.RoundTripper, refused string, rates faultRates, seed uint64) *network {
	return &network{base: base, refused: refused, rates: rates, seed: seed, seen: map[int][]int{},
		dial: (&net.Dialer{}).DialContext}
}

func (n *network) RoundTrip(req *http.Request) (*http.Response, error) {
	w, ok := writeOf(req.URL.Path)
	n.mu.Lock()
	f, ordinal := faultNone, 0
	if ok {
		n.seen[w] = append(n.seen[w], seenFailed)
		ordinal = len(n.seen[w])
		f = n.rates.at(n.seed, w, ordinal)
		n.drawn[f]++
	} else {
		n.stray++
	}
	n.mu.Unlock()
	if f == faultRefused {
		if req.Body != nil {
			req.Body.Close() // a RoundTripper closes the body, on errors too
		}
		conn, err := n.dial(req.Context(), "tcp", n.refused)
		if err == nil {
			conn.Close()
			err = errors.New("writes: " + n.refused + " accepted a connection; no refusal to give")
		}
		n.saw(w, ordinal, seenRefused)
		return nil, err
	}
	out := req.Clone(req.Context())
	out.Header.Set(faultHeader, f.String())
	resp, err := n.base.RoundTrip(out)
	if err == nil {
		n.saw(w, ordinal, resp.StatusCode)
	}
	return resp, err
}

// saw records what came of the ordinal-th request of write w.
func (n *network) saw(w, ordinal, what int) {
	if ordinal == 0 {
		return
	}
	n.mu.Lock()
	n.seen[w][ordinal-1] = what
	n.mu.Unlock()
}

// requests returns what came of each request sent for write w.
func (n *network) requests(w int) []int {
	n.mu.Lock()
	defer n.mu.Unlock()
	return slices.Clone(n.seen[w])
}

// lostAnswerResends is how many of the requests sent for a write followed
// the first answer it lost (no answer, or a 5xx or a 409 in its place), up
// to the one answered a success: the resends that answer needed, with
// their own refusals and answers lost in turn. A write that lost no answer
// before its success needed none, and no request after a success is
// needed. Nor is a 409 right after a 409: the first one's Retry-After
// lasts until the key's answer is stored (see server), so a resend that
// meets the key still in progress again was sent before that wait ended.
func lostAnswerResends(seen []int) int {
	lost, needed := -1, 0
	for i, what := range seen {
		switch {
		case lost < 0 && what >= 200 && what < 300:
			return 0
		case lost < 0 && (what == seenFailed || what >= 500 || what == http.StatusConflict):
			lost = i
		case lost < 0:
		case what == http.StatusConflict && seen[i-1] == http.StatusConflict:
		default:
			needed++
			if what >= 200 && what < 300 {
				return needed
			}
		}
	}
	return needed
}

// closedAddr returns a loopback address nothing listens on: a port the
// kernel gave a listener that was closed at once.
func closedAddr() (string, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return "", err
	}
	addr := l.Addr().String()
	return addr, l.Close()
}
