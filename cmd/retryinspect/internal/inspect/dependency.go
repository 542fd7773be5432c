// Copyright The otelretry Authors
// SPDX-License-Identifier: Apache-2.0

package inspect

import (
	"cmp"
	"fmt"
	"maps"
	"math"
	"net"
	"net/url"
	"slices"
	"strconv"
	"strings"

	"github.com/otelretry/otelretry-go/attrs"
	"github.com/otelretry/otelretry-go/cmd/retryinspect/internal/model"
	"github.com/otelretry/otelretry-go/internal/hostname"
)

// A dependency is the service an operation calls: what otelretry's retry
// budget and hedge rate are kept per (the request's host by default, any
// method), and what an incident is told by. A trace names it, best first:
//
//  1. service.peer.name (semantic conventions v1.43) on the operation span
//     or an attempt span: the name the client gave the service it calls;
//  2. peer.service, the attribute service.peer.name replaced, which older
//     instrumentations write;
//  3. the service.name of the server's span under an attempt, when the
//     trace holds the server's spans: the name the service gives itself
//     (unless it is the caller's own: a server that shares the client's
//     SDK, in a test or a demo, names nothing);
//  4. server.address and server.port, the port left out when it is the
//     default of url.full's scheme, as a URL's host leaves it out: the
//     budget's default key;
//  5. url.full's host, so written, on a span without server.address (an
//     attempt's log record, whose operation's record was lost).
//
// The method is no part of it: the budget is shared by all the methods of
// a host, and so is an outage.

// Where a dependency's name comes from (Dependency.From).
const (
	FromServicePeerName = "service.peer.name"
	FromPeerService     = "peer.service"
	FromServerService   = "service.name" // of the server's span under an attempt
	FromServerAddress   = "server.address"
	FromURLFull         = "url.full" // of a span without server.address
)

// fromRank orders the sources, best first as dependencyName reads them: a
// dependency whose operations were named from several (one of them read
// from log records whose operation's record was lost) says the best.
var fromRank = map[string]int{FromURLFull: 1, FromServerAddress: 2, FromServerService: 3, FromPeerService: 4, FromServicePeerName: 5}

// Dependency is what happened to the operations of one dependency: the
// figures of its headline, and the headline itself, which the text, JSON
// and HTML reports give word for word.
type Dependency struct {
	// Name is the service the operations call; "" when no span names it.
	Name string `json:"name"`
	// From says where Name comes from: FromServicePeerName,
	// FromPeerService, FromServerService, FromServerAddress or
	// FromURLFull; the best its operations' names came from.
	From    string   `json:"from,omitempty"`
	Methods []string `json:"methods"` // of its operations, sorted
	// Operations counts its operations, NotReturned those whose outcome
	// is not return, Outcomes those by outcome, the most first.
	Operations  int     `json:"operations"`
	NotReturned int     `json:"not_returned"`
	Outcomes    []Share `json:"outcomes_not_returned"`
	// Attempts counts its attempts, Retries those after an operation's
	// first (retries and hedges), FailedAttempts those that failed by
	// result ("503", "timeout"), the most first. A superseded attempt did
	// not fail: another attempt won.
	Attempts       int     `json:"attempts"`
	Retries        int     `json:"retries"`
	FailedAttempts []Share `json:"failed_attempts"`
	// Load is Attempts / Operations, to two decimals.
	Load float64 `json:"load"`
	// BudgetRefused counts the retries the budget refused: its operations
	// that ended budget_exhausted (see Operation.Refused).
	BudgetRefused int `json:"budget_refused"`
	// ThrottleRefused counts the requests a client-side throttle refused
	// before they started: its operations that ended throttled, with no
	// attempt (a first attempt) or after one (a retry, or a state check's
	// resend). Its hedges refused are in Hedging.
	ThrottleRefused int `json:"throttle_refused"`
	// Findings counts the findings that name one of its operations, each
	// once.
	Findings int `json:"findings"`
	// Hedging is present when an operation of it hedged or refused a
	// hedge.
	Hedging *DependencyHedging `json:"hedging,omitempty"`
	// Headline tells all of the above in one line.
	Headline string `json:"headline"`
}

// DependencyHedging is the hedging of one dependency.
type DependencyHedging struct {
	// HedgeRate is the operations that sent a hedge (an attempt that is a
	// hedge, or a hedge_sent event) / its operations.
	HedgeRate Ratio `json:"hedge_rate"`
	// WinRate is the hedged operations whose winning attempt (the one
	// whose verdict ended the operation: Ending, when it decided anything
	// but retry) was a hedge / its hedged operations.
	WinRate Ratio `json:"hedge_win_rate"`
	// Refused counts the hedge_refused events by retry.reason, each a
	// share of all of the dependency's refusals.
	Refused []Share `json:"hedge_refused"`
}

// nameDependencies names the dependency of every operation (see
// Dependency). A server span is taken as the attempt's when its parent is
// the attempt span, or a client span whose parent is (otelhttp's, under
// an attempt span of the transport's own), and when its service is not
// the attempt's own.
func (a *analyzer) nameDependencies() {
	serverOf := map[*model.Span]string{} // attempt span → the service.name of a server span under it
	for i, s := range a.spans {
		if s.Kind != model.KindServer || s.Service == "" {
			continue
		}
		p := a.parent[i]
		if p >= 0 && a.roles[p] != roleAttempt && a.spans[p].Kind == model.KindClient {
			p = a.parent[p]
		}
		if p >= 0 && a.roles[p] == roleAttempt && a.spans[p].Service != s.Service && serverOf[a.spans[p]] == "" {
			serverOf[a.spans[p]] = s.Service
		}
	}
	for _, g := range a.groups {
		spans := g.attempts
		if g.span != nil {
			spans = append([]*model.Span{g.span}, spans...)
		}
		g.op.Dependency, g.op.dependencyFrom = dependencyName(spans, g.attempts, serverOf)
	}
}

// dependencyName names the dependency of an operation from its spans (the
// operation span first) and attempt spans; see Dependency.
func dependencyName(spans, attempts []*model.Span, serverOf map[*model.Span]string) (name, from string) {
	for _, key := range []string{keyServicePeerName, keyPeerService} {
		for _, s := range spans {
			if v, ok := s.Attr(key); ok && v.Type == model.TypeString && v.Str != "" {
				return redacted(v.Str), key
			}
		}
	}
	for _, s := range attempts {
		if svc := serverOf[s]; svc != "" {
			return redacted(svc), FromServerService
		}
	}
	for _, s := range spans {
		if _, recorded := s.Attr(keyServerAddress); !recorded {
			continue
		}
		if host := hostOf(s); host != "" {
			return host, FromServerAddress
		}
	}
	for _, s := range spans {
		if host := hostOfURL(stringAttr(s, keyURLFull)); host != "" {
			return host, FromURLFull
		}
	}
	return "", ""
}

// hostOf is a span's server.address with its server.port, as a URL's host
// writes them: without the port when it is the default of url.full's
// scheme, and an IPv6 address in brackets; the name as the transport keeps
// a dependency's (hostname.One). A span without server.port (the transport
// records none for a port past int, which its key keeps) takes url.full's.
// An empty server.address with a port is the local system's, which a URL
// writes ":8080" (http.Get("http://:8080/")), as the budget keys it; a
// span without server.address names nothing.
func hostOf(s *model.Span) string {
	addr := redacted(hostname.One(stringAttr(s, keyServerAddress)))
	if _, recorded := s.Attr(keyServerAddress); addr == "" && !recorded {
		return ""
	}
	full := stringAttr(s, keyURLFull)
	scheme, _, _ := strings.Cut(full, "://")
	port, ok := s.Attr(keyServerPort)
	if !ok || port.Type != model.TypeInt {
		if p := portOf(full); p != "" && p != strconv.FormatInt(defaultPorts[strings.ToLower(scheme)], 10) {
			return net.JoinHostPort(addr, p)
		}
		return bracketed(addr)
	}
	if defaultPorts[strings.ToLower(scheme)] == port.Int {
		return bracketed(addr)
	}
	return net.JoinHostPort(addr, strconv.FormatInt(port.Int, 10))
}

// hostOfURL is the dependency rawURL names, as hostOf names a span's: its
// host, without the scheme's default port; "" when it names none.
func hostOfURL(rawURL string) string {
	u, err := url.Parse(rawURL)
	if err != nil || u.Host == "" {
		return ""
	}
	addr := redacted(hostname.One(u.Hostname()))
	if p := portOf(rawURL); p != "" && p != strconv.FormatInt(defaultPorts[strings.ToLower(u.Scheme)], 10) {
		return net.JoinHostPort(addr, p)
	}
	return bracketed(addr)
}

// portOf is the port rawURL writes, as a number writes it (no leading
// zeros), or "".
func portOf(rawURL string) string {
	u, err := url.Parse(rawURL)
	if err != nil || u.Port() == "" {
		return ""
	}
	return cmp.Or(strings.TrimLeft(u.Port(), "0"), "0")
}

// bracketed is addr as a URL's host writes it: an IPv6 address in
// brackets, as the transport keeps its dependency ("[::1]").
func bracketed(addr string) string {
	if strings.Contains(addr, ":") && !strings.HasPrefix(addr, "[") {
		return "[" + addr + "]"
	}
	return addr
}

var defaultPorts = map[string]int64{"http": 80, "https": 443}

// dependencyTally is one dependency's sums while dependencies reads the
// operations.
type dependencyTally struct {
	d                  Dependency
	methods            map[string]bool
	outcomes, failures map[string]int
	findings           map[int]bool
	ops                []Operation
}

// add counts op, an operation of the dependency.
func (t *dependencyTally) add(op *Operation) {
	if fromRank[op.dependencyFrom] > fromRank[t.d.From] {
		t.d.From = op.dependencyFrom // its operations' best source
	}
	t.ops = append(t.ops, *op)
	t.d.Operations++
	if op.Method != "" {
		t.methods[op.Method] = true
	}
	if outcome := op.EndedAs(); outcome != string(attrs.OutcomeReturn) {
		t.d.NotReturned++
		t.outcomes[dashed(outcome)]++
	}
	t.d.Attempts += len(op.Attempts)
	switch op.Refused() {
	case "budget":
		t.d.BudgetRefused++
	case "throttle":
		t.d.ThrottleRefused++
	}
	for k := range op.Attempts {
		at := &op.Attempts[k]
		if k > 0 {
			t.d.Retries++
		}
		if at.Decision == string(attrs.DecisionSuperseded) && at.Reason != string(attrs.ReasonOperationEnded) {
			continue // canceled when another attempt won: not a failure (the operation's end cut one when none won)
		}
		if at.ErrorClass != "" || at.StatusCode == nil || *at.StatusCode < 100 || *at.StatusCode >= 400 {
			t.failures[at.Result()]++
		}
	}
}

// dependencies sums up the operations of r by dependency, the one with
// the most operations that did not return first, then the most findings,
// retries and attempts; ties in the order they first appear.
func dependencies(r *Report) []Dependency {
	byName := map[string]*dependencyTally{}
	var order []*dependencyTally
	of := make([]*dependencyTally, len(r.Operations))
	for i := range r.Operations {
		op := &r.Operations[i]
		t := byName[op.Dependency]
		if t == nil {
			t = &dependencyTally{methods: map[string]bool{}, outcomes: map[string]int{}, failures: map[string]int{}, findings: map[int]bool{}}
			t.d.Name = op.Dependency
			byName[op.Dependency] = t
			order = append(order, t)
		}
		of[i] = t
		t.add(op)
	}
	// A finding counts once for a dependency, however many of its
	// operations it names (an outer-layer-resend names two).
	for fi, f := range r.Findings {
		for _, i := range f.Operations() {
			if i >= 0 && i < len(of) {
				of[i].findings[fi] = true
			}
		}
	}
	out := make([]Dependency, 0, len(order))
	for _, t := range order {
		d := t.d
		d.Methods = slices.Sorted(maps.Keys(t.methods))
		d.Outcomes = byCount(t.outcomes)
		d.FailedAttempts = byCount(t.failures)
		d.Load = math.Round(float64(d.Attempts)/float64(d.Operations)*100) / 100
		d.Findings = len(t.findings)
		d.Hedging = hedging(t.ops)
		d.Headline = headline(&d)
		out = append(out, d)
	}
	slices.SortStableFunc(out, func(a, b Dependency) int {
		return cmp.Or(cmp.Compare(b.NotReturned, a.NotReturned), cmp.Compare(b.Findings, a.Findings),
			cmp.Compare(b.Retries, a.Retries), cmp.Compare(b.Attempts, a.Attempts))
	})
	return out
}

// byCount lists counts as shares of their sum, the largest first, ties by
// value.
func byCount(counts map[string]int) []Share {
	total := 0
	for _, n := range counts {
		total += n
	}
	out := make([]Share, 0, len(counts))
	for _, v := range slices.Sorted(maps.Keys(counts)) {
		out = append(out, Share{Value: v, Count: counts[v], Share: ratio(counts[v], total).Value})
	}
	slices.SortStableFunc(out, func(a, b Share) int { return cmp.Compare(b.Count, a.Count) })
	return out
}

// headline tells what happened to a dependency in one line: how many of
// its operations did not return and how, what its failed attempts got,
// the load its retries and hedges added, the budget's and the throttle's
// refusals, its findings and, when it hedged, its hedging, e.g. "inventory.internal: 45
// of 49 operations did not return: 30 max_attempts, 14 budget_exhausted,
// 1 deadline_exceeded; all failed attempts 503; 2.24× load; the budget
// refused 14 retries".
func headline(d *Dependency) string {
	parts := []string{fmt.Sprintf("all %s returned", Plural(d.Operations, "operation"))}
	if d.NotReturned > 0 {
		list := make([]string, len(d.Outcomes))
		for i, o := range d.Outcomes {
			list[i] = fmt.Sprintf("%d %s", o.Count, o.Value)
		}
		parts[0] = fmt.Sprintf("%d of %s did not return: %s", d.NotReturned, Plural(d.Operations, "operation"), strings.Join(list, ", "))
	}
	switch len(d.FailedAttempts) {
	case 0:
		parts = append(parts, "no failed attempt")
	case 1:
		parts = append(parts, "all failed attempts "+d.FailedAttempts[0].Value)
	default:
		failed := 0
		list := make([]string, len(d.FailedAttempts))
		for i, f := range d.FailedAttempts {
			list[i] = fmt.Sprintf("%s %d", f.Value, f.Count)
			failed += f.Count
		}
		parts = append(parts, fmt.Sprintf("%d failed attempts: %s", failed, strings.Join(list, ", ")))
	}
	parts = append(parts, strconv.FormatFloat(d.Load, 'f', -1, 64)+"× load")
	if d.BudgetRefused > 0 {
		parts = append(parts, "the budget refused "+Plural(d.BudgetRefused, "retry"))
	}
	if d.ThrottleRefused > 0 {
		asked := d.Attempts + d.ThrottleRefused
		parts = append(parts, fmt.Sprintf("the throttle refused %d of %s (%.1f%%)", d.ThrottleRefused,
			Plural(asked, "request"), 100*float64(d.ThrottleRefused)/float64(asked)))
	}
	if d.Findings > 0 {
		parts = append(parts, Plural(d.Findings, "finding"))
	}
	if d.Hedging != nil {
		parts = append(parts, HedgingFigures(d.Hedging))
	}
	return DependencyLabel(d.Name) + ": " + strings.Join(parts, "; ")
}

// DependencyLabel is how the reports write a dependency's name, "" as
// "(no server.address)", the last attribute that could have named it.
func DependencyLabel(name string) string {
	if name == "" {
		return "(no " + keyServerAddress + ")"
	}
	return name
}

// HedgingFigures are a dependency's hedge rate, its hedge win rate and
// the hedges it refused, by reason.
func HedgingFigures(h *DependencyHedging) string {
	refused := "none"
	if len(h.Refused) > 0 {
		parts := make([]string, len(h.Refused))
		for i, r := range h.Refused {
			parts[i] = fmt.Sprintf("%s %d", dashed(r.Value), r.Count)
		}
		refused = strings.Join(parts, ", ")
	}
	return fmt.Sprintf("hedge rate %.3f (%d of %s), hedge win rate %.3f (%d of %d hedged), hedges refused: %s",
		h.HedgeRate.Value, h.HedgeRate.Count, Plural(h.HedgeRate.Total, "operation"),
		h.WinRate.Value, h.WinRate.Count, h.WinRate.Total, refused)
}

// hedging sums up the hedges of one dependency's operations; nil when none
// hedged or refused a hedge.
func hedging(ops []Operation) *DependencyHedging {
	var hedgedOps, won, refusals int
	refused := map[string]int{}
	for i := range ops {
		op := &ops[i]
		if hedged(op) {
			hedgedOps++
			if w := winner(op); w >= 0 && op.Attempts[w].IsHedge() {
				won++
			}
		}
		for _, e := range op.HedgeEvents {
			if e.Event == attrs.EventHedgeRefused {
				refused[e.Reason]++
				refusals++
			}
		}
	}
	if hedgedOps == 0 && refusals == 0 {
		return nil
	}
	return &DependencyHedging{
		HedgeRate: ratio(hedgedOps, len(ops)),
		WinRate:   ratio(won, hedgedOps),
		Refused:   shares(refused, vocabulary(attrs.Reasons()), refusals),
	}
}

// Result is an attempt's result in a word: its status, its error class,
// both ("503 + timeout"), or "no result".
func (at *Attempt) Result() string {
	var parts []string
	if at.StatusCode != nil {
		parts = append(parts, strconv.FormatInt(*at.StatusCode, 10))
	}
	if at.ErrorClass != "" {
		parts = append(parts, at.ErrorClass)
	}
	if len(parts) == 0 {
		return "no result"
	}
	return strings.Join(parts, " + ")
}

func dashed(s string) string {
	if s == "" {
		return "-"
	}
	return s
}
