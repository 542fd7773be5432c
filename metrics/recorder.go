// Copyright The otelretry Authors
// SPDX-License-Identifier: Apache-2.0

package metrics

import (
	"context"
	"slices"
	"strings"
	"time"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/metric"
	"go.opentelemetry.io/otel/metric/noop"

	"github.com/otelretry/otelretry-go/attrs"
	"github.com/otelretry/otelretry-go/internal/cowmap"
	"github.com/otelretry/otelretry-go/internal/httpmethod"
)

// Attempt is what the Recorder needs to know about one network attempt.
type Attempt struct {
	Method string
	// ServerAddress labels the series when not empty. The caller decides
	// (the transport sets it only with WithServerAddressInMetrics): each
	// host multiplies the number of series.
	ServerAddress string
	// Labels are extra low-cardinality labels (see NewLabels; a set made
	// otherwise is filtered as NewLabels filters).
	Labels attribute.Set
	// Decision, ErrorClass and ErrorType label the series as given when
	// they are in their closed sets (a status code written without leading
	// zeros), as _OTHER when not.
	Decision attrs.Decision
	// ErrorClass is set when no response arrived; StatusCode otherwise
	// (when both are set, the status code labels the series). A status
	// code labels the series when it is one net/http's client reads (three
	// digits: 1 to 999, a thousand values at most); another is left out,
	// as 0 is.
	ErrorClass attrs.ErrorClass
	StatusCode int
	// ErrorType is the semantic conventions' error.type of an attempt
	// without a 2xx, 3xx or 101 answer (its error class, or its status code,
	// of one to three digits, written without leading zeros), "" otherwise.
	// It labels retry.attempt.duration.
	ErrorType string
	Duration  time.Duration
}

// Operation is what the Recorder needs to know about one finished operation.
type Operation struct {
	Method        string
	ServerAddress string // see Attempt.ServerAddress
	// Labels are extra low-cardinality labels (see Attempt.Labels).
	Labels attribute.Set
	// Outcome and ErrorType label the series as given when they are in
	// their closed sets (a status code written without leading zeros), as
	// _OTHER when not.
	Outcome attrs.Outcome
	// ErrorType is the error.type of an operation that did not end
	// return (its last attempt's error class or status code, or its
	// outcome), "" otherwise. It labels retry.operation.duration.
	ErrorType string
	Attempts  int
	// Duration is the time from the operation's start (RoundTrip called)
	// to its end.
	Duration time.Duration
}

// Recorder records operations and attempts on the seven instruments. It is
// safe for concurrent use. The zero value is not usable; call NewRecorder.
// Each Record method records in the context it is given, so that an
// exemplar points at the span that context carries (the transport gives
// the operation span's; see docs/stack.md).
type Recorder struct {
	// off: the meter is nil or the no-op one (metric/noop), so every
	// instrument is a no-op and recording is skipped outright.
	off bool
	instruments

	operationSets setCache[operationKey]
	attemptSets   setCache[attemptKey] // add: with the status; record: without
	backoffSets   setCache[backoffKey]
	throttledSets setCache[backoffKey] // the same labels
	// allowedKeys are the label keys allowedLabel allowed (see labelsKey).
	allowedKeys cowmap.Map[attribute.Key, struct{}]
}

// NewRecorder creates the instruments on m. A nil m records nothing. When
// m reports an error for an instrument, the Recorder keeps the instrument
// m returned with it (one of an SDK's readers may reject it while the
// others record), or uses a no-op when m returned none, and NewRecorder
// returns the Recorder together with the joined errors, so the caller may
// log them and go on.
func NewRecorder(m metric.Meter) (*Recorder, error) {
	r := &Recorder{}
	_, noopMeter := m.(noop.Meter)
	r.off = m == nil || noopMeter
	r.operationSets.m.Limit = maxCachedSets
	r.attemptSets.m.Limit = maxCachedSets
	r.backoffSets.m.Limit = maxCachedSets
	r.throttledSets.m.Limit = maxCachedSets
	r.allowedKeys.Limit = maxCachedSets
	var err error
	r.instruments, err = newInstruments(m)
	return r, err
}

// Backoff is what the Recorder needs to know about one pause before a retry.
type Backoff struct {
	Method        string
	ServerAddress string
	// Labels are extra low-cardinality labels (see NewLabels).
	Labels   attribute.Set
	Duration time.Duration
}

// Throttled is what the Recorder needs to know about one request a
// client-side throttle refused.
type Throttled struct {
	Method        string
	ServerAddress string
	// Labels are extra low-cardinality labels (see NewLabels).
	Labels attribute.Set
}

// NewLabels returns extra labels for the retry metrics, from a user's
// enricher. Keys that would break the cardinality bound, carry a URL, or
// clash with the Recorder's own labels are dropped, each also as
// Prometheus spells it (retry_outcome for retry.outcome, the dots become
// underscores: two keys one label, whose values the exporters join): ids
// (the operation's, the request's, an idempotency key's value), the
// whole url.* namespace, a bare url, and the legacy http.url and
// http.target, under any case and with blanks or dots around them (a raw
// query may ride in any of them), and the keys the Recorder sets itself,
// with the labels Prometheus writes itself (le, quantile, job, instance,
// otel_scope_*, any beginning with "__") and those that escape to
// underscores alone. The caller's slice is left as it was. The
// caller still owns the rest: every distinct value is a new series, and a
// key the Collector's exporter writes from a resource attribute
// (resource_constant_labels, resource_to_telemetry_conversion) clashes
// with it there.
func NewLabels(kv ...attribute.KeyValue) attribute.Set {
	if len(kv) == 0 {
		return attribute.Set{}
	}
	// NewSetWithFiltered sorts and filters the slice it is given in place:
	// a copy, so that the caller's slice (a labeler's fixed one, shared by
	// the operations in flight) stays as it was.
	set, _ := attribute.NewSetWithFiltered(slices.Clone(kv), func(kv attribute.KeyValue) bool { return allowedLabel(kv.Key) })
	return set
}

// allowedLabel reports whether a user's label key may label the metrics.
func allowedLabel(k attribute.Key) bool {
	names := prometheusLabels(string(k))
	if strings.HasPrefix(names[0], "__") || strings.Trim(names[0], "_") == "" {
		return false // Prometheus's own names, or none: the exporter drops the whole series
	}
	for _, name := range names {
		// An id or a URL is one under any case (URL, Url.Full) and with
		// blanks or dots around it (" url.full" is _url_full): matched
		// lowered and trimmed, to keep what a user meant as one off the
		// labels.
		meant := strings.Trim(strings.ToLower(name), "_")
		if reservedInPrometheus[name] || unboundedInPrometheus[meant] || meant == "url" ||
			strings.HasPrefix(name, "otel_scope_") || strings.HasPrefix(meant, "url_") {
			return false
		}
	}
	return true
}

// unboundedInPrometheus are the keys that break the cardinality bound or
// carry a URL (the url.* namespace aside, a prefix), as Prometheus spells
// them: a key spelled retry_operation_id is the same label as
// retry.operation.id there.
var unboundedInPrometheus = func() map[string]bool {
	unbounded := map[string]bool{}
	for _, k := range []attribute.Key{attrs.OperationIDKey, attrs.RequestIDKey, attrs.IdempotencyKeyValueKey, "url", "http.url", "http.target"} {
		for _, name := range prometheusLabels(string(k)) {
			unbounded[name] = true
		}
	}
	return unbounded
}()

// reservedInPrometheus are the labels a user's key must not become once
// Prometheus spells it: the Recorder's own, and those the exporters and
// Prometheus write themselves (a histogram bucket's le, a summary's
// quantile; the instrumentation scope's otel_scope_*, a prefix; the
// target's job and instance, which the Collector's exporter writes from
// service.name and service.instance.id, and Prometheus at the scrape).
var reservedInPrometheus = func() map[string]bool {
	reserved := map[string]bool{"le": true, "quantile": true, "job": true, "instance": true}
	for _, k := range []attribute.Key{attrs.HTTPRequestMethodKey, attrs.ServerAddressKey, attrs.OutcomeKey,
		attrs.ErrorTypeKey, attrs.DecisionKey, attrs.ErrorClassKey, attrs.HTTPResponseStatusCodeKey, attrs.ReasonKey} {
		for _, name := range prometheusLabels(string(k)) {
			reserved[name] = true
		}
	}
	return reserved
}()

// prometheusLabels are the names key may get in Prometheus, as the
// translators escape it (the Collector's and the Go exporter's): each rune
// outside [a-zA-Z0-9] an underscore, with runs of underscores kept or
// collapsed into one.
func prometheusLabels(key string) [2]string {
	escaped := strings.Map(func(r rune) rune {
		if 'a' <= r && r <= 'z' || 'A' <= r && r <= 'Z' || '0' <= r && r <= '9' {
			return r
		}
		return '_'
	}, key)
	return [2]string{escaped, collapseUnderscores(escaped)}
}

// collapseUnderscores is s with each run of underscores one underscore.
func collapseUnderscores(s string) string {
	for strings.Contains(s, "__") {
		s = strings.ReplaceAll(s, "__", "_")
	}
	return s
}

// The cache keys: each label combination once, its values as they label
// (outside their closed sets, one _OTHER), so that values the labels
// collapse fill no cache. attribute.Distinct is comparable, so extra
// labels are part of the key at no cost when absent.

type operationKey struct {
	method, server string
	labels         attribute.Distinct
	outcome        attrs.Outcome
	errorType      string
}

type attemptKey struct {
	method, server string
	labels         attribute.Distinct
	decision       attrs.Decision
	errorClass     attrs.ErrorClass
	status         int
	errorType      string
}

type backoffKey struct {
	method, server string
	labels         attribute.Distinct
}

// RecordOperation records a finished operation on retry.operations,
// retry.operation.attempts and retry.operation.duration.
func (r *Recorder) RecordOperation(ctx context.Context, o Operation) {
	if r.off {
		return
	}
	key, labels := r.labelsKey(o.Labels)
	k := operationKey{method: httpmethod.Value(o.Method), server: o.ServerAddress, labels: key,
		outcome: attrs.Outcome(closed(o.Outcome)), errorType: errorTypeLabel(o.ErrorType)}
	// One lookup for the three instruments: the duration histogram's
	// labels add error.type to the others'.
	opts := r.operationSets.m.Get(k, func() *measureOpts {
		counted := r.base(k.method, k.server, labels, attrs.OutcomeKey.String(closed(k.outcome)))
		return &measureOpts{
			add:    []metric.AddOption{metric.WithAttributeSet(attribute.NewSet(counted...))},
			record: []metric.RecordOption{metric.WithAttributeSet(attribute.NewSet(counted...))},
			timed:  []metric.RecordOption{metric.WithAttributeSet(attribute.NewSet(withErrorType(counted, k.errorType)...))},
		}
	})
	r.operations.Add(ctx, 1, opts.add...)
	r.operationAttempts.Record(ctx, int64(o.Attempts), opts.record...)
	r.operationDuration.Record(ctx, o.Duration.Seconds(), opts.timed...)
}

// RecordAttempt records one network attempt on retry.attempts and
// retry.attempt.duration.
func (r *Recorder) RecordAttempt(ctx context.Context, a Attempt) {
	if r.off {
		return
	}
	key, labels := r.labelsKey(a.Labels)
	k := attemptKey{method: httpmethod.Value(a.Method), server: a.ServerAddress, labels: key,
		decision: attrs.Decision(closed(a.Decision)), status: labeledStatus(a.StatusCode), errorType: errorTypeLabel(a.ErrorType)}
	if a.ErrorClass != "" && k.status == 0 { // a status labels the attempt in its place
		k.errorClass = attrs.ErrorClass(closed(a.ErrorClass))
	}
	// One lookup for both instruments: the counter's labels add the status
	// to the common ones, the duration histogram's add error.type.
	opts := r.attemptSets.m.Get(k, func() *measureOpts {
		common := r.base(k.method, k.server, labels, attrs.DecisionKey.String(closed(k.decision)))
		if k.errorClass != "" && k.status == 0 {
			common = append(common, attrs.ErrorClassKey.String(closed(k.errorClass)))
		}
		counted := common
		if k.status != 0 {
			counted = append(common[:len(common):len(common)], attrs.HTTPResponseStatusCodeKey.Int(k.status))
		}
		return &measureOpts{
			add:   []metric.AddOption{metric.WithAttributeSet(attribute.NewSet(counted...))},
			timed: []metric.RecordOption{metric.WithAttributeSet(attribute.NewSet(withErrorType(common, k.errorType)...))},
		}
	})
	r.attempts.Add(ctx, 1, opts.add...)
	r.attemptDuration.Record(ctx, a.Duration.Seconds(), opts.timed...)
}

// RecordBackoff records one pause before a retry on retry.backoff.duration.
func (r *Recorder) RecordBackoff(ctx context.Context, b Backoff) {
	if r.off {
		return
	}
	key, labels := r.labelsKey(b.Labels)
	k := backoffKey{method: httpmethod.Value(b.Method), server: b.ServerAddress, labels: key}
	opts := r.backoffSets.get(k, func() []attribute.KeyValue { return r.base(k.method, k.server, labels) })
	r.backoffDuration.Record(ctx, b.Duration.Seconds(), opts.record...)
}

// RecordThrottled records one request a client-side throttle refused on
// retry.throttled. Its share of the requests, rate(retry.throttled) /
// (rate(retry.attempts) + rate(retry.throttled)), is the throttle's
// rejection rate.
func (r *Recorder) RecordThrottled(ctx context.Context, t Throttled) {
	if r.off {
		return
	}
	key, labels := r.labelsKey(t.Labels)
	k := backoffKey{method: httpmethod.Value(t.Method), server: t.ServerAddress, labels: key}
	opts := r.throttledSets.get(k, func() []attribute.KeyValue { return r.base(k.method, k.server, labels) })
	r.throttled.Add(ctx, 1, opts.add...)
}

// labelsKey returns labels as they label, and their key: a set that
// carries a key NewLabels drops (one made otherwise) is keyed as NewLabels
// makes it, so that the values it drops (an id per operation) fill no
// cache; such a set costs its filtering on every record.
func (r *Recorder) labelsKey(labels attribute.Set) (attribute.Distinct, attribute.Set) {
	for it := labels.Iter(); it.Next(); {
		if !r.allowedKey(it.Attribute().Key) {
			labels = NewLabels(labels.ToSlice()...)
			break
		}
	}
	return labels.Equivalent(), labels
}

// allowedKey is allowedLabel(k), read from the keys it allowed before: only
// those are kept (up to maxCachedSets), so that keys it drops, which a set
// made otherwise may carry by the thousand, take no place from a
// NewLabels set's.
func (r *Recorder) allowedKey(k attribute.Key) bool {
	if _, ok := r.allowedKeys.Lookup(k); ok {
		return true
	}
	if !allowedLabel(k) {
		return false
	}
	r.allowedKeys.Get(k, func() struct{} { return struct{}{} })
	return true
}

// withErrorType returns kv plus error.type when t, an errorTypeLabel, is
// set, in a slice of its own.
func withErrorType(kv []attribute.KeyValue, t string) []attribute.KeyValue {
	if t == "" {
		return kv
	}
	return append(kv[:len(kv):len(kv)], attrs.ErrorTypeKey.String(t))
}

// errorTypeLabel is t as error.type labels it: as given when it is an
// error class or an outcome, a status code as the conventions spell it (no
// leading zero), _OTHER when none; "" when t is.
func errorTypeLabel(t string) string {
	switch {
	case t == "":
	case isStatusCode(t):
		// "7", "07" and "007" are one status, one series.
		if t = strings.TrimLeft(t, "0"); t == "" {
			t = "0"
		}
	case !attrs.ErrorClass(t).Valid() && !attrs.Outcome(t).Valid():
		t = otherValue
	}
	return t
}

// otherValue labels a value outside its closed set, as the semantic
// conventions' _OTHER does a method: a caller's Recorder fed anything else
// (a URL, an id) would make a series of each value.
const otherValue = "_OTHER"

// closed is v when it is in its closed set, otherValue when not.
func closed[V interface {
	~string
	Valid() bool
}](v V) string {
	if !v.Valid() {
		return otherValue
	}
	return string(v)
}

// labeledStatus is status when it labels a series (1 to 999, as an
// http.response.status_code net/http's client reads), 0 when it labels
// none: a caller's Recorder fed anything else would make a series of each
// value.
func labeledStatus(status int) int {
	if status < 1 || status > 999 {
		return 0
	}
	return status
}

// isStatusCode reports whether t is an HTTP status code as error.type
// spells one: one to three digits (net/http's client takes any three,
// 600 to 999 too), a thousand values at most.
func isStatusCode(t string) bool {
	if len(t) == 0 || len(t) > 3 {
		return false
	}
	for i := range len(t) {
		if t[i] < '0' || t[i] > '9' {
			return false
		}
	}
	return true
}

// base returns the user's labels, the labels every instrument carries,
// then extra.
func (r *Recorder) base(method, server string, labels attribute.Set, extra ...attribute.KeyValue) []attribute.KeyValue {
	// The caller's labels first, those NewLabels keeps (the set may have
	// been made otherwise): never an id, a URL or a key of the Recorder's
	// own.
	kv := make([]attribute.KeyValue, 0, 5+labels.Len())
	for _, l := range labels.ToSlice() {
		if allowedLabel(l.Key) { // a set NewLabels did not make
			kv = append(kv, l)
		}
	}
	kv = append(kv, attrs.HTTPRequestMethodKey.String(method))
	if server != "" {
		kv = append(kv, attrs.ServerAddressKey.String(server))
	}
	return append(kv, extra...)
}

// measureOpts holds the option slices for one label combination, built once
// so that recording passes an existing slice and allocates nothing.
type measureOpts struct {
	add    []metric.AddOption
	record []metric.RecordOption
	timed  []metric.RecordOption // the duration histograms', with error.type
}

// maxCachedSets bounds each cache. Labels come from closed sets, so real
// workloads stay far below it; past it, options are built per call.
const maxCachedSets = 4096

// setCache maps a label combination to its prebuilt options. Each
// combination is built once; after that, recording is a lock-free lookup.
type setCache[K comparable] struct{ m cowmap.Map[K, *measureOpts] }

func (c *setCache[K]) get(k K, labels func() []attribute.KeyValue) *measureOpts {
	return c.m.Get(k, func() *measureOpts {
		set := attribute.NewSet(labels()...)
		return &measureOpts{
			add:    []metric.AddOption{metric.WithAttributeSet(set)},
			record: []metric.RecordOption{metric.WithAttributeSet(set)},
		}
	})
}
