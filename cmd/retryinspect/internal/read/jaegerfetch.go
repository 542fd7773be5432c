// Copyright The otelretry Authors
// SPDX-License-Identifier: Apache-2.0

package read

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"net"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/otelretry/otelretry-go/cmd/retryinspect/internal/model"
	"github.com/otelretry/otelretry-go/internal/redact"
)

// JaegerQuery selects traces through Jaeger's /api/v3 HTTP API: one trace
// by id, or the traces of a service over a lookback window.
type JaegerQuery struct {
	Endpoint string        // base URL of the query service, e.g. http://127.0.0.1:16686
	TraceID  string        // when set, Service, Lookback and Limit are ignored
	Service  string        // service name
	Lookback time.Duration // window ending now
	Limit    int           // maximum number of traces; 0 is DefaultLimit
	MaxBytes int64         // size limit of the answer; 0 is DefaultMaxBytes
}

// DefaultLimit is the number of traces a search asks for when the query
// sets none: /api/v3 has no default of its own (Jaeger's memory store
// refuses a search without query.num_traces).
const DefaultLimit = 100

// The /api/v3 parameters (Jaeger's api_v3 HTTP gateway).
const (
	v3Traces       = "/api/v3/traces"
	v3Service      = "query.service_name"
	v3StartTimeMin = "query.start_time_min"
	v3StartTimeMax = "query.start_time_max"
	v3NumTraces    = "query.num_traces"
	// The traces as stored: unless asked for them raw, Jaeger adjusts the
	// traces it answers, and drops a span that repeats one it has
	// already (a duplicate delivery, which duplicate-request-id finds).
	v3RawTraces       = "raw_traces"
	v3SearchRawTraces = "query.raw_traces"
)

// base parses the endpoint and drops what the query URL must not carry.
func (q JaegerQuery) base() (*url.URL, error) {
	return baseURL("jaeger", q.Endpoint, "http://127.0.0.1:16686")
}

// baseURL parses a backend's endpoint: an http(s) URL naming a host ("http://:1"
// names only a port), its query and fragment, which no query of ours sends,
// dropped. The error names the backend and gives example as the form to use.
func baseURL(backend, endpoint, example string) (*url.URL, error) {
	base, err := url.Parse(endpoint)
	if err != nil || (base.Scheme != "http" && base.Scheme != "https") || base.Hostname() == "" {
		return nil, fmt.Errorf("%s endpoint %q: want an http(s) URL naming a host, such as %s", backend, RedactEndpoint(endpoint), example)
	}
	base.RawQuery, base.ForceQuery, base.Fragment, base.RawFragment = "", false, "", ""
	return base, nil
}

// RedactEndpoint writes a -jaeger URL for messages and the report: its
// userinfo masked whole, as the library's sanitizer masks one (a user
// name alone may be the credential: a token sent as basic
// authentication's), its query and fragment, which the queries never
// send, dropped. Text that is not a URL is replaced whole.
func RedactEndpoint(endpoint string) string {
	u, err := url.Parse(endpoint)
	if err != nil {
		return "(unparsable URL)"
	}
	u.RawQuery, u.ForceQuery, u.Fragment, u.RawFragment = "", false, "", ""
	return redact.URL(u)
}

// appendPath appends suffix, written as it is sent, to u's path as it is
// sent, less one trailing slash: setting Path alone would unescape a base
// URL's escaped bytes ("/a%2Fb" asked as "/a/b").
func appendPath(u *url.URL, suffix string) {
	escaped := strings.TrimSuffix(u.EscapedPath(), "/") + suffix
	u.Path, _ = url.PathUnescape(escaped) // escaped by net/url or as suffix writes it: valid
	u.RawPath = escaped
}

// URL returns the API URL for q at instant now. A search sends the window
// as query.start_time_min/max in RFC 3339, which is what the API reads.
func (q JaegerQuery) URL(now time.Time) (string, error) {
	base, err := q.base()
	if err != nil {
		return "", err
	}
	appendPath(base, v3Traces)
	if q.TraceID != "" {
		appendPath(base, "/"+url.PathEscape(q.TraceID))
		base.RawQuery = v3RawTraces + "=true"
		return base.String(), nil
	}
	v := url.Values{}
	v.Set(v3SearchRawTraces, "true")
	v.Set(v3Service, q.Service)
	v.Set(v3StartTimeMin, now.Add(-q.Lookback).UTC().Format(time.RFC3339Nano))
	v.Set(v3StartTimeMax, now.UTC().Format(time.RFC3339Nano))
	limit := q.Limit
	if limit <= 0 {
		limit = DefaultLimit
	}
	v.Set(v3NumTraces, strconv.Itoa(limit))
	base.RawQuery = v.Encode()
	return base.String(), nil
}

// FetchJaeger runs q against Jaeger's /api/v3 with client (whose Timeout
// bounds the request) and reads the answer. No trace matching is no spans
// and no error. Messages name the endpoint without its password.
func FetchJaeger(ctx context.Context, client *http.Client, q JaegerQuery, now time.Time) ([]model.Span, error) {
	u, err := q.URL(now)
	if err != nil {
		return nil, err
	}
	shown := RedactEndpoint(q.Endpoint)
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u, nil)
	if err != nil {
		return nil, fmt.Errorf("jaeger at %s: %w", shown, err)
	}
	req.Header.Set("Accept", "application/json")
	resp, err := client.Do(req)
	if err != nil {
		return nil, describeFetchError(shown, client.Timeout, err)
	}
	defer resp.Body.Close()
	name := RedactEndpoint(u)
	if resp.StatusCode != http.StatusOK {
		body, _ := io.ReadAll(io.LimitReader(resp.Body, 64<<10))
		var answer jaegerV3Response
		if json.Unmarshal(body, &answer) == nil && answer.Error != nil {
			if resp.StatusCode == http.StatusNotFound && answer.Error.HTTPCode == http.StatusNotFound {
				return nil, nil // Jaeger's answer for "no traces found"
			}
			return nil, fmt.Errorf("jaeger at %s answered %s: %v", shown, resp.Status, answer.Error)
		}
		return nil, fmt.Errorf("jaeger at %s answered %s: %s%s", shown, resp.Status, excerpt(body), v3Hint(resp.StatusCode))
	}
	spans, err := Jaeger(resp.Body, name, q.MaxBytes)
	var nerr net.Error
	if errors.As(err, &nerr) && nerr.Timeout() {
		return nil, fmt.Errorf("jaeger at %s did not finish its answer within %s", shown, client.Timeout)
	}
	return spans, err
}

// v3Hint explains a 404 without Jaeger's error object: the server is not a
// Jaeger query service with /api/v3 (Jaeger before 1.35, or a wrong base
// URL).
func v3Hint(status int) string {
	if status == http.StatusNotFound {
		return " (no " + v3Traces + " there: give the base URL of a Jaeger query service, v1.35 or later)"
	}
	return ""
}

// excerpt is a short, quoted (so control characters are escaped) start of
// a body that is not a Jaeger answer.
func excerpt(body []byte) string {
	text := strings.TrimSpace(string(body))
	if len(text) > 200 {
		text = text[:200] + "..."
	}
	if text == "" {
		return "empty body"
	}
	return strconv.Quote(text)
}

// describeFetchError reports a failed request without repeating its URL:
// the *url.Error's own text would repeat the query URL, which is already
// named through endpoint.
func describeFetchError(endpoint string, timeout time.Duration, err error) error {
	var nerr net.Error
	if errors.As(err, &nerr) && nerr.Timeout() {
		return fmt.Errorf("jaeger at %s did not answer within %s", endpoint, timeout)
	}
	var uerr *url.Error
	if errors.As(err, &uerr) {
		err = uerr.Err
	}
	return fmt.Errorf("cannot reach jaeger at %s: %w", endpoint, err)
}

// maxLookbackDays is the longest lookback in days that a time.Duration
// holds (about 292 years).
const maxLookbackDays = math.MaxInt64 / int64(24*time.Hour)

// ParseLookback parses a lookback window: a Go duration ("90m", "1h") or a
// number of days ("2d"), as the Jaeger UI writes it. A window longer than
// a time.Duration holds (about 106751 days) is refused as such, never
// wrapped. A sign is no part of it, as of a size (ParseBytes).
func ParseLookback(s string) (time.Duration, error) {
	tooLong := fmt.Errorf("lookback %q: longer than the longest window, %s (%dd)", s, time.Duration(math.MaxInt64), maxLookbackDays)
	if strings.HasPrefix(s, "+") || strings.HasPrefix(s, "-") {
		return 0, fmt.Errorf("lookback %q: want a positive duration such as 30m, 1h or 2d", s)
	}
	if days, ok := strings.CutSuffix(s, "d"); ok {
		n, err := strconv.ParseInt(days, 10, 64)
		var nerr *strconv.NumError
		switch {
		case errors.As(err, &nerr) && errors.Is(nerr.Err, strconv.ErrRange) && !strings.HasPrefix(days, "-"):
			return 0, tooLong
		case err != nil || n <= 0:
			return 0, fmt.Errorf("lookback %q: want a positive duration such as 30m, 1h or 2d", s)
		case n > maxLookbackDays:
			return 0, tooLong
		}
		return time.Duration(n) * 24 * time.Hour, nil
	}
	d, err := time.ParseDuration(s)
	if err != nil && durationSyntax(s) {
		return 0, tooLong // well formed, so it failed on its size
	}
	if err != nil || d <= 0 {
		return 0, fmt.Errorf("lookback %q: want a positive duration such as 30m, 1h or 2d", s)
	}
	return d, nil
}

// durationSyntax reports whether s has the shape time.ParseDuration reads
// (digits, an optional fraction and a unit, repeated, without a sign), so
// that a failure to parse it can only be an overflow.
func durationSyntax(s string) bool {
	if s == "" {
		return false
	}
	for s != "" {
		i := 0
		for i < len(s) && (s[i] >= '0' && s[i] <= '9' || s[i] == '.') {
			i++
		}
		if i == 0 || strings.Count(s[:i], ".") > 1 || s[:i] == "." {
			return false
		}
		s = s[i:]
		j := 0
		for j < len(s) && !(s[j] >= '0' && s[j] <= '9' || s[j] == '.') {
			j++
		}
		switch s[:j] {
		case "ns", "us", "µs", "μs", "ms", "s", "m", "h":
		default:
			return false
		}
		s = s[j:]
	}
	return true
}

// FormatLookback writes d in the Jaeger UI's short form where it can.
func FormatLookback(d time.Duration) string {
	switch {
	case d%(24*time.Hour) == 0:
		return strconv.FormatInt(int64(d/(24*time.Hour)), 10) + "d"
	case d%time.Hour == 0:
		return strconv.FormatInt(int64(d/time.Hour), 10) + "h"
	case d%time.Minute == 0:
		return strconv.FormatInt(int64(d/time.Minute), 10) + "m"
	default:
		return d.String()
	}
}
