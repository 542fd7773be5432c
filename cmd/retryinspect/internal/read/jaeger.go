// Copyright The otelretry Authors
// SPDX-License-Identifier: Apache-2.0

package read

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strconv"

	"github.com/otelretry/otelretry-go/cmd/retryinspect/internal/model"
)

// Jaeger's /api/v3 HTTP answer (its api_v3 QueryService through
// grpc-gateway): {"result": TracesData} where TracesData is OTLP JSON as
// the Collector's pdata writes it, or {"error": {...}} with an HTTP error
// status. Jaeger's own query UI reads the same API.
type (
	jaegerV3Response struct {
		Result json.RawMessage `json:"result"`
		Error  *jaegerV3Error  `json:"error"`
	}
	jaegerV3Error struct {
		GRPCCode int    `json:"grpcCode"`
		HTTPCode int    `json:"httpCode"`
		Message  string `json:"message"`
	}
)

func (e *jaegerV3Error) Error() string { return jaegerErrorText(e.Message, e.HTTPCode) }

// jaegerErrorText is an error Jaeger reported: its message quoted (it may
// hold anything) and its HTTP code.
func jaegerErrorText(message string, httpCode int) string {
	msg := "error without a message"
	if message != "" {
		msg = strconv.Quote(message)
	}
	if httpCode != 0 {
		msg = fmt.Sprintf("%s (HTTP %d)", msg, httpCode)
	}
	return msg
}

// jaegerAnnotations prefixes the attributes Jaeger adds to the spans it
// returns (@jaeger@warnings, such as its clock-skew notes, and
// @jaeger@format): they describe Jaeger's handling, not the span, and the
// reader drops them.
const jaegerAnnotations = "@jaeger@"

// errNoTraces is Jaeger's answer to a search or a trace id that matches
// nothing: an error object with HTTP code 404.
var errNoTraces = errors.New("no traces found")

// Jaeger reads one answer of Jaeger's /api/v3/traces or
// /api/v3/traces/{id}, one value or several: each result is decoded as
// OTLP JSON, like the Collector's file output. A value that reports no
// traces gives no spans and no error, and leaves the other values' spans
// alone. It reads at most limit bytes (DefaultMaxBytes when limit is 0).
func Jaeger(r io.Reader, name string, limit int64) ([]model.Span, error) {
	data, err := readAll(r, name, limit)
	if err != nil {
		return nil, err
	}
	var spans []model.Span
	err = decodeValues(data, name, func(raw json.RawMessage) error {
		var err error
		spans, err = appendJaegerV3Found(spans, raw)
		return err
	})
	return spans, err
}

// appendJaegerV3Found is appendJaegerV3, a value that reports no traces
// giving none.
func appendJaegerV3Found(spans []model.Span, raw []byte) ([]model.Span, error) {
	spans, err := appendJaegerV3(spans, raw)
	if errors.Is(err, errNoTraces) {
		return spans, nil
	}
	return spans, err
}

func appendJaegerV3(spans []model.Span, raw []byte) ([]model.Span, error) {
	if raw[0] != '{' {
		return spans, errors.New("not a Jaeger /api/v3 answer: want a JSON object with result")
	}
	var resp jaegerV3Response
	if err := json.Unmarshal(raw, &resp); err != nil {
		return spans, err
	}
	switch {
	case resp.Error != nil && resp.Error.HTTPCode == http.StatusNotFound:
		return spans, errNoTraces
	case resp.Error != nil:
		return spans, fmt.Errorf("jaeger reports: %w", resp.Error)
	case resp.Result == nil || bytes.Equal(resp.Result, []byte("null")):
		return spans, errors.New("not a Jaeger /api/v3 answer: no result (is this the /api/traces JSON? give the query service's base URL to -jaeger)")
	}
	out, err := appendOTLP(spans, resp.Result, jaegerAnnotations)
	if err != nil {
		base := resultOffset(raw)
		var at *offsetError
		if errors.As(err, &at) {
			return out, &offsetError{off: base + at.off, err: prefixError("result", at.err)}
		}
		return out, &offsetError{off: base, err: prefixError("result", err)}
	}
	return out, nil
}

// prefixError puts path before the path of err.
func prefixError(path string, err error) error {
	var fe *fieldError
	if errors.As(err, &fe) {
		return &fieldError{path: path + "." + fe.path, err: fe.err}
	}
	return &fieldError{path: path, err: err}
}

// resultOffset returns the offset of the value of the top-level key
// "result" in raw (0 when it cannot tell).
func resultOffset(raw []byte) int {
	off, _, _ := decodedMember(raw, "result", false) // the one json.Unmarshal read
	return off
}
