// Package read turns the three input formats of retryinspect into the
// neutral span model: the JSON the stdouttrace exporter writes, OTLP JSON as
// the Collector's file exporter writes it, and the Jaeger query API's JSON.
//
// Every decoding error carries the input name and a line:column position.
package read

import (
	"github.com/otelretry/otelretry-go/cmd/retryinspect/internal/model"

	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
)

// maxInput bounds what a reader accepts, so a wrong path (a device, a huge
// unrelated file) fails clearly instead of exhausting memory.
const maxInput = 1 << 30

// PositionError is a malformed-input error at a position of a named input.
type PositionError struct {
	Name      string // file name, "stdin" or a URL
	Line, Col int    // 1-based
	Err       error
}

func (e *PositionError) Error() string {
	return fmt.Sprintf("%s:%d:%d: %v", e.Name, e.Line, e.Col, e.Err)
}

func (e *PositionError) Unwrap() error { return e.Err }

// fieldError is a semantic error inside one decoded value; it is reported
// at the start of that value with the path of the offending field.
type fieldError struct {
	path string
	err  error
}

func (e *fieldError) Error() string { return e.path + ": " + e.err.Error() }

func fieldErrorf(path, format string, args ...any) error {
	return &fieldError{path: path, err: fmt.Errorf(format, args...)}
}

// readAll reads the whole input, bounded by maxInput.
func readAll(r io.Reader, name string) ([]byte, error) {
	data, err := io.ReadAll(io.LimitReader(r, maxInput+1))
	if err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	if len(data) > maxInput {
		return nil, fmt.Errorf("%s: input larger than %d bytes", name, maxInput)
	}
	return data, nil
}

// decodeValues decodes the concatenated JSON values of data (one per line,
// pretty-printed or not) and calls fn with each one. Errors from the
// decoder or from fn are returned as *PositionError.
func decodeValues(data []byte, name string, fn func(raw json.RawMessage) error) error {
	dec := json.NewDecoder(bytes.NewReader(data))
	for {
		var raw json.RawMessage
		err := dec.Decode(&raw)
		if err == io.EOF {
			return nil
		}
		if err != nil {
			var syn *json.SyntaxError
			switch {
			case errors.As(err, &syn):
				return positionError(data, name, int(syn.Offset)-1, err)
			case errors.Is(err, io.ErrUnexpectedEOF):
				return positionError(data, name, len(data), errors.New("unexpected end of input"))
			default:
				return positionError(data, name, int(dec.InputOffset()), err)
			}
		}
		start := int(dec.InputOffset()) - len(raw)
		if err := fn(raw); err != nil {
			var typ *json.UnmarshalTypeError
			if errors.As(err, &typ) {
				return positionError(data, name, start+int(typ.Offset)-1, err)
			}
			return positionError(data, name, start, err)
		}
	}
}

// positionError locates byte offset off of data as line and column.
func positionError(data []byte, name string, off int, err error) error {
	off = max(0, min(off, len(data)))
	before := data[:off]
	line := bytes.Count(before, []byte{'\n'}) + 1
	col := off - (bytes.LastIndexByte(before, '\n') + 1) + 1
	return &PositionError{Name: name, Line: line, Col: col, Err: err}
}

// unmarshalInt decodes a JSON number or a string holding a decimal
// integer, as OTLP JSON writes 64-bit integers either way.
func unmarshalInt(raw json.RawMessage) (int64, error) {
	var n json.Number
	if len(raw) > 0 && raw[0] == '"' {
		var s string
		if err := json.Unmarshal(raw, &s); err != nil {
			return 0, err
		}
		n = json.Number(s)
	} else if err := json.Unmarshal(raw, &n); err != nil {
		return 0, err
	}
	return n.Int64()
}

// spanIDs normalizes a span's trace and span ids, naming the offending
// field of the input format when one is not a hex id.
func spanIDs(traceField, traceID, spanField, spanID string) (string, string, error) {
	t, ok := model.TraceID(traceID)
	if !ok || t == "" {
		return "", "", fieldErrorf(traceField, "invalid trace id %q", traceID)
	}
	sp, ok := model.SpanID(spanID)
	if !ok || sp == "" {
		return "", "", fieldErrorf(spanField, "invalid span id %q", spanID)
	}
	return t, sp, nil
}
