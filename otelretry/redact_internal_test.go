// Copyright The otelretry Authors
// SPDX-License-Identifier: Apache-2.0

package otelretry

import (
	"errors"
	"fmt"
	"net/url"
	"strings"
	"testing"

	"github.com/otelretry/otelretry-go/attrs"
)

// A Transport's last sanitized URL is reused only for a URL equal to it in
// every field: a URL that differs in any one field, or a nil URL, is
// sanitized anew, and what comes back is always SanitizeURL's.
func TestLastURLReusesOnlyAnEqualURL(t *testing.T) {
	base := url.URL{Scheme: "https", Host: "api.test", Path: "/v1/items", RawQuery: "id=42"}
	variants := []func(u *url.URL){
		func(*url.URL) {},
		func(u *url.URL) { u.Scheme = "http" },
		func(u *url.URL) { u.User = url.UserPassword("bob", "PW") },
		func(u *url.URL) { u.User = url.User("bob") },
		func(u *url.URL) { u.Host = "bob:PW@api.test" },
		func(u *url.URL) { u.Path = "/v1/other" },
		func(u *url.URL) { u.Path, u.RawPath = "/v1/a b", "/v1/a%20b" },
		func(u *url.URL) { u.RawQuery = "id=43&token=SECRET" },
		func(u *url.URL) { u.RawQuery = "" },
		func(u *url.URL) { u.RawQuery, u.ForceQuery = "", true },
		func(u *url.URL) { u.Fragment = "f" },
		func(u *url.URL) { u.Opaque = "//bob:PW@api.test/x" },
		func(u *url.URL) { u.OmitHost = true },
	}
	var last lastURL
	if got := last.sanitize(nil); got != "" {
		t.Errorf("sanitize(nil) = %q, want \"\"", got)
	}
	for round := range 2 {
		for i, change := range variants {
			u := base
			change(&u)
			for range 2 { // a miss, then a hit
				if got, want := last.sanitize(&u), SanitizeURL(&u); got != want {
					t.Errorf("round %d, variant %d: sanitize(%q) = %q, want %q", round, i, u.String(), got, want)
				}
			}
		}
	}
	withPassword := base
	withPassword.User = url.UserPassword("bob", "PW")
	last.sanitize(&withPassword)
	if e := last.last.Load(); e == nil || e.u.User != nil {
		t.Errorf("kept %+v after a URL with userinfo, want the URL before it", e)
	}
	same := base // an equal URL in other memory
	if allocs := testing.AllocsPerRun(10, func() { last.sanitize(&same) }); allocs != 0 {
		t.Errorf("sanitizing the last URL again allocates %v, want 0", allocs)
	}
}

// The scrub replaces a QUIC peer's reason phrase and keeps the error
// code; an error quic-go marks "(local)", the client's own, is left as it
// is, whatever its code.
func TestScrubOfQUICErrorsTakesThePeersTextOnly(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{"H3_INTERNAL_ERROR: sid=s3cr3t", `H3_INTERNAL_ERROR: "REDACTED"`},
		{"QPACK_DECOMPRESSION_FAILED: sid=s3cr3t", `QPACK_DECOMPRESSION_FAILED: "REDACTED"`},
		{"H3 error (0x1337): sid=s3cr3t", `H3 error (0x1337): "REDACTED"`},
		{"Application error 0x100 (remote): sid=s3cr3t", `Application error 0x100 (remote): "REDACTED"`},
		{"FRAME_ENCODING_ERROR (remote) (frame type: 0x1c): sid=s3cr3t", `FRAME_ENCODING_ERROR (remote) (frame type: 0x1c): "REDACTED"`},
		{"H3_REQUEST_CANCELLED (local): client gave up", "H3_REQUEST_CANCELLED (local): client gave up"},
		{"H3 error (0x1337) (local): client gave up", "H3 error (0x1337) (local): client gave up"},
		{"Application error 0x100 (local): client gave up", "Application error 0x100 (local): client gave up"},
		{"PROTOCOL_VIOLATION (local) (frame type: 0x1c): client gave up", "PROTOCOL_VIOLATION (local) (frame type: 0x1c): client gave up"},
	} {
		if got := scrubHeaderLines(tc.in); got != tc.want {
			t.Errorf("scrubHeaderLines(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
}

// BenchmarkScrubOfUnclosedCodes: prefixes whose code is never closed, over
// and over; each reads at most 32 bytes of its code, so the time is linear
// in the message (each read to the end of it, 512 KiB took 5 s).
func BenchmarkScrubOfUnclosedCodes(b *testing.B) {
	for _, unit := range []string{"H3 error (0x1)", "(remote) (frame type: ", "QPACK_QPACK_",
		`invalid header field value for a: \"`, "invalid header field value for a b", `too many transfer encodings: [\"`} {
		for _, size := range []int{64 << 10, 512 << 10} {
			msg := strings.Repeat(unit, size/len(unit))
			b.Run(fmt.Sprintf("%s/%dKiB", strings.TrimSpace(unit[:5]), size>>10), func(b *testing.B) {
				for b.Loop() {
					scrubHeaderLines(msg)
				}
			})
		}
	}
}

// Every prefix of quotedResponseText holds one of the words
// quotesResponseText looks for, so that a message holding only it is
// scanned: quic-go's "invalid trailer field name: " held none, and its
// entry never ran.
func TestEveryQuotedTextPrefixIsLookedFor(t *testing.T) {
	for _, q := range quotedResponseText {
		if !quotesResponseText(q.prefix) {
			t.Errorf("a message holding %q alone is not scanned", q.prefix)
		}
	}
}

// FuzzScrubKeepsNoQuotedServerValue: a server's text, as net/http,
// x/net/http2 and quic-go print it after each prefix, never survives the
// scrub, wherever it sits in a realistic error message.
func FuzzScrubKeepsNoQuotedServerValue(f *testing.F) {
	f.Add("Get", "Retry-After", "a", "b", "", uint8(0), uint8(0))
	f.Add("Post", "x", "a=", ";b", ": EOF", uint8(11), uint8(1))
	f.Add("Get", "te", "", "", "", uint8(12), uint8(2))
	f.Add("Get", "", "0x1c", "", "", uint8(25), uint8(0))
	f.Fuzz(func(t *testing.T, method, name, a, b, after string, which, wrap uint8) {
		const mark = "SECRETX"
		if strings.Contains(method+name+after, "SECRET") || strings.Contains(a+b, "SECRET") {
			return
		}
		q := quotedResponseText[int(which)%len(quotedResponseText)]
		value := a + mark + b
		if q.name && headerToken(value) {
			return // a name that is a token is kept, by design
		}
		var server string // what follows the prefix
		switch {
		case q.code != "":
			code := "0x1c"
			if q.code == codeName {
				code = "INTERNAL_ERROR"
			}
			server = code + q.restAfter + value
			after = "" // quic-go prints it last
		case q.rest:
			server = value
			after = ""
		case q.name && strings.HasSuffix(q.prefix, ": "): // quic-go: name, then its value quoted, last
			if q.prefix == "invalid header field name: " || q.prefix == "invalid trailer field name: " {
				server = fmt.Sprintf("%q", value)
			} else {
				server = name + ": " + fmt.Sprintf("%q", value)
			}
			after = ""
		case q.line:
			server = fmt.Sprintf("%q", name+": "+value)
		case strings.HasPrefix(q.prefix, "too many") || strings.HasPrefix(q.prefix, "multiple"):
			server = fmt.Sprintf("%q", []string{name, value})
		default:
			server = fmt.Sprintf("%q", value)
		}
		inner := q.prefix + server
		var msg string
		switch wrap % 4 {
		case 0:
			msg = fmt.Sprintf("%s %q: net/http: HTTP/1.x transport connection broken: %s", method, "http://h.test/v1", inner)
		case 1:
			msg = inner
		case 2:
			msg = "otelretry: attempt 2: " + inner
		case 3:
			msg = fmt.Sprintf("%s %q: %s", method, "http://h.test/v1?"+name, inner)
		}
		if after != "" && q.line || !q.rest && q.code == "" && !(q.name && strings.HasSuffix(q.prefix, ": ")) {
			msg += after
		}
		got := sanitizedMessage(errors.New(msg), requestText{})
		if strings.Contains(got, mark) {
			t.Fatalf("sanitizedMessage(%q)\n = %q keeps the server's value", msg, got)
		}
		if got := scrubHeaderLines(msg); strings.Contains(got, mark) {
			t.Fatalf("scrubHeaderLines(%q)\n = %q keeps the server's value", msg, got)
		}
	})
}

// BenchmarkSanitizeErrorText: a failed attempt's text of 16 KiB to 1 MiB
// (a server's status line, quoted by net/http), against a URL with 50
// query values, and against one value of a sixteenth of the text that the
// text misses by its last byte. Both grow linearly with the text (the
// second took 16 s at 128 KiB when each value was tried at each offset).
func BenchmarkSanitizeErrorText(b *testing.B) {
	var q []string
	for i := range 50 {
		q = append(q, fmt.Sprintf("p%d=%024d", i, i))
	}
	values, _ := url.Parse("https://api.test/v1/items?" + strings.Join(q, "&"))
	for _, size := range []int{16 << 10, 128 << 10, 1 << 20} {
		prose := `malformed HTTP response "` + strings.Repeat("connection reset by peer ", size/25) + `"`
		b.Run(fmt.Sprintf("text=%dKiB/values=50", size>>10), func(b *testing.B) {
			for b.Loop() {
				_ = sanitizeErrorText(prose, nil, values)
			}
		})
		// A server's JSON quoted in an error: escapes on every line, read
		// with them decoded once and twice.
		quoted := strings.Repeat(`{\"error\":\"reset \u0026 retry\"}\n`, size/30)
		b.Run(fmt.Sprintf("text=%dKiB/values=50/json", size>>10), func(b *testing.B) {
			for b.Loop() {
				_ = sanitizeErrorText(quoted, nil, values)
			}
		})
		nearMiss, _ := url.Parse("https://api.test/v1/blob?data=" + strings.Repeat("A", size/16) + "B")
		as := `malformed HTTP response "` + strings.Repeat("A", size) + `"`
		b.Run(fmt.Sprintf("text=%dKiB/near-miss", size>>10), func(b *testing.B) {
			for b.Loop() {
				_ = sanitizeErrorText(as, nil, nearMiss)
			}
		})
	}
}

// FuzzAQueryValueInAnySpelling: a query value of 8 bytes or more, which an
// error repeats in one of the spellings an error may give it (as written,
// decoded, escaped once to three times, '+' and spaces swapped) amid other
// text, is not in the sanitized text. Not read (docs/telemetry.md): an
// escaped value right after a '%' that its first bytes make an escape.
func FuzzAQueryValueInAnySpelling(f *testing.F) {
	f.Add("SIG+PART/1%3D=", "cache miss for ", uint8(0))
	f.Add("AKIA%2F20240101", "open /c/", uint8(3))
	f.Add("deadbeefcafe0123", "", uint8(5))
	f.Fuzz(func(t *testing.T, value, around string, spelling uint8) {
		u, err := url.Parse("https://api.test/x?k=" + url.QueryEscape(value) + "&other=1")
		if err != nil || len(value) < minCredentialPart || strings.ContainsAny(value, "\x00") {
			return
		}
		v := u.Query().Get("k")
		var spelled string
		switch spelling % 6 {
		case 0:
			spelled = v
		case 1:
			spelled = url.QueryEscape(v)
		case 2:
			spelled = url.PathEscape(v)
		case 3:
			spelled = url.QueryEscape(url.QueryEscape(url.QueryEscape(v)))
		case 4:
			spelled = strings.ReplaceAll(v, " ", "+")
		case 5:
			spelled = url.QueryEscape(u.String())
		}
		if i := strings.LastIndexByte(around, '%'); i >= 0 && len(around)-i <= 2 && spelled != v {
			return // the '%' and the value's first bytes decode as one
		}
		got := sanitizeErrorText(around+spelled+around, nil, u)
		if strings.Contains(strings.ReplaceAll(got, attrs.Redacted, "\x00"), spelled) { // not of REDACTED and its neighbours
			t.Fatalf("value %q spelled %q kept: %q", v, spelled, got)
		}
	})
}

// A server's text quoted again by a layer above (%q or JSON of net/http's
// error) is read once unescaped and replaced escaped again: its name kept
// where it is a token, its quotes ended where they end (an escaped quote of
// its own does not end it), the rest of the message taken when they never
// end.
func TestScrubOfRequotedServerText(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{`e: "malformed MIME header line: \"Set-Cookie: sid=SECRET\\x7f\""`, `e: "malformed MIME header line: \"Set-Cookie: REDACTED\""`},
		{`{"e":"malformed MIME header line: \"Set-Cookie: a=\\\"SECRET\\\" b\""} tail`, `{"e":"malformed MIME header line: \"Set-Cookie: REDACTED\""} tail`},
		{`e: "malformed MIME header line: \"Set-Cookie: SECRET\\\\\" tail`, `e: "malformed MIME header line: \"Set-Cookie: REDACTED\" tail`},
		{`e: "malformed MIME header line: \"Set-Cookie: SECRET never ends`, `e: "malformed MIME header line: "REDACTED"`},
		{`e: "invalid header field name \"X-SECRET\u0000\"" tail`, `e: "invalid header field name \"REDACTED\"" tail`},
		{`e: "invalid header field name \"X-Name\"" tail`, `e: "invalid header field name \"X-Name\"" tail`},
		{`e: "too many transfer encodings: [\"chunked\" \"SECRET\"]: tail"`, `e: "too many transfer encodings: \"REDACTED\": tail"`},
		{`e: "too many transfer encodings: [\"chunked\" \"SECRET never ends`, `e: "too many transfer encodings: "REDACTED"`},
	} {
		if got := scrubHeaderLines(tc.in); got != tc.want {
			t.Errorf("scrubHeaderLines(%q)\n = %q\nwant %q", tc.in, got, tc.want)
		}
	}
}
