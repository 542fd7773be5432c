// Copyright The otelretry Authors
// SPDX-License-Identifier: Apache-2.0

package read

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/otelretry/otelretry-go/attrs"
	"github.com/otelretry/otelretry-go/cmd/retryinspect/internal/model"
)

// VictoriaLogsQuery selects the log events of retry operations through
// VictoriaLogs' /select/logsql/query: those of one trace, or those of a
// service over a lookback window.
type VictoriaLogsQuery struct {
	Endpoint string        // base URL, e.g. http://127.0.0.1:9428
	TraceID  string        // when set, Lookback is ignored
	Service  string        // service.name, a resource attribute; "" for every service
	Lookback time.Duration // window ending now
	Limit    int           // maximum number of log records; 0 is DefaultLogLimit
	MaxBytes int64         // size limit of the answer; 0 is DefaultMaxBytes
}

// DefaultLogLimit is the number of log records a query asks for when it
// sets none: about a thousand operations of a few attempts each.
const DefaultLogLimit = 5000

const vlQueryPath = "/select/logsql/query"

// LogsQL is the LogsQL query q sends: the records carrying an operation id
// (both events do), of the trace, or of the service in the window.
func (q VictoriaLogsQuery) LogsQL() string {
	parts := []string{strconv.Quote(string(attrs.OperationIDKey)) + ":*"}
	if q.TraceID != "" {
		id, _ := model.TraceID(q.TraceID)
		parts = append(parts, vlTraceID+":"+strconv.Quote(id))
	} else {
		parts = append([]string{"_time:" + strconv.FormatInt(max(q.Lookback.Milliseconds(), 1), 10) + "ms"}, parts...)
	}
	if q.Service != "" {
		parts = append(parts, strconv.Quote(serviceNameKey)+":="+strconv.Quote(q.Service))
	}
	return strings.Join(parts, " ")
}

// URL returns the query URL of q.
func (q VictoriaLogsQuery) URL() (string, error) {
	base, err := baseURL("victorialogs", q.Endpoint, "http://127.0.0.1:9428")
	if err != nil {
		return "", err
	}
	appendPath(base, vlQueryPath)
	limit := q.Limit
	if limit <= 0 {
		limit = DefaultLogLimit
	}
	v := url.Values{}
	v.Set("query", q.LogsQL())
	v.Set("limit", strconv.Itoa(limit))
	base.RawQuery = v.Encode()
	return base.String(), nil
}

// FetchVictoriaLogs runs q against VictoriaLogs with client (whose Timeout
// bounds the request) and reads the answer. No record matching is no
// spans and no error. It also says whether the answer holds Limit records,
// so that more may match. Messages name the endpoint without its password.
func FetchVictoriaLogs(ctx context.Context, client *http.Client, q VictoriaLogsQuery) (spans []model.Span, full bool, err error) {
	u, err := q.URL()
	if err != nil {
		return nil, false, err
	}
	shown := RedactEndpoint(q.Endpoint)
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u, nil)
	if err != nil {
		return nil, false, fmt.Errorf("victorialogs at %s: %w", shown, err)
	}
	resp, err := client.Do(req)
	if err != nil {
		var nerr net.Error
		if errors.As(err, &nerr) && nerr.Timeout() {
			return nil, false, fmt.Errorf("victorialogs at %s did not answer within %s", shown, client.Timeout)
		}
		var uerr *url.Error
		if errors.As(err, &uerr) {
			err = uerr.Err
		}
		return nil, false, fmt.Errorf("cannot reach victorialogs at %s: %w", shown, err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		body, _ := io.ReadAll(io.LimitReader(resp.Body, 64<<10))
		hint := ""
		if resp.StatusCode == http.StatusNotFound {
			hint = " (no " + vlQueryPath + " there: give the base URL of VictoriaLogs)"
		}
		return nil, false, fmt.Errorf("victorialogs at %s answered %s: %s%s", shown, resp.Status, excerpt(body), hint)
	}
	spans, err = VictoriaLogs(resp.Body, RedactEndpoint(u), q.MaxBytes)
	var nerr net.Error
	if errors.As(err, &nerr) && nerr.Timeout() {
		return nil, false, fmt.Errorf("victorialogs at %s did not finish its answer within %s", shown, client.Timeout)
	}
	limit := q.Limit
	if limit <= 0 {
		limit = DefaultLogLimit
	}
	return spans, len(spans) >= limit, err
}
