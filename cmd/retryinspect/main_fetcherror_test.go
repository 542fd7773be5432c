// Copyright The otelretry Authors
// SPDX-License-Identifier: Apache-2.0

package main

import (
	"bytes"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"
)

// TestABackendsErrorBodyIsQuotedOnce: a backend that answers 500 with a
// JSON body is reported with the body quoted once (Go's %q form), not with
// every backslash of that quoting doubled again by the terminal escape (a
// reviewer's find: writing a backslash doubled, so that text spelling an
// escape could be told from the rune, did that to every quoted message).
func TestABackendsErrorBodyIsQuotedOnce(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.WriteHeader(http.StatusInternalServerError)
		w.Write([]byte(`{"msg":"storage down"}`))
	}))
	defer srv.Close()
	const tr = "4bf92f3577b34da6a3ce929d0e0e4736"
	for _, args := range [][]string{
		{"-jaeger", srv.URL, "-trace", tr},
		{"-victorialogs", srv.URL, "-trace", tr},
	} {
		var out, errOut bytes.Buffer
		c := &command{stdin: strings.NewReader(""), stdout: &out, stderr: &errOut, now: time.Now}
		code := c.run(args)
		if code != exitError {
			t.Errorf("%v: exit %d, want %d", args[0], code, exitError)
		}
		if want := `"{\"msg\":\"storage down\"}"`; !strings.Contains(errOut.String(), want) {
			t.Errorf("%v: stderr %q does not quote the body as %s", args[0], errOut.String(), want)
		}
	}
}
