// Copyright The otelretry Authors
// SPDX-License-Identifier: Apache-2.0

package sdkclients

import (
	"io"
	"net"
	"net/http"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/otelretry/otelretry-go/attrs"
	"github.com/otelretry/otelretry-go/otelretry"
)

// TestKubernetes500WithRetryAfterLeftToClientGo: a GET answered 500 with
// Retry-After: 0 (a whole number of seconds), then 200. leaveToClientGo
// (kubernetesrecipe.go) leaves "a 429 or a 5xx whose Retry-After is a
// whole number of seconds" to client-go: 500 is a 5xx, so client-go
// resends it (2 calls), and otelretry does not retry it inside the first,
// also where the user has otelretry retry a 500 (WithRetryableStatuses,
// passed to the recipe). At otelretry's default statuses (408, 429, 502,
// 503, 504) a 500 is no retry of otelretry's anyway.
func TestKubernetes500WithRetryAfterLeftToClientGo(t *testing.T) {
	f := newCountingServer(t, methodAndPath, kubeServe(func(n int, w http.ResponseWriter) bool {
		if n == 1 {
			w.Header().Set("Retry-After", "0")
			kubeStatus(w, 500, "InternalError")
			return true
		}
		return false
	}))
	cs, rt := kubeClient(t, f.URL, 0, recipe, otelretry.WithRetryableStatuses(500, 502, 503, 504))
	err := kubeCall(t.Context(), cs, kubeRead)
	got := f.executed(kubeRead)
	t.Logf("recipe: GET 500 Retry-After: 0, then 200: executed %d in %d client-go calls, err %v", got, rt.n.Load(), err)
	if err != nil || got != 2 || rt.n.Load() != 2 {
		t.Errorf("executed %d in %d calls, err %v; want 2 in 2 (client-go's resend, not otelretry's)", got, rt.n.Load(), err)
	}
}

// TestKubernetesResetDeleteRetriedByOtelretry: a DELETE declared
// idempotent (WithIdempotentMethods) whose connection is reset once.
// client-go resends only a GET that lost its connection
// (leaveToClientGo: "a GET whose connection was lost"), so otelretry keeps
// the retry of any other verb: 2 executions in 1 client-go call, no error.
func TestKubernetesResetDeleteRetriedByOtelretry(t *testing.T) {
	const key = "DELETE /api/v1/namespaces/default/configmaps/cm1"
	f := newCountingServer(t, methodAndPath, func(k string, n int, w http.ResponseWriter, r *http.Request) {
		if n == 1 {
			conn, _, err := w.(http.Hijacker).Hijack()
			if err != nil {
				return
			}
			if tc, ok := conn.(*net.TCPConn); ok {
				tc.SetLinger(0) // the close sends a RST
			}
			conn.Close()
			return
		}
		w.Header().Set("Content-Type", "application/json")
		io.WriteString(w, `{"kind":"Status","apiVersion":"v1","metadata":{},"status":"Success","code":200}`)
	})
	cs, rt := kubeClient(t, f.URL, 0, recipe, otelretry.WithIdempotentMethods("DELETE"))
	err := cs.CoreV1().ConfigMaps("default").Delete(t.Context(), "cm1", metav1.DeleteOptions{})
	got := f.executed(key)
	t.Logf("recipe: DELETE reset, then 200: executed %d in %d client-go calls, err %v", got, rt.n.Load(), err)
	if err != nil || got != 2 || rt.n.Load() != 1 {
		t.Errorf("executed %d in %d calls, err %v; want 2 in 1 and no error (otelretry retries the DELETE)", got, rt.n.Load(), err)
	}
}

// TestKubernetesWatchKeepsTheCallersIntent: a watch whose caller gave an
// Intent with a Deadline of 700ms. watchesToClientGo keeps "the caller's"
// Intent (only MaxAttempts set to 1): the operation's limit is 700ms, not
// the Transport's 2s.
func TestKubernetesWatchKeepsTheCallersIntent(t *testing.T) {
	f := newCountingServer(t, methodAndPath, func(k string, n int, w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(200) // an empty watch stream, ended at once
	})
	log, opt := newSpanLog()
	cs, _ := kubeClient(t, f.URL, 0, recipe, opt)
	ctx := otelretry.WithIntent(t.Context(), otelretry.Intent{Deadline: 700 * time.Millisecond})
	w, err := cs.CoreV1().ConfigMaps("default").Watch(ctx, metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	for range w.ResultChan() {
	}
	w.Stop()
	ops := log.operations()
	if len(ops) == 0 {
		t.Fatal("no operation span")
	}
	for i, op := range ops {
		d := op[attrs.DeadlineMsKey].AsInt64()
		t.Logf("watch operation %d: %s=%d, attempts %d", i, attrs.DeadlineMsKey, d, op[attrs.AttemptsKey].AsInt64())
		if d != 700 {
			t.Errorf("operation %d: deadline %dms; want 700 (the caller's Intent)", i, d)
		}
	}
}
