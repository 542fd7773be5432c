// Copyright The otelretry Authors
// SPDX-License-Identifier: Apache-2.0

// Package read turns the input formats of retryinspect into the neutral
// span model: the JSON the stdouttrace exporter writes, and OTLP JSON, which
// both the Collector's file exporter and Jaeger's /api/v3 write. OTLP JSON
// is decoded in one place, by the Collector's own pdata decoder.
//
// Every decoding error carries the input name and a line:column position.
// Every reader stops at a size limit, so that a wrong path (a device, an
// endless body, a huge unrelated file) fails clearly instead of exhausting
// memory.
package read

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"strconv"
	"strings"
	"time"

	"github.com/otelretry/otelretry-go/cmd/retryinspect/internal/model"
)

// DefaultMaxBytes is the size limit of one input (a file, stdin or one
// Jaeger answer) when the caller sets none. It is well above what a Jaeger
// search for a few hundred traces returns, and low enough that reading a
// wrong input stays cheap: decoding takes several times the input's size
// in memory. -max-bytes raises it.
const DefaultMaxBytes = 64 << 20

// TooLargeError reports an input that exceeds the size limit.
type TooLargeError struct {
	Name  string // file name, "stdin" or a URL
	Limit int64  // bytes
}

func (e *TooLargeError) Error() string {
	return fmt.Sprintf("%s: larger than the limit of %s", e.Name, FormatBytes(e.Limit))
}

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
// at the offending field, which its path names (see fieldOffset), with
// that path.
type fieldError struct {
	path string
	err  error
	// firstKey: the reader took a repeated key's first value, spelled
	// exactly (VictoriaLogs'), not encoding/json's last of any case.
	firstKey bool
}

func (e *fieldError) Error() string { return e.path + ": " + e.err.Error() }

func fieldErrorf(path, format string, args ...any) error {
	return &fieldError{path: path, err: fmt.Errorf(format, args...)}
}

// fieldOffset is the offset in the JSON value raw of the field err names,
// when err is a *fieldError (paths nested in its causes are followed in
// turn): its path's keys and indexes ("duration", "Attributes[3] (\"key\")",
// "data[0].spans[5].references[0].traceID", "[2]"), as deep as they can be
// followed; 0 when none can.
func fieldOffset(raw []byte, err error) int {
	off := 0
	for {
		var fe *fieldError
		if !errors.As(err, &fe) {
			return off
		}
		path, _, _ := strings.Cut(fe.path, " ") // a key's annotation
		for seg := range strings.SplitSeq(path, ".") {
			name, index, indexed := strings.Cut(seg, "[")
			if name != "" {
				o, value, ok := decodedMember(raw, name, fe.firstKey)
				if !ok {
					return off
				}
				off, raw = off+o, value
			}
			if !indexed {
				continue
			}
			i, convErr := strconv.Atoi(strings.TrimSuffix(index, "]"))
			o, value, ok := element(raw, i)
			if convErr != nil || !ok {
				return off
			}
			off, raw = off+o, value
		}
		err = fe.err
	}
}

// decodedMember is member as the reader decoded obj: encoding/json takes
// the last of the keys that spell key in any case; a firstKey reader the
// first spelled exactly.
func decodedMember(obj []byte, key string, firstKey bool) (off int, value []byte, ok bool) {
	if firstKey {
		return member(obj, key)
	}
	walkFields(obj, func(k string, o int, v []byte) bool {
		if strings.EqualFold(k, key) {
			off, value, ok = o, v, true
		}
		return true
	})
	return off, value, ok
}

// readAll reads the whole input, at most limit bytes (DefaultMaxBytes
// when limit is 0 or less): one byte more is a *TooLargeError, found
// without reading further.
func readAll(r io.Reader, name string, limit int64) ([]byte, error) {
	if limit <= 0 {
		limit = DefaultMaxBytes
	}
	read := limit // one byte more tells a larger input, but past MaxInt64
	if read < math.MaxInt64 {
		read++
	}
	data, err := io.ReadAll(io.LimitReader(r, read))
	if err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	if int64(len(data)) > limit {
		return nil, &TooLargeError{Name: name, Limit: limit}
	}
	return data, nil
}

// offsetError is an error at a byte offset inside one decoded value.
type offsetError struct {
	off int
	err error
}

func (e *offsetError) Error() string { return e.err.Error() }
func (e *offsetError) Unwrap() error { return e.err }

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
			var (
				typ *json.UnmarshalTypeError
				at  *offsetError
			)
			switch {
			case errors.As(err, &at):
				return positionError(data, name, start+at.off, err)
			case errors.As(err, &typ):
				return positionError(data, name, start+int(typ.Offset)-1, err)
			}
			return positionError(data, name, start+fieldOffset(raw, err), err)
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

// checkTime rejects a timestamp outside years 0 to 9999, which neither
// RFC 3339 nor the -json report can represent, so that the text and JSON
// reports always agree on what was read.
func checkTime(field string, t time.Time) error {
	if t.IsZero() {
		return nil
	}
	if y := t.Year(); y < 0 || y > 9999 {
		return fieldErrorf(field, "timestamp %s is outside years 0 to 9999", strconv.Quote(t.String()))
	}
	return nil
}

// checkSpan applies the checks every reader shares to a converted span.
func checkSpan(s *model.Span, startField, endField string) error {
	if err := checkTime(startField, s.Start); err != nil {
		return err
	}
	return checkTime(endField, s.End)
}

// FormatBytes writes n in the binary units ParseBytes reads.
func FormatBytes(n int64) string {
	for _, u := range byteUnits {
		if n >= u.size && n%u.size == 0 {
			return strconv.FormatInt(n/u.size, 10) + u.name
		}
	}
	return strconv.FormatInt(n, 10) + "B"
}

var byteUnits = []struct {
	name string
	size int64
}{{"GiB", 1 << 30}, {"MiB", 1 << 20}, {"KiB", 1 << 10}}

// ParseBytes reads a size such as 512KiB, 64MiB, 2GiB or 1000 (bytes).
func ParseBytes(s string) (int64, error) {
	num, size := strings.TrimSuffix(s, "B"), int64(1) // bytes: 1000 or 1000B
	for _, u := range byteUnits {
		if n, ok := strings.CutSuffix(s, u.name); ok {
			num, size = n, u.size
			break
		}
	}
	if num == "" || num[0] < '0' || num[0] > '9' {
		num = "" // a sign (ParseInt takes "+") is no size
	}
	n, err := strconv.ParseInt(num, 10, 64)
	if errors.Is(err, strconv.ErrRange) && n > 0 {
		return 0, fmt.Errorf("size %q: too large", s)
	}
	if err != nil || n <= 0 {
		return 0, fmt.Errorf("size %q: want a positive size such as 64MiB, 1GiB or 1000000", s)
	}
	if n > math.MaxInt64/size {
		return 0, fmt.Errorf("size %q: too large", s)
	}
	return n * size, nil
}
