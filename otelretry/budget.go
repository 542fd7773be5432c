// Copyright The otelretry Authors
// SPDX-License-Identifier: Apache-2.0

package otelretry

import (
	"cmp"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/otelretry/otelretry-go/attrs"
	"github.com/otelretry/otelretry-go/internal/hostname"
)

// Budget defaults.
const (
	defaultBudgetTokens     = 6
	defaultBudgetTokenRatio = 0.5
	defaultBudgetMaxHosts   = 10000
	defaultBudgetPushback   = time.Second
	// defaultBudgetIdleEviction is how long a kept host must go without an
	// answer the budget counts before a full table may forget it to make
	// room for a new host (see Budget, Hosts).
	defaultBudgetIdleEviction = 10 * time.Minute
)

// Budget limits (a token's cost, tokenCost, is the loans').
const (
	maxBudgetTokens = 1000 // as gRPC's maxTokens
	// maxPushbackHold bounds how long one answer holds back the retries of
	// other operations: a host stays in the table while it is held, so an
	// unbounded hint could pin entries for days.
	maxPushbackHold = time.Minute
	// minIdleEviction is the shortest IdleEviction: minutes, not
	// seconds, so that forgetting hosts cannot refill a host's tokens at a
	// rate that matters, and no shorter than the longest hold.
	minIdleEviction = time.Minute
)

// errInvalidBudgetSetting is reported through otel.Handle, wrapped with the
// setting and its value, when WithBudget is given a Budget with an
// out-of-range setting, which reads as its default.
var errInvalidBudgetSetting = errors.New("otelretry: budget setting ignored")

// Budget bounds retries to each dependency (a host, by default) so that
// retries cannot multiply the load on a dependency that is failing, for a
// fleet of clients as much as for one: each replica's Budget holds on its
// own, whatever its rate.
//
// It is gRPC's retry throttling (gRFC A6) per host, with the count floored
// at the threshold:
//
//   - A host starts with Tokens tokens (default 6), the most it holds.
//   - An attempt that fails in a way the policy counts against the host (a
//     status it retries, 408, 429, 502, 503 and 504 by default, or a
//     transport error other than the caller's cancellation) costs one token,
//     a timeout too: AWS's quota charges timeouts double, which here would
//     leave a fresh client one retry for a slow host, for a fleet bound
//     that holds without it.
//   - A hedge (WithHedging) takes one token when it is admitted, before
//     its preparation starts, and gives it back if it is not sent or never
//     leaves the client (canceled while it waits for a connection). It is
//     a retry sent early: a failure heard while it (or the attempt it
//     hedged) is still in flight costs nothing, that attempt being its
//     retry, paid for; the race's last failure is charged as any other.
//     So each request beyond an operation's first costs one token, and
//     hedges and retries share one allowance.
//   - A 2xx or 3xx answer gives back TokenRatio tokens (default 0.5),
//     up to the most. Other answers (a 404, a 500 not retried) change nothing.
//   - A retry, or a hedge, is admitted only if the host holds more than
//     half its tokens (3) once it was charged: a retry's failure is charged
//     and its admission decided in one step, and a hedge's token is taken
//     in the step that admits it, so that operations in flight together
//     cannot all pass on the same tokens. A failure never takes the count
//     below half: below it every retry is refused anyway, and a debt would
//     only delay recovery. Nothing goes below half.
//   - Nothing is earned from the passage of time, but for what a full
//     host table grants by forgetting an idle host (see Hosts).
//
// So in an outage a fresh host's hedges and retries together are no more
// than its retries alone, and when every answer is late but succeeds, the
// hedges sent are at most the tokens above half plus TokenRatio for
// every success counted: about every other operation, never more.
//
// With the defaults: a fresh host's first two failures leave 5 and 4 tokens
// and are retried; the third leaves 3 and is not. So a fresh client still
// follows the seed timeline (503, 503, 200: three calls, return), and in a
// sustained outage every client makes two retries at most, however slow it
// is: a client that sends k operations during the outage makes at most
// (k+2)/k attempts per operation, at most 1.2 for k ≥ 10. Retries stop
// while more than one attempt in three fails evenly (a failure costs twice
// what a success gives back). The floor forgets the failures before the
// count last sat on it, so a failure after three successes in a row is
// retried whatever came before: with half the attempts failing, in runs of
// three or at random, one operation in five or in eight retries. Whatever
// the mix, a host's retries and hedges stay within the tokens above half
// plus TokenRatio for every success. After an outage (3 tokens) three
// successes (4.5) let the next failure be retried (3.5): 15 s later for a
// client sending one operation every 5 s, 3 s later at one per second.
//
// Pushback: a Retry-After on any answer other than a 2xx or 3xx holds back
// the retries, never the first attempts, of every operation to that host
// through this Budget until it passes (at most a minute), those already
// pausing when it came included. The operation that received it pauses at
// least that long, so its own retry is not held.
// A 429 without Retry-After holds retries for Pushback (default 1 s)
// from its arrival, the operation that received it included: with the
// default backoff it returns the 429 rather than retry sooner.
//
// Hosts: the Budget keeps at most MaxHosts (default 10 000) hosts
// whose state differs from a fresh host's (tokens spent, or a hold). A host
// whose state equals a fresh one's is not kept, so forgetting it grants
// nothing. A host with state is forgotten only to make room: when the
// table is full and a host not in it needs a place, the kept host idle
// longest is forgotten if it has been idle, with no answer the budget
// counts (a success, a failure, a hold), for at least IdleEviction (10
// minutes by default); one forgotten for a new host's hedges gets its
// place back if that host needs no place once its last hedge settled
// and the forgotten one did not come back meanwhile (an answer, or a
// hedge of its own: it comes back fresh, as any forgotten host). While the table has room nothing is forgotten. While every kept host was active within that
// period, a host not in the table is refused every retry (fail closed)
// until a kept host recovers or goes idle. A forgotten host that comes
// back starts as a fresh host. That is all that idleness can earn, and it
// bounds what a caller who chooses the hosts (webhook or callback URLs)
// can gain: the host that takes a forgotten host's place is active then,
// so it can be forgotten only a full period later, and forgetting grants
// at most one fresh host's retries (two by default) per slot per period.
// Such a caller can keep new hosts refused only by keeping every one of
// its kept hosts active. A kept host takes about 190 bytes plus its key
// (the table's growth included);
// record and admit take amortized constant time, but for hedges admitted
// and not yet judged: settling a hedge's token takes time in the host's
// open loans, and making room passes over the hosts that lend one.
//
// A refused retry ends the operation with decision budget_exhausted and
// reason budget (tokens), pushback (a hold) or host_limit (a full table);
// a refused hedge is recorded with the same reasons, and the attempt in
// flight goes on.
//
// The zero Budget is ready to use and has the default settings: a setting
// left at its zero value reads as its default (&Budget{Tokens: 10} tunes
// one). A setting out of its range reads as its default too, and WithBudget
// reports it through otel.Handle as NewTransport applies it, reading the
// settings as they are then.
// Set the settings before passing the Budget to WithBudget, and do not
// change them after.
//
// A Budget is safe for concurrent use. Share one between Transports with
// WithBudget to bound their combined retries.
type Budget struct {
	// Tokens is the tokens of a fresh host, from 1 to 1000 (gRPC's
	// maxTokens). A retry needs more than half of them, and each failure
	// costs one, so a fresh host gets ⌈n/2⌉−1 retries before any success.
	// Default 6 (two retries).
	Tokens int
	// TokenRatio is the tokens a 2xx or 3xx answer gives back, from 0.001
	// to 1 (gRPC's tokenRatio, to three decimals). Retries stop while more
	// than r/(1+r) of the attempts fail evenly (the floor at half forgets
	// older failures: see Budget). Default 0.5.
	TokenRatio float64
	// MaxHosts is how many hosts with state the Budget keeps, at least 1.
	// Past it, a new host's retries are refused (reason host_limit) unless
	// a kept host has been idle for IdleEviction, which is then forgotten
	// to make room. Default 10 000. It bounds the Budget's table only: a
	// Throttle and a Transport's hedge delays keep tables of their own, of
	// up to 10 000 dependencies each (docs/budget.md, docs/hedging.md).
	MaxHosts int
	// Pushback is how long a 429 without Retry-After holds back retries to
	// its host, at most a minute; a negative Pushback holds nothing.
	// Default 1 s.
	Pushback time.Duration
	// IdleEviction is how long a kept host must go without an answer the
	// budget counts (a success, a failure, or a Retry-After or 429 hold)
	// before a full table may forget it to make room for a new host, at
	// least a minute. A forgotten host that comes back starts as a fresh
	// host. Default 10 minutes.
	IdleEviction time.Duration
	// Key maps a request to its dependency. Default: the request's host
	// (URL host, else Host header, split from its port as net/http splits
	// them), its ASCII letters in lower case, without a trailing dot, an
	// IP address in its one written form ([0:0::1] is [::1],
	// [::ffff:127.0.0.1] is 127.0.0.1), and without the scheme's default
	// port (a port is read as a number: ":0443" is ":443"); a Unicode host
	// and its A-label are two. A request it maps to "" shares the
	// budget of "", and the hedge rate and the throttle count it under its
	// host. It runs once per operation, under no lock of otelretry's; a
	// panic in it goes on to the caller, and it must not call the
	// Budget's Available, which calls it.
	Key func(*http.Request) string

	// stateful is len(hosts), read without the lock: while no host has
	// state, a success has nothing to change.
	stateful atomic.Int64

	mu       sync.Mutex
	hosts    map[string]hostBudget
	loans    budgetLoan // the last loan's id
	origin   time.Time  // the clock reading offsets are counted from
	begun    bool       // origin is set
	wheel    holdWheel
	activity activityList // the kept hosts, the one idle longest first
	// displaced are the hosts forgotten to make room for a host that took
	// a loan with no place of its own, by that host: kept until its last
	// loan settles, so that a host that then needs no place gives the
	// forgotten host its place back (a host is forgotten only to make
	// room for one that keeps it).
	displaced map[string]displacedHost
}

// displacedHost is a host forgotten to make room for a loan's host: its
// key, its state and its node's last activity.
type displacedHost struct {
	key  string
	e    hostBudget
	last time.Duration
}

// hostBudget is one host's state. Times are offsets from Budget.origin.
type hostBudget struct {
	milli int64         // tokens, in thousandths, in [maxMilli/2, maxMilli]
	hold  time.Duration // retries held back until then; 0 or past: none
	// queued is the second of the wheel slot that lists this host (0: none).
	// Only a host with all its tokens and a hold is listed: the hold's end
	// is the only thing that can make it fresh without a new answer.
	queued int64
	node   int // the host's node in Budget.activity
	// loans are the hedges admitted on the host's tokens and not yet
	// settled: spent once a sent hedge's verdict came, or given back.
	loans hostLoans
}

// invalidSettings reports the settings out of their range, which read as
// their defaults.
func (b *Budget) invalidSettings() error {
	var errs []error
	invalid := func(setting string, value any, want string) {
		errs = append(errs, fmt.Errorf("%w: Budget.%s %v: want %s", errInvalidBudgetSetting, setting, value, want))
	}
	if b.Tokens != 0 && (b.Tokens < 1 || b.Tokens > maxBudgetTokens) {
		invalid("Tokens", b.Tokens, "1 to 1000")
	}
	if b.TokenRatio != 0 && !validRatio(b.TokenRatio) {
		invalid("TokenRatio", b.TokenRatio, "0.001 to 1")
	}
	if b.MaxHosts < 0 {
		invalid("MaxHosts", b.MaxHosts, "at least 1")
	}
	if b.Pushback > maxPushbackHold {
		invalid("Pushback", b.Pushback, "at most 1m0s")
	}
	if b.IdleEviction != 0 && b.IdleEviction < minIdleEviction {
		invalid("IdleEviction", b.IdleEviction, "at least 1m0s")
	}
	return errors.Join(errs...)
}

// validRatio reports whether r is a TokenRatio in range, to three
// decimals.
func validRatio(r float64) bool { return r >= 0.001 && r <= 1 && int64(r*1000+0.5) >= 1 }

// hostOf is r's dependency (docs/budget.md): the host as its URL writes
// it, one name however it is spelled (hostname.One), the port only when it is
// not the scheme's default, so that https://api.test, https://API.test.,
// https://api.test:443 and https://api.test:0443 share one budget, hedge
// rate and throttle. Host and port are split as net/http splits them to
// dial (splitPort).
func hostOf(r *http.Request) string {
	host, scheme := r.Host, ""
	if r.URL != nil {
		if r.URL.Host != "" {
			host = r.URL.Host
		}
		scheme = r.URL.Scheme
	}
	written, port := splitPort(host)
	name := written
	if strings.HasPrefix(name, "[") && strings.HasSuffix(name, "]") {
		name = name[1 : len(name)-1]
	}
	if name = hostname.One(name); strings.IndexByte(name, ':') >= 0 {
		if len(written) == len(name)+2 && written[0] == '[' && written[1:len(written)-1] == name {
			name = written // bracketed as it is to be: no copy
		} else {
			name = "[" + name + "]"
		}
	}
	switch {
	case port == "", scheme == "https" && port == "443", scheme == "http" && port == "80":
		return name
	case len(name)+len(":")+len(port) == len(host) && host[:len(name)] == name:
		return host // as written: no copy
	}
	return name + ":" + port
}

// splitPort splits host as url.URL's Hostname and Port do, which net/http
// dials: at the last colon when only digits follow it (so
// "2001:db8::abcd" and "fe80::1%en0" have no port), the name as written,
// in its brackets if any; the port as a number writes it, without the
// zeros that may lead it (net/http dials "api.test:080" as port 80), ""
// when there is none or it is empty.
func splitPort(host string) (name, port string) {
	i := strings.LastIndexByte(host, ':')
	if i < 0 || i+1 < len(host) && !isDigits(host[i+1:]) {
		return host, ""
	}
	name, port = host[:i], host[i+1:]
	if trimmed := strings.TrimLeft(port, "0"); trimmed != port {
		port = cmp.Or(trimmed, "0")
	}
	return name, port
}

// key returns the budget key of r (Key; default the host).
func (b *Budget) key(r *http.Request) string {
	if b.Key == nil {
		return hostOf(r)
	}
	return b.Key(r)
}

// tokens returns the tokens of a fresh host, in thousandths.
func (b *Budget) tokens() int64 {
	if b.Tokens < 1 || b.Tokens > maxBudgetTokens {
		return defaultBudgetTokens * 1000
	}
	return int64(b.Tokens) * 1000
}

// ratio returns the tokens a success gives back, in thousandths.
func (b *Budget) ratio() int64 {
	if !validRatio(b.TokenRatio) {
		return defaultBudgetTokenRatio * 1000
	}
	return int64(b.TokenRatio*1000 + 0.5)
}

// hostLimit returns how many hosts with state the Budget keeps.
func (b *Budget) hostLimit() int {
	if b.MaxHosts < 1 {
		return defaultBudgetMaxHosts
	}
	return b.MaxHosts
}

// idleAfter returns how long a host must be idle before a full table may
// forget it.
func (b *Budget) idleAfter() time.Duration {
	if b.IdleEviction < minIdleEviction {
		return defaultBudgetIdleEviction
	}
	return b.IdleEviction
}

// hold429 returns how long a 429 without Retry-After holds retries.
func (b *Budget) hold429() time.Duration {
	switch {
	case b.Pushback < 0:
		return 0
	case b.Pushback == 0 || b.Pushback > maxPushbackHold:
		return defaultBudgetPushback
	}
	return b.Pushback
}

// budgetObservation is one attempt's answer, as the budget sees it.
type budgetObservation struct {
	success bool // a 2xx or 3xx answer
	// failure: a failure the policy counts against the host: a status the
	// policy retries or a transport error other than the caller's cancel.
	failure bool
	// timeout: the failure was a timeout. The model charges it like any
	// failure (see Budget); the transport reports it for models that
	// would not.
	timeout  bool
	status   int           // the status, 0 without a response
	pushback time.Duration // the answer's retry hint (Retry-After, retry-after-ms), 0 without one
	// hinted: the answer carried a hint, 0 included: a 429 that says how
	// long to wait is held for that long, not for the 429 hold.
	hinted bool
	// errored: no answer, a transport error (the caller's cancellation
	// excluded); the throttle counts it.
	errored bool
	// ownToken: the retry asked on follows no failure charged with it, so
	// it takes a token of its own on its way in, as a hedge does: the
	// resend a state check's not_applied asks for (its write was charged
	// as it ended, and the host may have earned that token back since).
	ownToken bool
}

// resendCost is what the resend a state check's not_applied asks for
// costs (see ownToken); nothing is counted as an answer.
var resendCost = budgetObservation{ownToken: true}

// retriedInFlight is o when an attempt already in flight retries it (a
// hedge, which took its token when admitted, or the attempt it hedged):
// its failure costs nothing more; its hint holds all the same.
func (o budgetObservation) retriedInFlight() budgetObservation {
	o.failure = false
	return o
}

// neutral reports whether o changes nothing (a 404, a 500 not retried,
// the zero observation of an answer that tells the budget nothing).
func (b *Budget) neutral(o budgetObservation) bool {
	return !o.success && !o.failure && b.holdFor(o) <= 0
}

// record reports one attempt's answer for key at now (a time.Now reading),
// when no retry is asked on it (see retry).
func (b *Budget) record(key string, now time.Time, o budgetObservation) {
	if b.neutral(o) || (o.success && b.stateful.Load() == 0) {
		return // nothing to count, or every host is fresh and a success leaves it so
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	at := b.offset(now)
	b.advance(at)
	b.recordLocked(key, at, o)
}

// recordLocked counts o for key at at. The caller holds b.mu.
func (b *Budget) recordLocked(key string, at time.Duration, o budgetObservation) {
	if b.neutral(o) {
		return
	}
	e, kept := b.hosts[key]
	if !kept {
		// A host kept aside that answers came back: as any forgotten host,
		// it starts from a fresh host's state, which this answer counts
		// on; what was kept aside of it is stale.
		b.forgetDisplaced(key)
		if o.success || (len(b.hosts) >= b.hostLimit() && !b.evictIdlest(at)) {
			// A success leaves a fresh host fresh. With no room, the host's
			// retries are refused (admitLocked) while it is not kept, so
			// there is nothing it could have spent.
			return
		}
		e = hostBudget{milli: b.tokens()}
		// The key may share memory with the request's whole URL; keep
		// only its own bytes.
		key = strings.Clone(key)
	}
	step := b.step(o)
	e.milli = step.apply(e.milli)
	e.loans.count(step)
	if hold := b.holdFor(o); hold > 0 {
		e.hold = max(e.hold, at+hold)
	}
	b.keep(key, e, kept, true, at)
}

// step is what counting o does to a host's tokens: a success's ratio up
// to the ceiling, a failure's token down to the floor at half.
func (b *Budget) step(o budgetObservation) tokenStep {
	switch {
	case o.success:
		return tokenStep{shift: b.ratio(), lo: -unbounded, hi: b.tokens()}
	case o.failure:
		return tokenStep{shift: -tokenCost, lo: b.tokens() / 2, hi: unbounded}
	}
	return unchanged
}

// holdFor is how long an answer holds back the retries to its host: its
// Retry-After, or the 429 hold, at most maxPushbackHold; none for a
// success.
func (b *Budget) holdFor(o budgetObservation) time.Duration {
	if o.success {
		return 0
	}
	hold := o.pushback
	if !o.hinted && o.status == http.StatusTooManyRequests {
		hold = b.hold429()
	}
	return min(hold, maxPushbackHold)
}

// keep stores a host's new state at, or drops it when it equals a fresh
// host's (and lends no token: a hedge gives back to the state it took
// from), and notes its activity: an answer counted (active), or a loan
// taken or settled, which is no answer and leaves a kept host as idle as
// it was.
func (b *Budget) keep(key string, e hostBudget, kept, active bool, at time.Duration) {
	if kept {
		// The table's copy: the caller's may hold a request's URL, and a
		// map's string key is replaced by the one it is stored under.
		key = b.activity.nodes[e.node].key
	}
	if e.milli == b.tokens() && e.queued == 0 && len(e.loans.open) == 0 {
		if e.hold <= at {
			b.drop(key, e, kept)
			return
		}
		b.wheel.add(key, &e)
	}
	switch {
	case !kept:
		e.node = b.activity.push(key, at)
	case active:
		b.activity.touch(e.node, at)
	}
	b.store(key, e, kept)
}

// retry charges failed, the answer a retry is asked on (record's rules;
// the zero observation charges nothing), and decides in the same step
// whether that retry for key may start at startAt (now plus the pause the
// policy chose): "" when
// admitted, else the refusal's reason. One step, so that operations
// failing together cannot all be admitted on the tokens the others'
// failures are about to take.
func (b *Budget) retry(key string, now, startAt time.Time, failed budgetObservation) attrs.Reason {
	b.mu.Lock()
	defer b.mu.Unlock()
	at := b.offset(now)
	b.advance(at)
	b.recordLocked(key, at, failed)
	e, kept := b.hosts[key]
	switch {
	case !kept && len(b.hosts) >= b.hostLimit() && !b.evictable(at):
		return attrs.ReasonHostLimit
	case !kept:
		return ""
	case e.hold > b.offset(startAt):
		return attrs.ReasonPushback
	case e.milli <= b.tokens()/2:
		return attrs.ReasonBudget
	}
	return ""
}

// held reports whether key's host is on hold at now: a retry admitted
// before a hold came, whose call is due now, is held by it too.
func (b *Budget) held(key string, now time.Time) bool {
	if b.stateful.Load() == 0 {
		return false // no host has state: none is on hold
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	at := b.offset(now)
	b.advance(at)
	e, kept := b.hosts[key]
	return kept && e.hold > at
}

// hedge takes the token of a hedge for key about to be prepared at now:
// its loan when taken, else the refusal's reason: a hold, a full table,
// or too few tokens for the host to hold more than half once it is taken.
// A hedge follows no failure, so it pays on its way in; settleLoan ends
// the loan, spent when the hedge reached its host (or may have), given
// back when it was not sent or never left the client.
func (b *Budget) hedge(key string, now time.Time) (budgetLoan, attrs.Reason) {
	return b.lend(key, now, now)
}

// lend takes, at now, the token of a request for key that follows no
// failure charged with it, to start at startAt (a hedge, a state check's
// resend: see ownToken), as a loan: settleLoan spends it when the request
// is sent, or gives it back. It returns the loan, else the refusal's
// reason.
func (b *Budget) lend(key string, now, startAt time.Time) (budgetLoan, attrs.Reason) {
	b.mu.Lock()
	defer b.mu.Unlock()
	at := b.offset(now)
	b.advance(at)
	e, kept, reason := b.payable(key, at, b.offset(startAt))
	if reason != "" {
		return 0, reason
	}
	b.loans++
	if !kept {
		key = strings.Clone(key) // see recordLocked
		if len(b.hosts) >= b.hostLimit() {
			b.displace(key, at)
		}
	}
	e.loans.lend(b.loans, e.milli)
	e.milli -= tokenCost
	b.keep(key, e, kept, false, at)
	return b.loans, ""
}

// payable is key's host at at, whether it is kept, and whether a request
// that pays its own token on its way in (a hedge, a state check's resend)
// may take one to start at start: "" when it may, else the reason it may
// not (a hold then, too few tokens for the host to hold more than half
// once it is taken, or a full table). The caller holds b.mu.
func (b *Budget) payable(key string, at, start time.Duration) (hostBudget, bool, attrs.Reason) {
	e, kept := b.hosts[key]
	if !kept {
		e = hostBudget{milli: b.tokens()}
	}
	switch {
	case e.hold > start:
		return e, kept, attrs.ReasonPushback
	case e.milli-tokenCost <= b.tokens()/2:
		return e, kept, attrs.ReasonBudget
	case !kept && len(b.hosts) >= b.hostLimit() && !b.evictable(at):
		return e, kept, attrs.ReasonHostLimit
	}
	return e, kept, ""
}

// displace forgets the idlest host (evictable at at) to make room for
// host, which takes a loan, and keeps it aside until host's last loan
// settles (see displaced). The caller holds b.mu.
func (b *Budget) displace(host string, at time.Duration) {
	key, e, ok := b.idlest(at)
	if !ok {
		return
	}
	last := b.activity.nodes[e.node].last
	b.drop(key, e, true)
	if b.displaced == nil {
		b.displaced = map[string]displacedHost{}
	}
	b.displaced[host] = displacedHost{key: key, e: e, last: last}
}

// settleDisplaced decides, once one of host's loans settled, what becomes
// of the host forgotten to make room for it: nothing while host still
// lends; forgotten for good once host keeps its place with no loan (its
// state differs from a fresh host's); its place back when host needs none.
// The caller holds b.mu.
func (b *Budget) settleDisplaced(host string) {
	d, ok := b.displaced[host]
	if !ok {
		return
	}
	e, kept := b.hosts[host]
	if kept && len(e.loans.open) > 0 {
		return
	}
	delete(b.displaced, host)
	if !kept {
		b.restore(d)
	}
}

// restore gives d its place back if none else took it, where its last
// activity puts it. The caller holds b.mu.
func (b *Budget) restore(d displacedHost) {
	if _, back := b.hosts[d.key]; back || len(b.hosts) >= b.hostLimit() {
		return
	}
	d.e.node = b.activity.pushAt(d.key, d.last)
	b.store(d.key, d.e, false)
}

// giveBack returns loan's token to key: its hedge was not sent.
func (b *Budget) giveBack(key string, loan budgetLoan, now time.Time) {
	b.settleLoan(key, loan, now, false)
}

// spent notes that loan's hedge was sent and its host saw it (its verdict
// came): its token is spent.
func (b *Budget) spent(key string, loan budgetLoan, now time.Time) {
	b.settleLoan(key, loan, now, true)
}

// settleLoan ends loan, a hedge's token lent by key: spent (sent), its
// take is the host's for good; given back, the host holds what it would
// had that hedge never been admitted (see hostLoans); a host forgotten to
// make room for key's loans gets its place back once key needs none (see
// displaced). A host that lends is never forgotten (see keep
// and idlest), so its loan is there to settle.
func (b *Budget) settleLoan(key string, loan budgetLoan, now time.Time, sent bool) {
	b.mu.Lock()
	defer b.mu.Unlock()
	at := b.offset(now)
	b.advance(at)
	if e, kept := b.hosts[key]; kept {
		if milli, ok := e.loans.settle(loan, sent); ok {
			e.milli = milli
			b.keep(key, e, true, false, at)
		}
	}
	b.settleDisplaced(key)
}

// Available returns how many retries in a row r's host may take now if
// every attempt fails: the default 6 tokens allow two for a fresh host; 0 while a hold or a full table refuses them.
func (b *Budget) Available(r *http.Request) int {
	key := b.key(r)
	b.mu.Lock()
	defer b.mu.Unlock()
	at := b.offset(time.Now())
	b.advance(at)
	full := b.tokens()
	e, kept := b.hosts[key]
	switch {
	case !kept && len(b.hosts) >= b.hostLimit() && !b.evictable(at):
		return 0
	case !kept:
		e = hostBudget{milli: full}
	case e.hold > at:
		return 0
	}
	// The i-th failure leaves milli - i×tokenCost, retried while above
	// half.
	above := e.milli - full/2
	return int(max((above+tokenCost-1)/tokenCost-1, 0))
}

// offset converts a clock reading to an offset from an origin set
// budgetOriginLead before the first one seen. Readings come out of order:
// an operation hands in when its answer came after its hooks ran, so a
// reading may precede the first seen by as long as an operation lasts.
// Counted from the first seen and clamped to it, an answer that came
// before it held its host later than its Retry-After said, past the
// operation's own retry, which it then refused. A reading that precedes
// even the origin counts as the origin: a negative offset would be
// earlier than a host's hold of 0, no hold, and read as held.
func (b *Budget) offset(t time.Time) time.Duration {
	if !b.begun {
		b.origin, b.begun = t.Add(-budgetOriginLead), true
	}
	return max(t.Sub(b.origin), 0)
}

// budgetOriginLead is how long before the first reading a Budget counts
// from: longer than any operation that hands in an earlier reading lasts.
const budgetOriginLead = 24 * time.Hour

func (b *Budget) store(key string, e hostBudget, kept bool) {
	if b.hosts == nil {
		b.hosts = map[string]hostBudget{} // the zero Budget
	}
	b.hosts[key] = e
	if !kept {
		b.stateful.Store(int64(len(b.hosts)))
		b.forgetDisplaced(key)
	}
}

// forgetDisplaced drops what was kept aside of key (see displaced): key
// answered, or is back in the table by a loan, a newer state than the one
// kept aside.
func (b *Budget) forgetDisplaced(key string) {
	for host, d := range b.displaced {
		if d.key == key {
			delete(b.displaced, host)
		}
	}
}

func (b *Budget) drop(key string, e hostBudget, kept bool) {
	if kept {
		b.activity.remove(e.node)
		delete(b.hosts, key)
		b.stateful.Store(int64(len(b.hosts)))
	}
}

// evictable reports whether a full table may forget its idlest host at at:
// one that has been idle for the idle period and is not held. A held host
// answered within the longest hold (a minute), so only the shortest idle
// period can find one idle, in the second before the wheel drops it; it is
// kept until then, and the wheel never lists a forgotten host.
func (b *Budget) evictable(at time.Duration) bool {
	_, _, ok := b.idlest(at)
	return ok
}

// evictIdlest forgets the idlest host if the table may (evictable), and
// reports whether it did.
func (b *Budget) evictIdlest(at time.Duration) bool {
	key, e, ok := b.idlest(at)
	if ok {
		b.drop(key, e, true)
	}
	return ok
}

func (b *Budget) idlest(at time.Duration) (string, hostBudget, bool) {
	// A host that lends a token is never forgotten (see keep), and is
	// passed over: the hosts behind it may be idle.
	for n := b.activity.idlest(); n != nil && at-n.last >= b.idleAfter(); n = b.activity.after(n) {
		e, ok := b.hosts[n.key]
		switch {
		case ok && len(e.loans.open) > 0:
			continue
		case !ok || e.queued != 0 || e.hold > at:
			return "", hostBudget{}, false
		}
		return n.key, e, true
	}
	return "", hostBudget{}, false
}

// advance drops the hosts whose hold has ended by at and whose tokens are
// all back: their state is a fresh host's.
func (b *Budget) advance(at time.Duration) {
	b.wheel.advance(at, func(key string, sec int64) {
		e, ok := b.hosts[key]
		switch {
		case !ok || e.queued == 0:
			return // not listed (cannot happen: every listing is live)
		case e.queued > sec:
			b.wheel.list(key, e.queued) // a later turn of the same slot
			return
		}
		e.queued = 0
		switch {
		case len(e.loans.open) > 0:
			// Kept while it lends a token (see keep), which drops it once
			// none is lent.
		case e.milli == b.tokens() && e.hold <= at:
			b.drop(key, e, true)
			return
		case e.milli == b.tokens():
			b.wheel.add(key, &e) // the hold was extended
		}
		b.hosts[key] = e
	})
}

// holdWheel lists hosts by the second their hold ends, so that a host that
// becomes fresh when its hold ends is found in O(1): a timing wheel of one
// slot per second over more than the longest hold. A host is listed once,
// in the slot of its hostBudget.queued, and a listed host is dropped only
// when its listing is drained, so the wheel holds at most MaxHosts
// keys.
type holdWheel struct {
	slots   [wheelSlots][]string
	drained int64 // every second up to this one is drained
}

const wheelSlots = 64 // more seconds than maxPushbackHold, plus one

// add lists key, which must not be listed, for the second its hold ends.
func (w *holdWheel) add(key string, e *hostBudget) {
	e.queued = max(int64((e.hold+time.Second-1)/time.Second), w.drained+1)
	w.list(key, e.queued)
}

func (w *holdWheel) list(key string, sec int64) {
	w.slots[sec%wheelSlots] = append(w.slots[sec%wheelSlots], key)
}

// advance drains the slots of the seconds that ended by at, calling f with
// each key listed there and the slot's second. f may list keys again.
func (w *holdWheel) advance(at time.Duration, f func(key string, sec int64)) {
	now := int64(at / time.Second)
	if now <= w.drained {
		return
	}
	from := max(w.drained+1, now-wheelSlots+1)
	w.drained = now
	for sec := from; sec <= now; sec++ {
		i := sec % wheelSlots
		slot := w.slots[i]
		if len(slot) == 0 {
			continue
		}
		w.slots[i] = nil
		for _, key := range slot {
			f(key, sec)
		}
		clear(slot) // release the keys
		if w.slots[i] == nil {
			w.slots[i] = slot[:0] // reuse the array unless f listed keys
		}
	}
}

// activityList orders the kept hosts by their last counted answer, the one
// idle longest first, so that a full table finds the host it may forget in
// O(1). It is a doubly linked list threaded through a slice: touching,
// adding and removing a host take constant time and allocate nothing once
// the slice has grown to the table's size. Node 0 is the list's head, its
// next the idlest host and its prev the latest active; removed nodes are
// chained through next for reuse. Each kept host has one node, its
// hostBudget.node.
type activityList struct {
	nodes []activityNode
	free  int // the first removed node, 0: none
}

type activityNode struct {
	key        string
	last       time.Duration // offset of the host's last counted answer
	prev, next int
}

// push adds key, active at at, as the latest active host; it returns its
// node.
func (l *activityList) push(key string, at time.Duration) int {
	if len(l.nodes) == 0 {
		l.nodes = append(l.nodes, activityNode{}) // the head, linked to itself
	}
	i := l.free
	if i != 0 {
		l.free = l.nodes[i].next
	} else {
		i = len(l.nodes)
		l.nodes = append(l.nodes, activityNode{})
	}
	l.nodes[i] = activityNode{key: key, last: l.latest(at)}
	l.linkLast(i)
	return i
}

// pushAt adds key, last active at last, in its place by that time; it
// returns its node. Only a host forgotten when it was the idlest comes
// back so (see Budget.restore): the hosts before it are the few that lent
// a token then, passed over as it was taken.
func (l *activityList) pushAt(key string, last time.Duration) int {
	i := l.push(key, last)
	l.unlink(i)
	l.nodes[i].last = last
	next := l.nodes[0].next
	for next != 0 && l.nodes[next].last <= last {
		next = l.nodes[next].next
	}
	prev := l.nodes[next].prev
	l.nodes[i].prev, l.nodes[i].next = prev, next
	l.nodes[prev].next = i
	l.nodes[next].prev = i
	return i
}

// touch marks node i active at at, as the latest active host.
func (l *activityList) touch(i int, at time.Duration) {
	if l.nodes[0].prev != i {
		l.unlink(i)
		l.nodes[i].last = l.latest(at)
		l.linkLast(i)
		return
	}
	l.nodes[i].last = max(l.nodes[i].last, at)
}

// latest returns at, or the latest active host's time when that is later:
// readings may arrive a little out of order (see Budget.offset), and the
// list stays sorted by taking the later one, which delays forgetting the
// host by as much.
func (l *activityList) latest(at time.Duration) time.Duration {
	if last := l.nodes[0].prev; last != 0 {
		return max(at, l.nodes[last].last)
	}
	return at
}

// remove unlinks node i and keeps it for reuse, releasing its key.
func (l *activityList) remove(i int) {
	l.unlink(i)
	l.nodes[i] = activityNode{next: l.free}
	l.free = i
}

// idlest returns the node of the host idle longest, nil without hosts.
func (l *activityList) idlest() *activityNode {
	if len(l.nodes) == 0 || l.nodes[0].next == 0 {
		return nil
	}
	return &l.nodes[l.nodes[0].next]
}

// after returns the node of the host active next after n's, nil when n's is
// the latest.
func (l *activityList) after(n *activityNode) *activityNode {
	if n.next == 0 {
		return nil
	}
	return &l.nodes[n.next]
}

func (l *activityList) linkLast(i int) {
	last := l.nodes[0].prev
	l.nodes[i].prev, l.nodes[i].next = last, 0
	l.nodes[last].next = i
	l.nodes[0].prev = i
}

func (l *activityList) unlink(i int) {
	n := &l.nodes[i]
	l.nodes[n.prev].next = n.next
	l.nodes[n.next].prev = n.prev
}
