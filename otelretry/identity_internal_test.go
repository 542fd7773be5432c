// Copyright The otelretry Authors
// SPDX-License-Identifier: Apache-2.0

package otelretry

import (
	"context"
	"fmt"
	"net/http"
	"net/url"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"go.opentelemetry.io/otel/trace"
)

// An operation without WithOperationID gets a generated id on first use,
// and keeps it: spans, log records, errors and state checks all read the
// same one. Its attempts are numbered from 1.
func TestIdentityWithoutOperationIDGeneratesOneIDOnFirstUse(t *testing.T) {
	id := newIdentity(scopeOf(context.Background()), nil)
	if id.id != "" || id.repeat != 0 || id.redirects != 0 {
		t.Errorf("identity before use = %+v, want no id yet", id)
	}
	first := id.opID()
	if !regexp.MustCompile(`^op-[0-9a-f]{16}$`).MatchString(first) {
		t.Errorf("generated id %q, want op- and 16 hex digits", first)
	}
	if again := id.opID(); again != first {
		t.Errorf("opID changed from %q to %q", first, again)
	}
	if other := newIdentity(scopeOf(context.Background()), nil); other.opID() == first {
		t.Errorf("two operations share the generated id %q", first)
	}
	for n := 1; n <= 3; n++ {
		if got := id.attemptNumber(n); got != n {
			t.Errorf("attempt %d numbered %d", n, got)
		}
	}
}

// Under WithOperationID, every operation takes the caller's id, counts as
// a repeat of the ones made before it under the same context, and numbers
// its attempts on from theirs, so that request ids stay unique.
func TestIdentityUnderOperationIDCountsOperationsAndAttempts(t *testing.T) {
	ctx := WithOperationID(context.Background(), "order-7")
	var numbers []int
	for op := range 3 {
		id := newIdentity(scopeOf(ctx), nil)
		if id.opID() != "order-7" || id.repeat != op {
			t.Errorf("operation %d: id %q, repeat %d; want order-7 and %d", op, id.opID(), id.repeat, op)
		}
		numbers = append(numbers, id.attemptNumber(1), id.attemptNumber(2))
	}
	for i, n := range numbers {
		if n != i+1 {
			t.Fatalf("attempt numbers across the operations = %v, want 1 to 6", numbers)
		}
	}
}

// A redirect hop continues the operation it follows: its id, its attempt
// numbers counting on from the hops before, one more redirect, and no
// repeat, with WithOperationID (whose count of operations it leaves
// alone) and without.
func TestIdentityOfARedirectHopContinuesTheChain(t *testing.T) {
	first := newIdentity(scopeOf(context.Background()), nil)
	hop := newIdentity(scopeOf(context.Background()), newChain(&first, time.Now(), 2))
	if hop.opID() != first.opID() || hop.redirects != 1 || hop.repeat != 0 {
		t.Errorf("hop = %+v, want the first hop's id, 1 redirect, no repeat", hop)
	}
	if n := hop.attemptNumber(1); n != 3 {
		t.Errorf("the hop's first attempt numbered %d, want 3", n)
	}

	ctx := WithOperationID(context.Background(), "op-chain")
	sc := scopeOf(ctx)
	head := newIdentity(sc, nil)
	a1, a2 := head.attemptNumber(1), head.attemptNumber(2)
	next := newIdentity(sc, newChain(&head, time.Time{}, 2))
	if next.opID() != "op-chain" || next.repeat != 0 || next.redirects != 1 {
		t.Errorf("hop under WithOperationID = %+v", next)
	}
	if a3 := next.attemptNumber(1); a1 != 1 || a2 != 2 || a3 != 3 {
		t.Errorf("attempt numbers across the chain = %d, %d, %d; want 1, 2, 3", a1, a2, a3)
	}
	if again := newIdentity(sc, nil); again.repeat != 1 {
		t.Errorf("the operation after the chain counts %d operations before it, want 1 (a hop is no repeat)", again.repeat)
	}
}

// scopeOf honours what was added to the context since the nearest
// operation boundary (an attempt's context, a state check's) and nothing
// from above it: the caller's context gives an operation everything it
// carries; a hook's call inherits none of the calling operation's id,
// intent or result slots, and takes the ones the hook added, every slot
// the hook added included; a call from a hook of that call, again only
// its own.
func TestScopeOfHonoursWhatWasAddedSinceTheNearestBoundary(t *testing.T) {
	outerSlot, callerSlot := &Results{}, &Results{}
	outer := WithResults(WithIntent(WithOperationID(context.Background(), "outer"), Intent{Repeatable: true}), outerSlot)
	outer = WithResults(outer, callerSlot)
	// reported returns which of slots got a result reported to sc's slots.
	reported := func(sc scope, slots ...*Results) []bool {
		if sc.results != nil {
			sc.results.report(OperationResult{OperationID: "probe"})
		}
		got := make([]bool, len(slots))
		for i, r := range slots {
			ops := r.Operations()
			got[i] = len(ops) > 0 && ops[len(ops)-1].OperationID == "probe"
			r.ops = nil
		}
		return got
	}
	sc := scopeOf(outer)
	if sc.nested() || sc.oc == nil || sc.oc.id != "outer" || !sc.intent.Repeatable || !slices.Equal(reported(sc, outerSlot, callerSlot), []bool{true, true}) {
		t.Errorf("scope of the caller's context = %+v, want everything it carries, both slots", sc)
	}
	for name, hookCtx := range map[string]context.Context{
		"an attempt's context":     &attemptContext{Context: outer, a: &attempt{}},
		"the state check's lookup": lookupContext(outer, nil),
	} {
		sc := scopeOf(hookCtx)
		if !sc.nested() || sc.oc != nil || sc.intent != (Intent{}) || sc.results != nil {
			t.Errorf("scope of %s = %+v, want nested with nothing of the outer operation", name, sc)
		}
		own, also := &Results{}, &Results{}
		ctx := WithResults(WithOperationID(WithIntent(hookCtx, Intent{NoRetry: true}), "lookup-of-order-9"), own)
		ctx = WithResults(ctx, also)
		sc = scopeOf(ctx)
		if !sc.nested() || sc.oc == nil || sc.oc.id != "lookup-of-order-9" || sc.intent != (Intent{NoRetry: true}) ||
			!slices.Equal(reported(sc, own, also, outerSlot, callerSlot), []bool{true, true, false, false}) {
			t.Errorf("scope of %s with its own id, intent and slots = %+v; want those alone", name, sc)
		}
		// A call from a hook of that call: its own scope again.
		inner := &Results{}
		deeper := &attemptContext{Context: ctx, a: &attempt{}}
		if sc := scopeOf(deeper); sc.oc != nil || sc.intent != (Intent{}) || sc.results != nil {
			t.Errorf("scope of a hook's context within %s = %+v, want nothing", name, sc)
		}
		sc = scopeOf(WithResults(deeper, inner))
		if sc.oc != nil || sc.intent != (Intent{}) || !slices.Equal(reported(sc, inner, own, also, outerSlot), []bool{true, false, false, false}) {
			t.Errorf("scope of a hook's context within %s, with a slot = %+v; want that slot alone", name, sc)
		}
	}
	// A slot added twice gets the operation once.
	twice := &Results{}
	ctx := WithResults(WithResults(context.Background(), twice), twice)
	scopeOf(ctx).results.report(OperationResult{OperationID: "once"})
	if n := len(twice.Operations()); n != 1 {
		t.Errorf("a slot added twice got %d results, want 1", n)
	}
}

// WithOperationID ignores an empty id, and OperationIDFromContext reads
// back the one it set.
func TestWithOperationID(t *testing.T) {
	if ctx := WithOperationID(context.Background(), ""); ctx != context.Background() {
		t.Error("an empty id made a new context")
	}
	if id, ok := OperationIDFromContext(context.Background()); ok || id != "" {
		t.Errorf("id from a bare context = %q, %v", id, ok)
	}
	if id, ok := OperationIDFromContext(WithOperationID(context.Background(), "op-42")); !ok || id != "op-42" {
		t.Errorf("id = %q, %v; want op-42", id, ok)
	}
}

// RequestID is the operation id and the attempt number, as every signal
// records it.
func TestRequestID(t *testing.T) {
	if got := RequestID("op-42", 3); got != "op-42/attempt-3" {
		t.Errorf("RequestID = %q", got)
	}
}

// The repeat counter counts the operations of each request that ended
// under each parent span; full, it starts again empty, which can miss a
// repeat but never invents one.
func TestRepeatCounterCountsPerParentAndForgetsWhenFull(t *testing.T) {
	key := func(i int) repeatKey {
		return repeatKey{trace: trace.TraceID{1}, span: trace.SpanID{byte(i), byte(i >> 8), 1}, method: "POST", path: "/orders"}
	}
	var c repeatCounter
	for want := range 3 {
		if got := c.ended(key(0)); got != want {
			t.Errorf("operation %d under one parent counted %d before it", want, got)
		}
		c.end(key(0))
	}
	other := key(0)
	other.path = "/refunds"
	if got := c.ended(other); got != 0 {
		t.Errorf("first operation of another request under the parent counted %d before it", got)
	}
	if got := c.ended(key(1)); got != 0 {
		t.Errorf("first operation under another parent counted %d before it", got)
	}
	for i := 1; i < maxRepeatParents; i++ {
		c.end(key(i))
	}
	c.end(key(0)) // the counter is full: it starts again
	if got := c.ended(key(0)); got != 1 {
		t.Errorf("after %d keys and starting again: %d, want 1", maxRepeatParents, got)
	}
}

// The safe methods of RFC 9110 are repeatable without a declaration; an
// empty method is GET, as net/http sends it.
func TestSafeMethodsAndTheEmptyMethod(t *testing.T) {
	for m, want := range map[string]bool{"GET": true, "HEAD": true, "OPTIONS": true, "TRACE": true,
		"POST": false, "PUT": false, "DELETE": false, "PATCH": false, "get": false} {
		if got := safeMethod(m); got != want {
			t.Errorf("safeMethod(%q) = %v, want %v", m, got, want)
		}
	}
	if m := methodOf(&http.Request{}); m != "GET" {
		t.Errorf("methodOf a request without a method = %q, want GET", m)
	}
}

// An operation's generated key: under WithOperationID, an operation that
// repeats the write of an earlier one (method, URL and body) that did not
// succeed takes its key, once; any other write, a repeat after a success,
// or a body that was not buffered gets its own. Without WithOperationID,
// each operation has its own.
func TestIdentityTakesTheKeyOfTheOperationItRepeats(t *testing.T) {
	ctx := WithOperationID(context.Background(), "job-1")
	op := func(ctx context.Context, method, target, body string, succeeded bool, host ...string) string {
		u, _ := url.Parse(target)
		src := &bodySource{hasBody: body != ""}
		if body != "" && body != "unbuffered" {
			src.useBuffer(&bufferedBody{data: []byte(body)})
		}
		id := newIdentity(scopeOf(ctx), nil)
		data, told := src.bytes()
		k := id.takeKey(method, u, strings.Join(host, ""), data, told)
		id.settleKey(succeeded, false, true)
		return k
	}
	const orders = "http://api.test/orders"
	first := op(ctx, "POST", orders, "order 1", false)
	if again := op(ctx, "POST", orders, "order 1", false); again != first {
		t.Fatalf("a repeat after a failure got %q, want %q", again, first)
	}
	if other := op(ctx, "POST", "http://api.test/invoices", "order 1", false); other == first {
		t.Fatal("another URL took the key")
	}
	if put := op(ctx, "PUT", orders, "order 1", false); put == first {
		t.Fatal("another method took the key")
	}
	if body := op(ctx, "POST", orders, "order 2", false); body == first {
		t.Fatal("another body took the key")
	}
	// Another user's write (the URL's userinfo, sent as its own
	// Authorization), or one sent to another Host, is another write.
	if user := op(ctx, "POST", "http://bob:pw@api.test/orders", "order 1", false); user == first {
		t.Fatal("another user's write took the key")
	}
	if host := op(ctx, "POST", orders, "order 1", false, "tenant-b.api.test"); host == first {
		t.Fatal("a write sent to another Host took the key")
	}
	alice := op(ctx, "POST", "http://alice:pw@api.test/orders", "order 9", false)
	if again := op(ctx, "POST", "http://alice:pw@api.test/orders", "order 9", false); again != alice {
		t.Fatal("a user's repeated write got a key of its own")
	}
	if again := op(ctx, "POST", orders, "order 9", false, "api.test"); again == alice {
		t.Fatal("a write without userinfo took a user's key")
	}
	if third := op(ctx, "POST", orders, "order 1", true); third != first {
		t.Fatalf("the third try got %q, want %q", third, first)
	}
	if after := op(ctx, "POST", orders, "order 1", false); after == first {
		t.Fatal("a write after the key's success took its key")
	}
	unbuffered := op(ctx, "POST", orders, "unbuffered", false)
	if again := op(ctx, "POST", orders, "unbuffered", false); again == unbuffered {
		t.Fatal("two writes whose bodies were not buffered share a key")
	}
	empty := op(ctx, "DELETE", orders, "", false)
	if again := op(ctx, "DELETE", orders, "", false); again != empty {
		t.Fatal("a repeated write without a body got a key of its own")
	}
	if elsewhere := op(WithOperationID(context.Background(), "job-2"), "POST", "http://api.test/invoices", "order 1", false); elsewhere == first {
		t.Fatal("another operation id took the key")
	}
	bare := op(context.Background(), "POST", orders, "order 1", false)
	if again := op(context.Background(), "POST", orders, "order 1", false); again == bare {
		t.Fatal("without WithOperationID, two operations share a key")
	}
}

// A repeat that took a kept key and failed is one of the id's latest writes
// that did not succeed: WithIdempotencyKeys says an id remembers the keys of
// its last 1 024 such writes, and keyMemory that a repeat that does not
// succeed keeps its key unless another let it go (a success). Here no
// success let it go: the key was pushed out as the oldest while the repeat
// was in flight, and the repeat's failure came after those 1 024 (a
// reviewer's find, in the change that let repeats share a key).
func TestARepeatThatFailedAfterItsKeyWasForgottenKeepsIt(t *testing.T) {
	oc := &operationContext{id: "job"}
	u, _ := url.Parse("http://127.0.0.1/orders")
	body := []byte(`{"order":"A"}`)

	first := identity{oc: oc}
	k1 := first.takeKey("POST", u, "", body, true)
	first.settleKey(false, false, true) // answer lost: kept

	repeat := identity{oc: oc} // a layer above sends it again: in flight
	if k := repeat.takeKey("POST", u, "", body, true); k != k1 {
		t.Fatalf("repeat took %s, want %s", k, k1)
	}
	for i := range maxRememberedKeys { // other writes fail meanwhile
		o := identity{oc: oc}
		o.takeKey("POST", u, "", []byte(fmt.Sprintf(`{"order":%d}`, i)), true)
		o.settleKey(false, false, true)
	}
	repeat.settleKey(false, false, true) // its answer lost too: the newest failure

	again := identity{oc: oc}
	if k := again.takeKey("POST", u, "", body, true); k != k1 {
		t.Errorf("the repeat of the latest failed write got key %s, want %s, the key it was last sent (and maybe applied) under", k, k1)
	}
}

// A success whose body later breaks keeps its key again (answerBroke); but
// a new write of the same request, made after the success and failed,
// has its own key kept meanwhile: its repeat must take that one, never the
// succeeded write's (whose stored answer the server would replay for it).
// The broken answer's key replaced it (a reviewer's find).
func TestABrokenAnswerDoesNotReplaceANewerWritesKey(t *testing.T) {
	oc := &operationContext{id: "job"}
	u, _ := url.Parse("http://127.0.0.1/orders")
	body := []byte(`{"order":"A"}`)

	ok := identity{oc: oc}
	k1 := ok.takeKey("POST", u, "", body, true)
	ok.settleKey(true, true, true) // 201, the caller reads it later

	next := identity{oc: oc} // a new write of the same request
	k2 := next.takeKey("POST", u, "", body, true)
	if k2 == k1 {
		t.Fatalf("a new write after a success took its key %s", k1)
	}
	next.settleKey(false, false, true) // its answer lost: k2 kept

	ok.answerBroke() // the caller now reads the first answer, which breaks

	repeat := identity{oc: oc} // a layer above sends the new write again
	if k := repeat.takeKey("POST", u, "", body, true); k != k2 {
		t.Errorf("the repeat of the write last sent under %s took %s (the succeeded write's: %v)", k2, k, k == k1)
	}
}
