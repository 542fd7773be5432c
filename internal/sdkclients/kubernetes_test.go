// Copyright The otelretry Authors
// SPDX-License-Identifier: Apache-2.0

package sdkclients

import (
	"context"
	"errors"
	"io"
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

// Kubernetes client-go v0.37.2 (a typed clientset) at its defaults, with
// otelretry in rest.Config.WrapTransport (client-go refuses a custom
// Transport together with TLS options), over otelretry with the tests'
// short limits. client-go retries any verb answered 429 or 5xx with a
// Retry-After (whole seconds), up to 10 times, and a GET that lost its
// connection; a 5xx without Retry-After is its answer. rest.Config.Timeout
// becomes both http.Client.Timeout and a deadline on each request's
// context. The fake API server answers a ConfigMap's GET and create.

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

// kubeClient is a clientset of the fake with otelretry in WrapTransport;
// tries counts client-go's calls to otelretry. timeout is
// rest.Config.Timeout (0: none, the default).
func kubeClient(t *testing.T, url string, timeout time.Duration) (*kubernetes.Clientset, *tries) {
	rt := &tries{}
	cs, err := kubernetes.NewForConfig(&rest.Config{Host: url, Timeout: timeout,
		WrapTransport: func(base http.RoundTripper) http.RoundTripper {
			rt.next = otelretry.NewTransport(base, testOptions()...)
			return rt
		}})
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
// Retry-After): otelretry retries it, 3 executions in one client-go call.
func TestKubernetesReadRetried(t *testing.T) {
	f := newCountingServer(t, methodAndPath, kubeServe(func(n int, w http.ResponseWriter) bool {
		if n <= 2 {
			kubeStatus(w, 503, "ServiceUnavailable")
			return true
		}
		return false
	}))
	cs, rt := kubeClient(t, f.URL, 0)
	err := kubeCall(t.Context(), cs, kubeRead)
	got := f.executed(kubeRead)
	t.Logf("GET 503, 503, 200: executed %d in %d client-go calls, err %v", got, rt.n.Load(), err)
	if err != nil || got != 3 || rt.n.Load() != 1 {
		t.Errorf("executed %d in %d calls, err %v; want 3 in 1 and the ConfigMap", got, rt.n.Load(), err)
	}
}

// TestKubernetesCreateHung: a create the server read and never answered.
// otelretry waits for its answer until its deadline (2 s) and ends it
// check_state; client-go does not resend a POST that failed: 1 execution,
// and the caller's error matches otelretry.ErrOutcomeUnknown.
func TestKubernetesCreateHung(t *testing.T) {
	f := newCountingServer(t, methodAndPath, func(k string, n int, w http.ResponseWriter, r *http.Request) { hang(r) })
	cs, rt := kubeClient(t, f.URL, 0)
	err := kubeCall(t.Context(), cs, kubeCreate)
	got := f.executed(kubeCreate)
	t.Logf("hung POST: executed %d in %d client-go calls, unknown outcome %v, err %v", got, rt.n.Load(), errors.Is(err, otelretry.ErrOutcomeUnknown), err)
	if got != 1 || rt.n.Load() != 1 {
		t.Errorf("executed %d in %d calls; measured 1 in 1", got, rt.n.Load())
	}
	if !errors.Is(err, otelretry.ErrOutcomeUnknown) {
		t.Errorf("err %v does not match ErrOutcomeUnknown", err)
	}
}

// TestKubernetes429RetryAfter: a 429 with Retry-After: 1, then 200.
// otelretry waits it on the GET itself (1 call); it hands back the POST's
// 429, and client-go waits the second and resends the create (2 calls).
// Both: 2 executions, 1 s apart.
func TestKubernetes429RetryAfter(t *testing.T) {
	for _, tc := range []struct {
		key   string
		calls int32
	}{
		{kubeRead, 1},
		{kubeCreate, 2},
	} {
		t.Run(tc.key, func(t *testing.T) {
			f := newCountingServer(t, methodAndPath, kubeServe(func(n int, w http.ResponseWriter) bool {
				if n == 1 {
					w.Header().Set("Retry-After", "1")
					kubeStatus(w, 429, "TooManyRequests")
					return true
				}
				return false
			}))
			cs, rt := kubeClient(t, f.URL, 0)
			err := kubeCall(t.Context(), cs, tc.key)
			got, gap := f.executed(tc.key), f.gap(tc.key)
			t.Logf("%s 429 Retry-After: 1, then 200: executed %d in %d client-go calls, gap %v, err %v", tc.key, got, rt.n.Load(), gap.Round(10*time.Millisecond), err)
			if err != nil || got != 2 || rt.n.Load() != tc.calls {
				t.Errorf("executed %d in %d calls, err %v; want 2 in %d", got, rt.n.Load(), err, tc.calls)
			}
			if gap < 900*time.Millisecond {
				t.Errorf("gap %v, want at least 1s (the hint)", gap)
			}
		})
	}
}

// TestKubernetes429Always: every answer a 429 with Retry-After: 0 (0 keeps
// the test short; client-go waits what it says). client-go sends the call
// 11 times (its 10 retries), the create as the read; otelretry adds none,
// as its budget holds retries for 1 s after a 429 whose Retry-After is 0.
func TestKubernetes429Always(t *testing.T) {
	for _, key := range []string{kubeRead, kubeCreate} {
		t.Run(key, func(t *testing.T) {
			f := newCountingServer(t, methodAndPath, kubeServe(func(n int, w http.ResponseWriter) bool {
				w.Header().Set("Retry-After", "0")
				kubeStatus(w, 429, "TooManyRequests")
				return true
			}))
			cs, rt := kubeClient(t, f.URL, 0)
			err := kubeCall(t.Context(), cs, key)
			got := f.executed(key)
			t.Logf("%s 429 Retry-After: 0 every time: executed %d in %d client-go calls, err %v", key, got, rt.n.Load(), err)
			if err == nil || got != 11 || rt.n.Load() != 11 {
				t.Errorf("executed %d in %d calls, err %v; measured 11 in 11 and the 429", got, rt.n.Load(), err)
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
		cs, rt := kubeClient(t, f.URL, 300*time.Millisecond)
		var results otelretry.Results
		ctx, lines := klogLines(otelretry.WithResults(t.Context(), &results))
		err := kubeCall(ctx, cs, kubeRead)
		got := f.executed(kubeRead)
		for _, l := range lines() {
			if strings.Contains(l, "unable to cancel request") {
				t.Errorf("timeout %d logged %q", run, l)
			}
		}
		ops := results.Operations()
		if got != 1 || rt.n.Load() != 1 || !errors.Is(err, context.DeadlineExceeded) || len(ops) != 1 ||
			ops[0].Outcome != attrs.OutcomeDeadlineExceeded || ops[0].Reason != attrs.ReasonCaller {
			t.Errorf("timeout %d: executed %d in %d calls, operations %+v, err %v; want 1 in 1, one deadline_exceeded (caller)", run, got, rt.n.Load(), ops, err)
		}
	}
}

// TestKubernetesTimeoutUnknownCreate: rest.Config.Timeout (300 ms) over a
// hung create, 10 times: 1 execution each (client-go does not resend a
// POST that failed). The error is http.Client's when its timer fires
// first, flattened to text; the result slot reports the unknown write
// every time.
func TestKubernetesTimeoutUnknownCreate(t *testing.T) {
	const creates = 10
	kept, flattened, slot := 0, 0, 0
	for range creates {
		f := newCountingServer(t, methodAndPath, func(k string, n int, w http.ResponseWriter, r *http.Request) { hang(r) })
		cs, rt := kubeClient(t, f.URL, 300*time.Millisecond)
		var results otelretry.Results
		err := kubeCall(otelretry.WithResults(t.Context(), &results), cs, kubeCreate)
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
	t.Logf("%d hung creates, Timeout 300ms: the error was flattened %d times and kept ErrOutcomeUnknown %d times; the slot reported it %d times", creates, flattened, kept, slot)
	if slot != creates {
		t.Errorf("the slot reported the unknown write %d times of %d", slot, creates)
	}
}
