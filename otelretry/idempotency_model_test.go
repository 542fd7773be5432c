// Copyright The otelretry Authors
// SPDX-License-Identifier: Apache-2.0

package otelretry_test

// Model-based guards of the idempotency-key memory under one shared
// WithOperationID: seeded sequences of writes and reads checked, call by
// call, against a small model written from the WithIdempotencyKeys godoc.
// The memory changed four times in one session, each change found wanting
// by the next review's new order of events; these runs of two reviewers,
// which found it right, are kept so that the next change meets every
// order they tried.

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"net"
	"net/http"
	"os"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"testing/synctest"
	"time"

	"github.com/otelretry/otelretry-go/attrs"
	"github.com/otelretry/otelretry-go/otelretry"
)

// keyScriptBase answers each call with the next status of its script and
// records the Idempotency-Key header of every call.
type keyScriptBase struct {
	mu     sync.Mutex
	status []int
	keys   []string
}

func (b *keyScriptBase) RoundTrip(r *http.Request) (*http.Response, error) {
	if r.Body != nil {
		_, _ = io.Copy(io.Discard, r.Body)
		r.Body.Close()
	}
	b.mu.Lock()
	st := http.StatusOK
	if len(b.status) > 0 {
		st, b.status = b.status[0], b.status[1:]
	}
	b.keys = append(b.keys, r.Header.Get("Idempotency-Key"))
	b.mu.Unlock()
	return &http.Response{StatusCode: st, Header: http.Header{}, Body: io.NopCloser(strings.NewReader("")), Request: r, ProtoMajor: 1, ProtoMinor: 1}, nil
}

// A sequential model of the key memory under one WithOperationID, from the
// WithIdempotencyKeys godoc: a write that repeats an earlier one (method,
// URL, body) that did not succeed takes its key; any other write gets its
// own; a read never carries one.
func TestTheKeyMemoryFollowsItsModel(t *testing.T) {
	methods := []string{"POST", "PUT", "PATCH", "DELETE", "GET"}
	paths := []string{"/a", "/b"}
	bodies := []string{"", "x", "y"}
	statuses := []int{200, 201, 204, 400, 404, 409, 422, 500, 502, 503}
	for seed := uint64(1); seed <= 8; seed++ {
		r := rand.New(rand.NewPCG(seed, 7))
		base := &keyScriptBase{}
		tr := otelretry.NewTransport(base, otelretry.WithIdempotencyKeys(otelretry.DraftIdempotencyKey()), otelretry.WithMaxAttempts(1), otelretry.WithoutBudget())
		c := &http.Client{Transport: tr}
		ctx := otelretry.WithOperationID(context.Background(), "job")
		mem := map[string]string{}
		owner := map[string]string{} // key -> request it was first sent for
		var log []string
		for step := range 300 {
			m, p, bd := methods[r.IntN(len(methods))], paths[r.IntN(len(paths))], bodies[r.IntN(len(bodies))]
			st := statuses[r.IntN(len(statuses))]
			req := m + " " + p + " " + bd
			base.mu.Lock()
			base.status = []int{st}
			n0 := len(base.keys)
			base.mu.Unlock()
			var body io.Reader
			if bd != "" {
				body = bytes.NewReader([]byte(bd))
			}
			hr, _ := http.NewRequestWithContext(ctx, m, "http://127.0.0.1:1"+p, body)
			resp, err := c.Do(hr)
			if err == nil {
				_, _ = io.Copy(io.Discard, resp.Body)
				resp.Body.Close()
			}
			base.mu.Lock()
			sent := append([]string(nil), base.keys[n0:]...)
			base.mu.Unlock()
			log = append(log, fmt.Sprintf("%d: %s -> %d sent=%q", step, req, st, sent))
			fail := func(msg string) {
				t.Fatalf("seed %d step %d: %s\n%s", seed, step, msg, strings.Join(log[max(0, len(log)-8):], "\n"))
			}
			if len(sent) == 0 {
				fail("no call")
			}
			k := sent[0]
			if m == "GET" {
				if k != "" {
					fail("key on a GET")
				}
				continue
			}
			if k == "" {
				fail("write without key")
			}
			if want, ok := mem[req]; ok {
				if k != want {
					fail(fmt.Sprintf("repeat carried %s, want %s", k, want))
				}
			} else if o, ok := owner[k]; ok {
				fail(fmt.Sprintf("new write carried key %s of %s", k, o))
			}
			owner[k] = req
			succeeded := st >= 200 && st < 300
			if succeeded {
				delete(mem, req)
			} else {
				mem[req] = k
			}
		}
	}
}

// keyPairBase holds calls until two arrived, then answers them with the
// statuses given by key order of arrival.
type keyPairBase struct {
	mu     sync.Mutex
	status []int
	keys   []string
	wait   chan struct{}
	n      int
}

func (b *keyPairBase) RoundTrip(r *http.Request) (*http.Response, error) {
	if r.Body != nil {
		_, _ = io.Copy(io.Discard, r.Body)
		r.Body.Close()
	}
	b.mu.Lock()
	st := b.status[len(b.keys)%2]
	b.keys = append(b.keys, r.Header.Get("Idempotency-Key"))
	b.n++
	w := b.wait
	if b.n == 2 {
		close(w)
	}
	b.mu.Unlock()
	<-w
	return &http.Response{StatusCode: st, Header: http.Header{}, Body: io.NopCloser(strings.NewReader("")), Request: r, ProtoMajor: 1, ProtoMinor: 1}, nil
}

// Two repeats of a kept write in flight together both take its key; a
// success of either lets it go; otherwise it stays kept.
func TestTheKeyMemoryOfWritesInFlightTogetherFollowsItsModel(t *testing.T) {
	statuses := []int{200, 400, 409, 500, 503}
	bodies := []string{"x", "y"}
	for seed := uint64(1); seed <= 6; seed++ {
		r := rand.New(rand.NewPCG(seed, 11))
		base := &keyPairBase{}
		tr := otelretry.NewTransport(base, otelretry.WithIdempotencyKeys(otelretry.DraftIdempotencyKey()), otelretry.WithMaxAttempts(1), otelretry.WithoutBudget())
		c := &http.Client{Transport: tr}
		ctx := otelretry.WithOperationID(context.Background(), "job")
		mem := map[string]string{}
		loose := map[string]bool{}
		owner := map[string]string{}
		seen := map[string]bool{}
		send := func(bd string) {
			hr, _ := http.NewRequestWithContext(ctx, "POST", "http://127.0.0.1:1/o", bytes.NewReader([]byte(bd)))
			resp, err := c.Do(hr)
			if err == nil {
				_, _ = io.Copy(io.Discard, resp.Body)
				resp.Body.Close()
			}
		}
		for step := range 150 {
			bd := bodies[r.IntN(2)]
			s1, s2 := statuses[r.IntN(len(statuses))], statuses[r.IntN(len(statuses))]
			base.mu.Lock()
			base.status, base.keys, base.n, base.wait = []int{s1, s2}, nil, 0, make(chan struct{})
			base.mu.Unlock()
			var wg sync.WaitGroup
			wg.Add(2)
			go func() { defer wg.Done(); send(bd) }()
			go func() { defer wg.Done(); send(bd) }()
			wg.Wait()
			k := base.keys
			tag := fmt.Sprintf("seed %d step %d body %s statuses %d,%d keys %q mem %q", seed, step, bd, s1, s2, k, mem[bd])
			for _, key := range k {
				if o, ok := owner[key]; ok && o != bd {
					t.Fatalf("%s: key of %s", tag, o)
				}
				owner[key] = bd
			}
			if want, ok := mem[bd]; ok && !loose[bd] {
				if k[0] != want || k[1] != want {
					t.Fatalf("%s: repeats did not take the kept key", tag)
				}
			} else if !ok && !loose[bd] {
				for _, key := range k {
					if seen[key] {
						t.Fatalf("%s: a new write reused an old key", tag)
					}
				}
			}
			for _, key := range k {
				seen[key] = true
			}
			ok1, ok2 := s1 < 300, s2 < 300
			switch {
			case k[0] == k[1] && (ok1 || ok2):
				delete(mem, bd)
				loose[bd] = false
			case k[0] == k[1]:
				mem[bd] = k[0]
				loose[bd] = false
			default:
				mem[bd] = "?"
				loose[bd] = true
				if ok1 && ok2 {
					delete(mem, bd)
					loose[bd] = false
				}
			}
		}
	}
}

// keyActBase answers each call by the next action of its script: a status
// (503 with Retry-After: 1), "cut" (waits for the attempt's context, the
// body sent), "refused" (a dial refused, nothing read), "panic" (after the
// body was read). It records every call's key and whether it landed.
type keyActBase struct {
	mu     sync.Mutex
	script []string
	keys   []string
	landed []bool
}

func (b *keyActBase) RoundTrip(r *http.Request) (*http.Response, error) {
	b.mu.Lock()
	act := "200"
	if len(b.script) > 0 {
		act, b.script = b.script[0], b.script[1:]
	}
	b.keys = append(b.keys, r.Header.Get("Idempotency-Key"))
	b.landed = append(b.landed, act != "refused")
	b.mu.Unlock()
	if act == "refused" {
		if r.Body != nil {
			r.Body.Close()
		}
		return nil, &net.OpError{Op: "dial", Net: "tcp", Err: &os.SyscallError{Syscall: "connect", Err: syscall.ECONNREFUSED}}
	}
	if r.Body != nil {
		_, _ = io.Copy(io.Discard, r.Body)
		r.Body.Close()
	}
	switch act {
	case "cut":
		<-r.Context().Done()
		return nil, r.Context().Err()
	case "panic":
		panic("review: base panics")
	}
	st, _ := strconv.Atoi(act)
	h := http.Header{}
	if st == 503 {
		h.Set("Retry-After", "1")
	}
	return &http.Response{StatusCode: st, Header: h, Body: io.NopCloser(strings.NewReader("")), Request: r, ProtoMajor: 1, ProtoMinor: 1}, nil
}

// keyBrokenReader gives a few bytes, then an error.
type keyBrokenReader struct{ n int }

func (b *keyBrokenReader) Read(p []byte) (int, error) {
	if b.n > 0 && len(p) > 0 {
		b.n--
		p[0] = 'z'
		return 1, nil
	}
	return 0, errors.New("review: body broke")
}

// The key memory under one WithOperationID with up to three attempts per
// operation whose calls are cut by the attempt timeout, refused at the
// dial, answered 503 with Retry-After, or panic; with PrepareAttemptFunc
// panics, bodies that break as they are read, state checks answering
// applied / not_applied / unknown, and more distinct failed writes than
// the 1 024 an id remembers. Invariants (WithIdempotencyKeys godoc): every
// call of one operation carries one key; a repeat of a kept write carries
// its key; any other write a key never seen before; a key is never sent
// for two different writes.
func TestTheKeyMemoryUnderFaultsFollowsItsModel(t *testing.T) {
	acts := []string{"200", "201", "400", "409", "422", "500", "503", "cut", "refused", "panic"}
	weights := []int{6, 2, 2, 1, 1, 3, 2, 3, 3, 1}
	pick := func(r *rand.Rand) string {
		n := r.IntN(24)
		for i, w := range weights {
			if n < w {
				return acts[i]
			}
			n -= w
		}
		return "200"
	}
	states := []attrs.StateCheckResult{attrs.StateApplied, attrs.StateNotApplied, attrs.StateUnknown}
	for seed := uint64(1); seed <= 3; seed++ {
		synctest.Test(t, func(t *testing.T) {
			r := rand.New(rand.NewPCG(seed, 13))
			base := &keyActBase{}
			var prepPanicAt int // attempt number (1-based within an op) whose preparation panics, 0 none
			var prepN int
			var checks int
			tr := otelretry.NewTransport(base,
				otelretry.WithIdempotencyKeys(otelretry.DraftIdempotencyKey()),
				otelretry.WithMaxAttempts(3), otelretry.WithoutBudget(),
				otelretry.WithAttemptTimeout(time.Second), otelretry.WithDeadline(time.Hour),
				otelretry.WithPrepareAttempt(func(req *http.Request, attempt int) error {
					prepN++
					if prepN == prepPanicAt {
						panic("review: prepare panics")
					}
					return nil
				}),
				otelretry.WithStateCheck(func(ctx context.Context, c otelretry.StateCheck) (otelretry.StateResult, error) {
					checks++
					s := states[r.IntN(3)]
					if s == attrs.StateApplied {
						return otelretry.StateResult{State: s, Response: &http.Response{StatusCode: 200, Header: http.Header{}, Body: io.NopCloser(strings.NewReader("")), ProtoMajor: 1, ProtoMinor: 1}}, nil
					}
					return otelretry.StateResult{State: s}, nil
				}))
			ctx := otelretry.WithOperationID(context.Background(), "job")
			// model: an LRU of kept keys by request.
			type kept struct{ req, key string }
			var order []kept
			evictions := 0
			find := func(req string) int {
				for i, k := range order {
					if k.req == req {
						return i
					}
				}
				return -1
			}
			keep := func(req, key string) {
				if i := find(req); i >= 0 {
					order = append(order[:i], order[i+1:]...)
				} else if len(order) >= 1024 {
					order = order[1:]
					evictions++
				}
				order = append(order, kept{req, key})
			}
			owner := map[string]string{}
			var log []string
			evictedRepeats, broken, panics := 0, 0, 0
			everKept := map[string]bool{}
			for step := range 8000 {
				var req, bd string
				var body io.Reader
				brokenBody := r.IntN(40) == 0
				switch {
				case brokenBody:
					broken++
					req = fmt.Sprintf("POST /b broken#%d", step)
					body = &keyBrokenReader{n: 2}
				case r.IntN(5) == 0:
					bd = []string{"", "x", "y"}[r.IntN(3)]
					req = "POST /a " + bd
				default:
					bd = fmt.Sprintf("u%d", r.IntN(8000))
					req = "POST /a " + bd
				}
				if body == nil && bd != "" {
					body = bytes.NewReader([]byte(bd))
				}
				script := []string{pick(r), pick(r), pick(r)}
				prepN, prepPanicAt = 0, 0
				if r.IntN(30) == 0 {
					prepPanicAt = 1 + r.IntN(3)
				}
				base.mu.Lock()
				base.script = script
				n0 := len(base.keys)
				base.mu.Unlock()
				checks0 := checks
				hr, _ := http.NewRequestWithContext(ctx, "POST", "http://127.0.0.1:1/"+strings.Fields(req)[1][1:], body)
				var resp *http.Response
				var err error
				panicked := func() (p any) {
					defer func() { p = recover() }()
					resp, err = tr.RoundTrip(hr)
					return nil
				}()
				success := false
				if panicked != nil {
					panics++
				} else if err == nil {
					_, _ = io.Copy(io.Discard, resp.Body)
					resp.Body.Close()
					success = resp.StatusCode >= 200 && resp.StatusCode < 300
				}
				base.mu.Lock()
				sent := append([]string(nil), base.keys[n0:]...)
				landed := false
				for _, l := range base.landed[n0:] {
					landed = landed || l
				}
				base.mu.Unlock()
				i := find(req)
				log = append(log, fmt.Sprintf("%d: %s script=%v prepPanic=%d checks=%d -> err=%v panic=%v success=%v sent=%q kept=%v",
					step, req, script, prepPanicAt, checks-checks0, err, panicked, success, sent, i >= 0))
				fail := func(msg string) {
					for _, l := range log {
						if strings.Contains(l, " "+req+" script") {
							t.Log("history: " + l)
						}
					}
					t.Fatalf("seed %d step %d: %s\n%s", seed, step, msg, strings.Join(log[max(0, len(log)-10):], "\n"))
				}
				if len(sent) == 0 {
					if i >= 0 && !brokenBody && !success {
						keep(req, order[i].key) // a taken key settles as the newest
					}
					continue // nothing sent: no key to check, nothing kept (unless taken: then kept as it was)
				}
				k := sent[0]
				for _, s := range sent {
					if s != k {
						fail("two keys in one operation")
					}
				}
				if k == "" {
					fail("write without key")
				}
				if i >= 0 && !brokenBody {
					if k != order[i].key {
						fail(fmt.Sprintf("repeat carried %s, want kept %s", k, order[i].key))
					}
				} else {
					if o, ok := owner[k]; ok {
						fail(fmt.Sprintf("new write carried key %s of %s", k, o))
					}
					if everKept[req] {
						evictedRepeats++
					}
				}
				if o, ok := owner[k]; ok && o != req {
					fail(fmt.Sprintf("key %s of %s sent for %s", k, o, req))
				}
				owner[k] = req
				switch {
				case success:
					if i >= 0 {
						order = append(order[:i], order[i+1:]...)
					}
				case i >= 0 && !brokenBody:
					keep(req, k)
				case landed && !brokenBody: // a body that cannot be told keeps no key
					keep(req, k)
					everKept[req] = true
				}
			}
			t.Logf("seed %d: 8000 ops, %d calls, %d broken bodies, %d panics, %d state checks, %d new keys for writes kept before, %d keys forgotten", seed, len(base.keys), broken, panics, checks, evictedRepeats, evictions)
		})
	}
}
