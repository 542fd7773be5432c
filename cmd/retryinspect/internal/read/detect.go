// Copyright The otelretry Authors
// SPDX-License-Identifier: Apache-2.0

package read

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"slices"

	"github.com/otelretry/otelretry-go/cmd/retryinspect/internal/model"
)

// Format names the format of an input file.
type Format string

// The input file formats.
const (
	// FormatAuto detects the format from the content.
	FormatAuto Format = "auto"
	// FormatStdouttrace is the JSON the stdouttrace exporter writes.
	FormatStdouttrace Format = "stdouttrace"
	// FormatOTLP is OTLP JSON, traces or logs, one request per line.
	FormatOTLP Format = "otlp"
	// FormatJaeger is an answer of Jaeger's APIs saved to a file:
	// /api/traces (the Jaeger UI's "Trace JSON") or /api/v3.
	FormatJaeger Format = "jaeger"
)

// Formats lists the formats File reads, FormatAuto first.
func Formats() []Format { return []Format{FormatAuto, FormatStdouttrace, FormatOTLP, FormatJaeger} }

// errUnknownFormat is what File says of content it cannot tell.
var errUnknownFormat = errors.New("neither stdouttrace JSON (no SpanContext), OTLP JSON (no resourceSpans or resourceLogs) nor a saved Jaeger answer (no data, traceID, spans or result): name the format with -format")

// File reads one input file of format, at most limit bytes
// (DefaultMaxBytes when limit is 0). With FormatAuto it tells the format
// from the first JSON value: an object with resourceSpans or resourceLogs
// (or their proto field names, resource_spans and resource_logs, which
// pdata reads too) is OTLP, an object with SpanContext (or an array) is stdouttrace, an
// object with data, errors, traceID, spans, result or error of their
// types is a saved Jaeger answer. It
// returns the format it read, FormatAuto for an input without any value.
func File(r io.Reader, name string, format Format, limit int64) ([]model.Span, Format, error) {
	if !slices.Contains(Formats(), format) {
		return nil, format, fmt.Errorf("unknown format %q (want one of %v)", format, Formats())
	}
	data, err := readAll(r, name, limit)
	if err != nil {
		return nil, format, err
	}
	if format == FormatAuto {
		var off int
		format, off = detect(data)
		switch {
		case format == FormatAuto && off == len(data): // nothing but space
			return nil, FormatAuto, nil
		case format == FormatAuto:
			// Malformed JSON keeps the decoder's position; well-formed
			// JSON of another kind is refused at its first value.
			if err := decodeValues(data, name, func(json.RawMessage) error { return errUnknownFormat }); err != nil {
				return nil, FormatAuto, err
			}
			return nil, FormatAuto, positionError(data, name, off, errUnknownFormat)
		}
	}
	var spans []model.Span
	switch format {
	case FormatStdouttrace:
		spans, err = Stdout(bytes.NewReader(data), name, int64(len(data))+1)
	case FormatJaeger:
		spans, err = JaegerSaved(bytes.NewReader(data), name, int64(len(data))+1)
	default:
		spans, err = OTLP(bytes.NewReader(data), name, int64(len(data))+1)
	}
	return spans, format, err
}

// detect tells the format of data from the top-level keys of its first
// JSON value, and returns the offset of that value; FormatAuto when it
// cannot tell.
func detect(data []byte) (Format, int) {
	off := len(data) - len(bytes.TrimLeft(data, " \t\r\n"))
	dec := json.NewDecoder(bytes.NewReader(data[off:]))
	tok, err := dec.Token()
	switch {
	case err != nil:
		return FormatAuto, off
	case tok == json.Delim('['):
		return FormatStdouttrace, off
	case tok != json.Delim('{'):
		return FormatAuto, off
	}
	for dec.More() {
		key, err := dec.Token()
		if err != nil {
			return FormatAuto, off
		}
		switch key {
		case "resourceSpans", "resourceLogs", "resource_spans", "resource_logs":
			return FormatOTLP, off
		case "SpanContext":
			return FormatStdouttrace, off
		}
		var value json.RawMessage
		if dec.Decode(&value) != nil {
			return FormatAuto, off
		}
		if jaegerKeys[key.(string)] == value[0] || key == "data" && value[0] == 'n' {
			return FormatJaeger, off
		}
	}
	return FormatAuto, off
}

// jaegerKeys are the top-level keys of Jaeger's answers, each with how its
// value starts: /api/traces' data (or null) and errors, a trace's traceID
// and spans, /api/v3's result and error. A key of another meaning (a log
// line's error text) is not taken for them.
var jaegerKeys = map[string]byte{"data": '[', "errors": '[', "traceID": '"', "spans": '[', "result": '{', "error": '{'}
