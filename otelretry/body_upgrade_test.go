// Copyright The otelretry Authors
// SPDX-License-Identifier: Apache-2.0

package otelretry_test

import (
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/otelretry/otelretry-go/attrs"
	"github.com/otelretry/otelretry-go/internal/spantest"
)

// A 101 connection that breaks as the caller writes to it (the peer reset
// it) leaves error.type on the CLIENT span in the vocabulary, as a read
// that breaks does: the write error's class, never the Go type name
// otelhttp's wrapper writes (*net.OpError, before).
func TestAnUpgradedConnectionsWriteErrorKeepsErrorTypeInTheVocabulary(t *testing.T) {
	closed := make(chan struct{})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		conn, brw, err := http.NewResponseController(w).Hijack()
		if err != nil {
			t.Error(err)
			return
		}
		brw.WriteString("HTTP/1.1 101 Switching Protocols\r\nConnection: Upgrade\r\nUpgrade: echo\r\n\r\n")
		brw.Flush()
		if tc, ok := conn.(*net.TCPConn); ok {
			tc.SetLinger(0) // close with a reset
		}
		conn.Close()
		close(closed)
	}))
	defer srv.Close()
	resp, rec := upgradeThrough(t, srv)
	if resp.StatusCode != http.StatusSwitchingProtocols {
		t.Fatalf("status %d", resp.StatusCode)
	}
	rw := resp.Body.(io.ReadWriteCloser)
	<-closed
	time.Sleep(50 * time.Millisecond)
	var werr error
	for i := 0; i < 100 && werr == nil; i++ {
		_, werr = rw.Write([]byte("hello\n"))
		if werr == nil {
			time.Sleep(10 * time.Millisecond)
		}
	}
	if werr == nil {
		t.Fatal("no write error; the scenario did not happen")
	}
	rw.Close()

	att := spantest.Attempts(rec.Ended())
	if len(att) != 1 {
		t.Fatalf("%d attempt spans", len(att))
	}
	et, has := spantest.Attr(att[0], attrs.ErrorTypeKey)
	t.Logf("write error %v (%T); CLIENT span error.type=%q status=%v", werr, werr, et.AsString(), att[0].Status())
	vocab := map[string]bool{}
	for _, c := range []attrs.ErrorClass{attrs.ErrorClassTimeout, attrs.ErrorClassConnectionRefused, attrs.ErrorClassConnectionReset,
		attrs.ErrorClassDNS, attrs.ErrorClassTLS, attrs.ErrorClassCanceled, attrs.ErrorClassRefusedStream, attrs.ErrorClassOther, attrs.ErrorClassRaceLost} {
		vocab[string(c)] = true
	}
	if has && !vocab[et.AsString()] {
		t.Errorf("CLIENT span of a 101 whose connection broke on a write carries error.type %q, outside the vocabulary (an error class)", et.AsString())
	}
}
