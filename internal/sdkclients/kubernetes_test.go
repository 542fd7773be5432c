// Copyright The otelretry Authors
// SPDX-License-Identifier: Apache-2.0

package sdkclients

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/go-logr/logr/funcr"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/klog/v2"

	"github.com/otelretry/otelretry-go/attrs"
	"github.com/otelretry/otelretry-go/otelretry"
)

// Kubernetes client-go v0.37.2 (a typed clientset), with otelretry in
// rest.Config.WrapTransport (client-go refuses a custom Transport together
// with TLS options) with the tests' short limits: at client-go's
// defaults, and with the recipe (otelretryUnderClientGo). client-go
// retries any verb answered 429 or 5xx with a Retry-After (whole
// seconds), up to 10 times, and a GET that lost its connection; a 5xx
// without Retry-After is its answer. rest.Config.Timeout becomes both
// http.Client.Timeout and a deadline on each request's context. The fake
// API server answers a ConfigMap's GET and create.

const (
	kubeConfigMap = `{"kind":"ConfigMap","apiVersion":"v1","metadata":{"name":"cm1","namespace":"default"},"data":{"k":"v"}}`

	kubeRead   = "GET /api/v1/namespaces/default/configmaps/cm1"
	kubeCreate = "POST /api/v1/namespaces/default/configmaps"
)

func kubeStatus(w http.ResponseWriter, code int, reason string) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(code)
	io.WriteString(w, `{"kind":"Status","apiVersion":"v1","metadata":{},"status":"Failure","message":"busy","reason":"`+reason+`","code":`+strconv.Itoa(code)+`}`)
}

func kubeServe(answer func(n int, w http.ResponseWriter) bool) func(k string, n int, w http.ResponseWriter, r *http.Request) {
	return func(k string, n int, w http.ResponseWriter, r *http.Request) {
		if answer(n, w) {
			return
		}
		w.Header().Set("Content-Type", "application/json")
		if r.Method == http.MethodPost {
			w.WriteHeader(http.StatusCreated)
		}
		io.WriteString(w, kubeConfigMap)
	}
}

// kubeClient is a clientset of the fake with otelretry in WrapTransport,
// with the tests' short limits (then opts), at client-go's defaults or
// with the recipe; tries counts client-go's calls to otelretry. timeout
// is rest.Config.Timeout (0: none, the default).
func kubeClient(t *testing.T, url string, timeout time.Duration, s setup, opts ...otelretry.Option) (*kubernetes.Clientset, *tries) {
	rt := &tries{}
	config := &rest.Config{Host: url, Timeout: timeout}
	if s == recipe {
		otelretryUnderClientGo(config, testOptions(opts...)...)
	} else {
		config.Wrap(func(base http.RoundTripper) http.RoundTripper {
			return otelretry.NewTransport(base, testOptions(opts...)...)
		})
	}
	config.Wrap(func(next http.RoundTripper) http.RoundTripper {
		rt.next = next
		return rt
	})
	cs, err := kubernetes.NewForConfig(config)
	if err != nil {
		t.Fatal(err)
	}
	return cs, rt
}

func kubeCall(ctx context.Context, cs *kubernetes.Clientset, key string) error {
	cms := cs.CoreV1().ConfigMaps("default")
	if key == kubeRead {
		_, err := cms.Get(ctx, "cm1", metav1.GetOptions{})
		return err
	}
	_, err := cms.Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "cm1"}, Data: map[string]string{"k": "v"}}, metav1.CreateOptions{})
	return err
}

// TestKubernetesReadRetried: a GET answered 503, 503, 200 (no
// Retry-After): otelretry retries it, 3 executions in one client-go call,
// in both setups.
func TestKubernetesReadRetried(t *testing.T) {
	for _, s := range []setup{sdkDefaults, recipe} {
		t.Run(s.String(), func(t *testing.T) {
			f := newCountingServer(t, methodAndPath, kubeServe(func(n int, w http.ResponseWriter) bool {
				if n <= 2 {
					kubeStatus(w, 503, "ServiceUnavailable")
					return true
				}
				return false
			}))
			cs, rt := kubeClient(t, f.URL, 0, s)
			err := kubeCall(t.Context(), cs, kubeRead)
			got := f.executed(kubeRead)
			t.Logf("%s: GET 503, 503, 200: executed %d in %d client-go calls, err %v", s, got, rt.n.Load(), err)
			if err != nil || got != 3 || rt.n.Load() != 1 {
				t.Errorf("executed %d in %d calls, err %v; want 3 in 1 and the ConfigMap", got, rt.n.Load(), err)
			}
		})
	}
}

// TestKubernetesCreateHung: a create the server read and never answered,
// under an otelretry deadline of 300 ms: otelretry ends it check_state;
// client-go does not resend a POST that failed: 1 execution, and the
// caller's error matches otelretry.ErrOutcomeUnknown, in both setups.
func TestKubernetesCreateHung(t *testing.T) {
	for _, s := range []setup{sdkDefaults, recipe} {
		t.Run(s.String(), func(t *testing.T) {
			t.Parallel()
			f := newCountingServer(t, methodAndPath, func(k string, n int, w http.ResponseWriter, r *http.Request) { hang(r) })
			cs, rt := kubeClient(t, f.URL, 0, s, otelretry.WithDeadline(300*time.Millisecond))
			err := kubeCall(t.Context(), cs, kubeCreate)
			got := f.executed(kubeCreate)
			t.Logf("%s: hung POST: executed %d in %d client-go calls, unknown outcome %v, err %v", s, got, rt.n.Load(), errors.Is(err, otelretry.ErrOutcomeUnknown), err)
			if got != 1 || rt.n.Load() != 1 {
				t.Errorf("executed %d in %d calls; measured 1 in 1", got, rt.n.Load())
			}
			if !errors.Is(err, otelretry.ErrOutcomeUnknown) {
				t.Errorf("err %v does not match ErrOutcomeUnknown", err)
			}
		})
	}
}

// TestKubernetesRetryAfter: a 429 or a 503 with Retry-After: 1, then 200.
// At the defaults otelretry waits it on the GET itself (1 client-go
// call); with the recipe it leaves it to client-go's loop, which waits
// the second and sends again (2 calls), as it does for the POST's, which
// otelretry never resends. Every time 2 executions, at least 1 s apart.
func TestKubernetesRetryAfter(t *testing.T) {
	for _, status := range []int{429, 503} {
		for _, tc := range []struct {
			s     setup
			key   string
			calls int32
		}{
			{sdkDefaults, kubeRead, 1},
			{sdkDefaults, kubeCreate, 2},
			{recipe, kubeRead, 2},
			{recipe, kubeCreate, 2},
		} {
			t.Run(fmt.Sprintf("%s/%s/%d", tc.s, tc.key, status), func(t *testing.T) {
				t.Parallel()
				f := newCountingServer(t, methodAndPath, kubeServe(func(n int, w http.ResponseWriter) bool {
					if n == 1 {
						w.Header().Set("Retry-After", "1")
						kubeStatus(w, status, strings.ReplaceAll(http.StatusText(status), " ", ""))
						return true
					}
					return false
				}))
				cs, rt := kubeClient(t, f.URL, 0, tc.s)
				err := kubeCall(t.Context(), cs, tc.key)
				got, gap := f.executed(tc.key), f.gap(tc.key)
				t.Logf("%s: %s %d Retry-After: 1, then 200: executed %d in %d client-go calls, gap %v, err %v", tc.s, tc.key, status, got, rt.n.Load(), gap.Round(10*time.Millisecond), err)
				if err != nil || got != 2 || rt.n.Load() != tc.calls {
					t.Errorf("executed %d in %d calls, err %v; want 2 in %d", got, rt.n.Load(), err, tc.calls)
				}
				if gap < time.Second {
					t.Errorf("gap %v, want at least 1s (the hint)", gap)
				}
			})
		}
	}
}

// TestKubernetes429Always: every answer a 429 with Retry-After: 0 (0 keeps
// the test short; client-go waits what it says). client-go sends the call
// 11 times (its 10 retries), the create as the read. At the defaults
// otelretry adds 2 attempts to the GET's first call (a 429 with a hint is
// held for that hint, 0 here), then its retry budget refuses a retry in
// each later call: 13 executions. With the recipe it adds none: 11, each
// call stopped by the recipe's classifier.
func TestKubernetes429Always(t *testing.T) {
	for _, tc := range []struct {
		s     setup
		key   string
		want  int
		first int           // the first operation's attempts
		later attrs.Outcome // how the 10 later operations end
	}{
		{sdkDefaults, kubeRead, 13, 3, attrs.OutcomeBudgetExhausted},
		{sdkDefaults, kubeCreate, 11, 1, attrs.OutcomeStop},
		{recipe, kubeRead, 11, 1, attrs.OutcomeStop},
		{recipe, kubeCreate, 11, 1, attrs.OutcomeStop},
	} {
		t.Run(tc.s.String()+"/"+tc.key, func(t *testing.T) {
			f := newCountingServer(t, methodAndPath, kubeServe(func(n int, w http.ResponseWriter) bool {
				w.Header().Set("Retry-After", "0")
				kubeStatus(w, 429, "TooManyRequests")
				return true
			}))
			cs, rt := kubeClient(t, f.URL, 0, tc.s)
			var results otelretry.Results
			err := kubeCall(otelretry.WithResults(t.Context(), &results), cs, tc.key)
			got, ops := f.executed(tc.key), results.Operations()
			t.Logf("%s: %s 429 Retry-After: 0 every time: executed %d in %d client-go calls, err %v", tc.s, tc.key, got, rt.n.Load(), err)
			if len(ops) != 11 || ops[0].Attempts != tc.first {
				t.Fatalf("operations %+v; want 11, the first with %d attempts", ops, tc.first)
			}
			for i, op := range ops[1:] {
				if op.Attempts != 1 || op.Outcome != tc.later {
					t.Errorf("operation %d: %d attempts, %s (%s); want 1, %s", i+1, op.Attempts, op.Outcome, op.Reason, tc.later)
				}
			}
			if err == nil || got != tc.want || rt.n.Load() != 11 {
				t.Errorf("executed %d in %d calls, err %v; measured %d in 11 and the 429", got, rt.n.Load(), err, tc.want)
			}
		})
	}
}

// klogLines captures what client-go logs through the klog logger of the
// context it returns.
func klogLines(ctx context.Context) (context.Context, func() []string) {
	var mu sync.Mutex
	var lines []string
	logger := funcr.New(func(prefix, args string) {
		mu.Lock()
		lines = append(lines, prefix+" "+args)
		mu.Unlock()
	}, funcr.Options{})
	return klog.NewContext(ctx, logger), func() []string {
		mu.Lock()
		defer mu.Unlock()
		return append([]string(nil), lines...)
	}
}

// cancelWarnings counts client-go's "unable to cancel request" lines.
func cancelWarnings(lines []string) int {
	n := 0
	for _, l := range lines {
		if strings.Contains(l, "unable to cancel request") {
			n++
		}
	}
	return n
}

// TestKubernetesTimeoutEndsByContext: rest.Config.Timeout (300 ms, under
// otelretry's 400 ms attempt timeout and 2 s deadline) over a hung GET, 10
// times. client-go's http.Client calls CancelRequest on its round tripper
// when its timer fires before RoundTrip returns, and client-go logs
// "unable to cancel request" when the round tripper it reaches has none:
// before otelretry's Transport had one, 3 of 10 timeouts logged it here.
// None does now, and the request's context (client-go's, from the same
// Timeout) ends each operation: 1 execution, deadline_exceeded, reason
// caller, in the result slot.
func TestKubernetesTimeoutEndsByContext(t *testing.T) {
	for run := range 10 {
		f := newCountingServer(t, methodAndPath, func(k string, n int, w http.ResponseWriter, r *http.Request) { hang(r) })
		cs, rt := kubeClient(t, f.URL, 300*time.Millisecond, sdkDefaults)
		var results otelretry.Results
		ctx, lines := klogLines(otelretry.WithResults(t.Context(), &results))
		err := kubeCall(ctx, cs, kubeRead)
		got := f.executed(kubeRead)
		if n := cancelWarnings(lines()); n > 0 {
			t.Errorf("timeout %d logged %d cancel warnings: %q", run, n, lines())
		}
		ops := results.Operations()
		if got != 1 || rt.n.Load() != 1 || !errors.Is(err, context.DeadlineExceeded) || len(ops) != 1 ||
			ops[0].Outcome != attrs.OutcomeDeadlineExceeded || ops[0].Reason != attrs.ReasonCaller {
			t.Errorf("timeout %d: executed %d in %d calls, operations %+v, err %v; want 1 in 1, one deadline_exceeded (caller)", run, got, rt.n.Load(), ops, err)
		}
	}
}

// slowWrapper is a wrapper of yours above otelretry that returns 200 ms
// after it, so that http.Client's timer fires while RoundTrip runs;
// wrapped: it has WrappedRoundTripper.
type slowWrapper struct{ next http.RoundTripper }

func (w slowWrapper) RoundTrip(r *http.Request) (*http.Response, error) {
	resp, err := w.next.RoundTrip(r)
	time.Sleep(200 * time.Millisecond)
	return resp, err
}

type slowWrapperWrapped struct{ slowWrapper }

func (w slowWrapperWrapped) WrappedRoundTripper() http.RoundTripper { return w.next }

// TestKubernetesWrapperAboveOtelretry: a wrapper of yours added in
// WrapTransport after the recipe sits above otelretry, and client-go
// reaches otelretry's CancelRequest through it only by its
// WrappedRoundTripper. Over a hung GET with rest.Config.Timeout 300 ms, 5
// times, a wrapper that returns after http.Client's timer fired makes
// client-go log "unable to cancel request" 5 times without the method, 0
// times with it.
func TestKubernetesWrapperAboveOtelretry(t *testing.T) {
	const runs = 5
	for _, tc := range []struct {
		name string
		wrap func(http.RoundTripper) http.RoundTripper
		want int
	}{
		{"no WrappedRoundTripper", func(next http.RoundTripper) http.RoundTripper { return slowWrapper{next} }, runs},
		{"WrappedRoundTripper", func(next http.RoundTripper) http.RoundTripper { return slowWrapperWrapped{slowWrapper{next}} }, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			warnings := 0
			for range runs {
				f := newCountingServer(t, methodAndPath, func(k string, n int, w http.ResponseWriter, r *http.Request) { hang(r) })
				config := &rest.Config{Host: f.URL, Timeout: 300 * time.Millisecond}
				otelretryUnderClientGo(config, testOptions()...)
				config.Wrap(tc.wrap)
				cs, err := kubernetes.NewForConfig(config)
				if err != nil {
					t.Fatal(err)
				}
				ctx, lines := klogLines(t.Context())
				if err := kubeCall(ctx, cs, kubeRead); err == nil || f.executed(kubeRead) != 1 {
					t.Errorf("executed %d, err %v; want 1 and a timeout", f.executed(kubeRead), err)
				}
				warnings += cancelWarnings(lines())
			}
			t.Logf("%s: %d hung GETs, Timeout 300ms: %d cancel warnings", tc.name, runs, warnings)
			if warnings != tc.want {
				t.Errorf("%d cancel warnings, want %d", warnings, tc.want)
			}
		})
	}
}

// TestKubernetesTimeoutUnknownCreate: rest.Config.Timeout (300 ms) over a
// hung create, 5 times per setup: 1 execution each (client-go does not
// resend a POST that failed). The error is http.Client's when its timer
// fires first, flattened to text; a result slot reports the unknown write
// every time, and with the recipe keepOutcomeUnknown puts it back on the
// error every time.
func TestKubernetesTimeoutUnknownCreate(t *testing.T) {
	const creates = 5
	for _, s := range []setup{sdkDefaults, recipe} {
		t.Run(s.String(), func(t *testing.T) {
			t.Parallel()
			kept, flattened, slot := 0, 0, 0
			for range creates {
				f := newCountingServer(t, methodAndPath, func(k string, n int, w http.ResponseWriter, r *http.Request) { hang(r) })
				cs, rt := kubeClient(t, f.URL, 300*time.Millisecond, s)
				var results otelretry.Results
				var err error
				if s == recipe {
					err = keepOutcomeUnknown(t.Context(), func(ctx context.Context) error { return kubeCall(ctx, cs, kubeCreate) })
				} else {
					err = kubeCall(otelretry.WithResults(t.Context(), &results), cs, kubeCreate)
				}
				if got := f.executed(kubeCreate); got != 1 || rt.n.Load() != 1 || err == nil {
					t.Errorf("executed %d in %d calls, err %v; want 1 in 1 and an error", got, rt.n.Load(), err)
				}
				var oe *otelretry.Error
				if !errors.As(err, &oe) {
					flattened++
				}
				if errors.Is(err, otelretry.ErrOutcomeUnknown) {
					kept++
				}
				if results.OutcomeUnknown() {
					slot++
				}
			}
			t.Logf("%s: %d hung creates, Timeout 300ms: the error was flattened %d times and matched ErrOutcomeUnknown %d times; the slot reported it %d times", s, creates, flattened, kept, slot)
			if s == sdkDefaults && slot != creates {
				t.Errorf("the slot reported the unknown write %d times of %d", slot, creates)
			}
			if s == recipe && kept != creates {
				t.Errorf("the error matched ErrOutcomeUnknown %d times of %d", kept, creates)
			}
		})
	}
}

// TestKubernetesLostConnection: a GET whose connection the server resets
// (RST) every time, which client-go resends itself (its check finds the
// errno through otelretry's error), and one it closes without an answer
// twice (EOF), which client-go's check no longer reads once otelretry
// wraps it. With the recipe one layer retries each: client-go the reset
// (the recipe left otelretry's retries on, and both layers retried it: 13
// executed in 11 calls, as at client-go's defaults), otelretry the EOF.
func TestKubernetesLostConnection(t *testing.T) {
	drop := func(reset bool) func(k string, n int, w http.ResponseWriter, r *http.Request) {
		return func(k string, n int, w http.ResponseWriter, r *http.Request) {
			if !reset && n > 2 {
				w.Header().Set("Content-Type", "application/json")
				io.WriteString(w, kubeConfigMap)
				return
			}
			conn, _, err := w.(http.Hijacker).Hijack()
			if err != nil {
				return
			}
			if tc, ok := conn.(*net.TCPConn); ok && reset {
				tc.SetLinger(0) // the close sends a RST
			}
			conn.Close()
		}
	}
	for _, tc := range []struct {
		name            string
		reset           bool
		s               setup
		executed, calls int64
	}{
		{"reset, recipe", true, recipe, 11, 11},
		{"EOF, recipe", false, recipe, 3, 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := newCountingServer(t, methodAndPath, drop(tc.reset))
			cs, rt := kubeClient(t, f.URL, 0, tc.s)
			err := kubeCall(t.Context(), cs, kubeRead)
			got := int64(f.executed(kubeRead))
			t.Logf("%s: executed %d in %d client-go calls, err %v", tc.name, got, rt.n.Load(), err)
			if got != tc.executed || int64(rt.n.Load()) != tc.calls || !tc.reset && err != nil {
				t.Errorf("executed %d in %d calls; want %d in %d", got, rt.n.Load(), tc.executed, tc.calls)
			}
		})
	}
}

// TestKubernetesWatchHung: a watch (a GET with watch=true) whose answer
// never comes. client-go's Watch resends a GET that timed out (or ended
// as a probable EOF), up to 10 times; otelretry's error after its attempt
// timeouts is a timeout, so both layers retried it (13 executed in 11
// calls). The recipe leaves a watch's timeouts to client-go.
func TestKubernetesWatchHung(t *testing.T) {
	const key = "GET /api/v1/namespaces/default/configmaps"
	f := newCountingServer(t, methodAndPath, func(k string, n int, w http.ResponseWriter, r *http.Request) { hang(r) })
	cs, rt := kubeClient(t, f.URL, 0, recipe)
	w, err := cs.CoreV1().ConfigMaps("default").Watch(t.Context(), metav1.ListOptions{})
	if w != nil {
		w.Stop()
	}
	got := f.executed(key)
	t.Logf("recipe: hung watch: executed %d in %d client-go calls, err %v", got, rt.n.Load(), err)
	if int64(got) != int64(rt.n.Load()) {
		t.Errorf("executed %d in %d client-go calls; want one layer to retry (as many executions as calls)", got, rt.n.Load())
	}
}
