package read

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/otelretry/otelretry-go/cmd/retryinspect/internal/model"
)

// JaegerQuery selects traces from the Jaeger query API: one trace by id,
// or the traces of a service over a lookback window.
type JaegerQuery struct {
	Endpoint string        // base URL of the query service, e.g. http://127.0.0.1:16686
	TraceID  string        // when set, Service, Lookback and Limit are ignored
	Service  string        // service name
	Lookback time.Duration // window ending now
	Limit    int           // maximum number of traces; 0 leaves Jaeger's default
}

// URL returns the API URL for q at instant now. The search sends the
// window as start/end in microseconds, which is what the API reads, and
// lookback as well for readability (the API itself ignores it).
func (q JaegerQuery) URL(now time.Time) (string, error) {
	base, err := url.Parse(q.Endpoint)
	if err != nil || (base.Scheme != "http" && base.Scheme != "https") || base.Host == "" {
		return "", fmt.Errorf("jaeger endpoint %q: want an http(s) URL such as http://127.0.0.1:16686", q.Endpoint)
	}
	base.RawQuery, base.Fragment = "", ""
	base.Path = strings.TrimSuffix(base.Path, "/") + "/api/traces"
	if q.TraceID != "" {
		base.Path += "/" + url.PathEscape(q.TraceID)
		return base.String(), nil
	}
	v := url.Values{}
	v.Set("service", q.Service)
	v.Set("lookback", FormatLookback(q.Lookback))
	v.Set("start", strconv.FormatInt(now.Add(-q.Lookback).UnixMicro(), 10))
	v.Set("end", strconv.FormatInt(now.UnixMicro(), 10))
	if q.Limit > 0 {
		v.Set("limit", strconv.Itoa(q.Limit))
	}
	base.RawQuery = v.Encode()
	return base.String(), nil
}

// FetchJaeger runs q against the Jaeger query API with client (whose
// Timeout bounds the request) and reads the answer.
func FetchJaeger(ctx context.Context, client *http.Client, q JaegerQuery, now time.Time) ([]model.Span, []string, error) {
	u, err := q.URL(now)
	if err != nil {
		return nil, nil, err
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u, nil)
	if err != nil {
		return nil, nil, err
	}
	req.Header.Set("Accept", "application/json")
	resp, err := client.Do(req)
	if err != nil {
		return nil, nil, describeFetchError(q.Endpoint, client.Timeout, err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		body, _ := io.ReadAll(io.LimitReader(resp.Body, 64<<10))
		return nil, nil, fmt.Errorf("jaeger at %s answered %s: %s", q.Endpoint, resp.Status, jaegerErrorDetail(body))
	}
	return Jaeger(resp.Body, u)
}

// jaegerErrorDetail extracts the messages of an error answer, or a short
// excerpt of a body that is not a Jaeger API response.
func jaegerErrorDetail(body []byte) string {
	var resp jaegerResponse
	if json.Unmarshal(body, &resp) == nil && len(resp.Errors) > 0 {
		msgs := make([]string, len(resp.Errors))
		for i, e := range resp.Errors {
			msgs[i] = e.String()
		}
		return strings.Join(msgs, "; ")
	}
	text := strings.TrimSpace(string(body))
	if len(text) > 200 {
		text = text[:200] + "..."
	}
	if text == "" {
		return "empty body"
	}
	return strconv.Quote(text)
}

func describeFetchError(endpoint string, timeout time.Duration, err error) error {
	var nerr net.Error
	if errors.As(err, &nerr) && nerr.Timeout() {
		return fmt.Errorf("jaeger at %s did not answer within %s: %w", endpoint, timeout, err)
	}
	return fmt.Errorf("cannot reach jaeger at %s: %w", endpoint, err)
}

// ParseLookback parses a lookback window: a Go duration ("90m", "1h") or a
// number of days ("2d"), as the Jaeger UI writes it.
func ParseLookback(s string) (time.Duration, error) {
	var d time.Duration
	var err error
	if days, ok := strings.CutSuffix(s, "d"); ok {
		var n int
		n, err = strconv.Atoi(days)
		d = time.Duration(n) * 24 * time.Hour
	} else {
		d, err = time.ParseDuration(s)
	}
	if err != nil || d <= 0 {
		return 0, fmt.Errorf("lookback %q: want a positive duration such as 30m, 1h or 2d", s)
	}
	return d, nil
}

// FormatLookback writes d in the Jaeger UI's short form where it can.
func FormatLookback(d time.Duration) string {
	switch {
	case d%(24*time.Hour) == 0:
		return strconv.Itoa(int(d/(24*time.Hour))) + "d"
	case d%time.Hour == 0:
		return strconv.Itoa(int(d/time.Hour)) + "h"
	case d%time.Minute == 0:
		return strconv.Itoa(int(d/time.Minute)) + "m"
	default:
		return d.String()
	}
}
