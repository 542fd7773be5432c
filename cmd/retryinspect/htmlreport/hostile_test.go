// Copyright The otelretry Authors
// SPDX-License-Identifier: Apache-2.0

package htmlreport

import (
	"bytes"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/trace"
	"golang.org/x/net/html"

	"github.com/otelretry/otelretry-go/attrs"
	"github.com/otelretry/otelretry-go/cmd/retryinspect/internal/tracefixture"
)

const hostile = "</script><script>alert(1)</script><!--x--><img src=x onerror=alert(2)>\"'`\u202e\u2066\x1b[31m"

func hostileOp(i int, id, method, url, peer string) tracefixture.Span {
	start := time.Duration(i) * time.Millisecond
	at := func(n int, status int64, dec attrs.Decision, remain int64) tracefixture.Span {
		as := []attribute.KeyValue{
			attrs.OperationIDKey.String(id), attrs.RequestIDKey.String(fmt.Sprintf("%s/attempt-%d", id, n)), attrs.AttemptKey.Int(n),
			attrs.HTTPRequestMethodKey.String(method), attrs.ElapsedMsKey.Int(1),
			attrs.RemainingMsKey.Int64(remain), attrs.DecisionKey.String(string(dec)),
			attribute.String("url.full", url), attribute.String("server.address", peer),
			attribute.String("service.peer.name", peer),
		}
		if status != 0 {
			as = append(as, attrs.HTTPResponseStatusCodeKey.Int64(status))
		} else {
			as = append(as, attribute.String("retry.error_class", hostile))
		}
		return tracefixture.Span{Name: method + " " + url, Kind: trace.SpanKindClient, Start: start + time.Duration(n-1)*2*time.Millisecond,
			End: start + time.Duration(n-1)*2*time.Millisecond + time.Millisecond, Attrs: as,
			Children: []tracefixture.Span{{Name: hostile, Kind: trace.SpanKindServer, Service: hostile + "svc", Start: start + time.Duration(n-1)*2*time.Millisecond, End: start + time.Duration(n-1)*2*time.Millisecond + time.Millisecond}}}
	}
	return tracefixture.Span{Name: "retry " + hostile + url, Start: start, End: start + 5*time.Millisecond, Attrs: []attribute.KeyValue{
		attrs.OperationIDKey.String(id), attrs.OutcomeKey.String(hostile), attribute.String("url.full", url),
		attrs.HTTPRequestMethodKey.String(method), attribute.Int("retry.deadline_ms", 400),
	}, Children: []tracefixture.Span{at(1, 503, attrs.DecisionRetry, 400), at(2, 0, attrs.Decision(hostile), 300), at(3, 200, attrs.DecisionReturn, 200)}}
}

func hostileReport(t testing.TB, n int) (*Report, []byte) {
	t.Helper()
	var roots []tracefixture.Span
	for i := range n {
		id := fmt.Sprintf("%s-%d", hostile, i)
		roots = append(roots, hostileOp(i, id, hostile, "https://user:pw-secret@h.example/p"+hostile+"?token=tok-secret", hostile+"peer"))
	}
	var spans bytes.Buffer
	if err := tracefixture.WriteStdout(&spans, false, roots...); err != nil {
		t.Fatal(err)
	}
	in := bytes.Clone(spans.Bytes())
	rep, err := ReadStdout(&spans, "src "+hostile)
	if err != nil {
		t.Fatal(err)
	}
	return rep, in
}

func walk(n *html.Node, f func(*html.Node)) {
	f(n)
	for c := n.FirstChild; c != nil; c = c.NextSibling {
		walk(c, f)
	}
}

// TestAHostileInputMakesNoActivePage (a reviewer's run, held): every
// hostile value is text, no script, no handler, no foreign load, no raw
// bidi control, no secret; every id is unique and every in-page link has
// its target.
func TestAHostileInputMakesNoActivePage(t *testing.T) {
	rep, _ := hostileReport(t, 3)
	var page bytes.Buffer
	if err := rep.WriteHTML(&page); err != nil {
		t.Fatal(err)
	}
	s := page.String()
	for _, secret := range []string{"pw-secret", "tok-secret", "\u202e", "\u2066", "\x1b"} {
		if strings.Contains(s, secret) {
			t.Errorf("page holds %q", secret)
		}
	}
	doc, err := html.Parse(strings.NewReader(s))
	if err != nil {
		t.Fatal(err)
	}
	ids := map[string]int{}
	var hrefs []string
	csp := false
	walk(doc, func(n *html.Node) {
		if n.Type != html.ElementNode {
			return
		}
		switch n.Data {
		case "script", "iframe", "object", "embed", "img", "base", "form":
			t.Errorf("element <%s> in the page", n.Data)
		}
		for _, a := range n.Attr {
			k := strings.ToLower(a.Key)
			if strings.HasPrefix(k, "on") {
				t.Errorf("handler %s=%q on <%s>", a.Key, a.Val, n.Data)
			}
			if k == "id" {
				ids[a.Val]++
			}
			if k == "href" || k == "src" || k == "xlink:href" {
				if strings.HasPrefix(a.Val, "#") {
					hrefs = append(hrefs, a.Val[1:])
				} else if a.Val != "data:," {
					t.Errorf("<%s %s=%q> loads something", n.Data, a.Key, a.Val)
				}
			}
			if k == "content" && strings.Contains(a.Val, "default-src 'none'") {
				csp = true
			}
		}
	})
	if !csp {
		t.Error("no Content Security Policy of default-src 'none'")
	}
	for id, c := range ids {
		if c > 1 {
			t.Errorf("id %q appears %d times", id, c)
		}
	}
	for _, h := range hrefs {
		if ids[h] == 0 {
			t.Errorf("link #%s has no target", h)
		}
	}
	if !strings.Contains(s, `&lt;/script&gt;`) {
		t.Errorf("hostile value not shown as text")
	}
}

// TestAReportIsTheSameBytesEveryTimeAndFromManyGoroutines (the Report
// godoc; a reviewer's run): the same input gives the same page, written
// twice, read twice, or written from several goroutines at once.
func TestAReportIsTheSameBytesEveryTimeAndFromManyGoroutines(t *testing.T) {
	rep, in := hostileReport(t, 40)
	var a, b bytes.Buffer
	if err := rep.WriteHTML(&a); err != nil {
		t.Fatal(err)
	}
	if err := rep.WriteHTML(&b); err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(a.Bytes(), b.Bytes()) {
		t.Error("one report written twice differs")
	}
	rep2, err := ReadStdout(bytes.NewReader(in), "src "+hostile)
	if err != nil {
		t.Fatal(err)
	}
	var c bytes.Buffer
	if err := rep2.WriteHTML(&c); err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(a.Bytes(), c.Bytes()) {
		t.Error("one input read twice gives different pages")
	}
	var wg sync.WaitGroup
	outs := make([]bytes.Buffer, 4)
	for i := range outs {
		wg.Go(func() {
			if err := rep.WriteHTML(&outs[i]); err != nil {
				t.Error(err)
			}
			var tx bytes.Buffer
			_ = rep.WriteText(&tx)
		})
	}
	wg.Wait()
	for i := range outs {
		if !bytes.Equal(outs[i].Bytes(), a.Bytes()) {
			t.Errorf("concurrent write %d differs", i)
		}
	}
}
