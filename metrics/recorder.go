package metrics

import (
	"context"
	"errors"
	"net/http"
	"time"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/metric"
	"go.opentelemetry.io/otel/metric/noop"

	"github.com/otelretry/otelretry-go/attrs"
	"github.com/otelretry/otelretry-go/internal/cowmap"
)

// Option configures a Recorder.
type Option interface{ apply(*recorderConfig) }

type recorderConfig struct {
	serverAddress bool
}

type optionFunc func(*recorderConfig)

func (f optionFunc) apply(c *recorderConfig) { f(c) }

// WithServerAddress adds server.address to every label set. Use it when a
// client talks to a bounded set of hosts: each host multiplies the number
// of series.
func WithServerAddress() Option {
	return optionFunc(func(c *recorderConfig) { c.serverAddress = true })
}

// Attempt is what the Recorder needs to know about one network attempt.
type Attempt struct {
	Method        string
	ServerAddress string
	// Labels are extra low-cardinality labels (see NewLabels).
	Labels   attribute.Set
	Decision attrs.Decision
	// ErrorClass is set when no response arrived; StatusCode otherwise.
	ErrorClass attrs.ErrorClass
	StatusCode int
	Duration   time.Duration
}

// Operation is what the Recorder needs to know about one finished operation.
type Operation struct {
	Method        string
	ServerAddress string
	// Labels are extra low-cardinality labels (see NewLabels).
	Labels   attribute.Set
	Outcome  attrs.Outcome
	Attempts int
	Duration time.Duration
}

// Recorder records operations and attempts on the six instruments. It is
// safe for concurrent use. The zero value is not usable; call NewRecorder.
type Recorder struct {
	cfg recorderConfig
	// off: the meter is nil or the no-op one (metric/noop), so every
	// instrument is a no-op and recording is skipped outright.
	off               bool
	operations        Operations
	attempts          Attempts
	operationAttempts OperationAttempts
	operationDuration OperationDuration
	attemptDuration   AttemptDuration
	backoffDuration   BackoffDuration

	operationSets setCache[operationKey]
	attemptSets   setCache[attemptKey] // add: with the status; record: without
	backoffSets   setCache[backoffKey]
}

// NewRecorder creates the instruments on m. A nil m records nothing. When
// an instrument cannot be created, the Recorder uses a no-op in its place
// and NewRecorder returns the Recorder together with the joined errors, so
// the caller may log them and go on.
func NewRecorder(m metric.Meter, opts ...Option) (*Recorder, error) {
	r := &Recorder{}
	_, noopMeter := m.(noop.Meter)
	r.off = m == nil || noopMeter
	r.operationSets.m.Limit = maxCachedSets
	r.attemptSets.m.Limit = maxCachedSets
	r.backoffSets.m.Limit = maxCachedSets
	for _, o := range opts {
		if o != nil {
			o.apply(&r.cfg)
		}
	}
	var errs [6]error
	r.operations, errs[0] = NewOperations(m)
	r.attempts, errs[1] = NewAttempts(m)
	r.operationAttempts, errs[2] = NewOperationAttempts(m)
	r.operationDuration, errs[3] = NewOperationDuration(m)
	r.attemptDuration, errs[4] = NewAttemptDuration(m)
	r.backoffDuration, errs[5] = NewBackoffDuration(m)
	return r, errors.Join(errs[:]...)
}

// Backoff is what the Recorder needs to know about one pause before a retry.
type Backoff struct {
	Method        string
	ServerAddress string
	// Labels are extra low-cardinality labels (see NewLabels).
	Labels   attribute.Set
	Duration time.Duration
}

// NewLabels returns extra labels for the retry metrics, from a user's
// enricher. Keys that would break the cardinality bound or clash with the
// Recorder's own labels are dropped: ids, URLs, and the keys the Recorder
// sets itself. The caller still owns the rest: every distinct value is a
// new series.
func NewLabels(kv ...attribute.KeyValue) attribute.Set {
	if len(kv) == 0 {
		return attribute.Set{}
	}
	set, _ := attribute.NewSetWithFiltered(kv, func(kv attribute.KeyValue) bool {
		switch kv.Key {
		case attrs.OperationIDKey, attrs.RequestIDKey, attrs.URLFullKey,
			attrs.HTTPRequestMethodKey, attrs.ServerAddressKey, attrs.OutcomeKey,
			attrs.DecisionKey, attrs.ErrorClassKey, attrs.HTTPResponseStatusCodeKey:
			return false
		}
		return true
	})
	return set
}

// The cache keys: each label combination once. attribute.Distinct is
// comparable, so extra labels are part of the key at no cost when absent.

type operationKey struct {
	method, server string
	labels         attribute.Distinct
	outcome        attrs.Outcome
}

type attemptKey struct {
	method, server string
	labels         attribute.Distinct
	decision       attrs.Decision
	errorClass     attrs.ErrorClass
	status         int
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
	k := operationKey{method: NormalizeMethod(o.Method), server: r.server(o.ServerAddress), labels: o.Labels.Equivalent(), outcome: o.Outcome}
	opts := r.operationSets.get(k, func() []attribute.KeyValue {
		return r.base(k.method, k.server, o.Labels, attrs.OutcomeKey.String(string(k.outcome)))
	})
	r.operations.Inst().Add(ctx, 1, opts.add...)
	r.operationAttempts.Inst().Record(ctx, int64(o.Attempts), opts.record...)
	r.operationDuration.Inst().Record(ctx, o.Duration.Seconds(), opts.record...)
}

// RecordAttempt records one network attempt on retry.attempts and
// retry.attempt.duration.
func (r *Recorder) RecordAttempt(ctx context.Context, a Attempt) {
	if r.off {
		return
	}
	k := attemptKey{method: NormalizeMethod(a.Method), server: r.server(a.ServerAddress), labels: a.Labels.Equivalent(),
		decision: a.Decision, errorClass: a.ErrorClass, status: a.StatusCode}
	// One lookup for both instruments: the counter's labels add the status
	// to the duration histogram's.
	opts := r.attemptSets.m.Get(k, func() *measureOpts {
		timed := r.base(k.method, k.server, a.Labels, k.decision.Attribute())
		if k.errorClass != "" {
			timed = append(timed, k.errorClass.Attribute())
		}
		counted := timed
		if k.status != 0 {
			counted = append(timed[:len(timed):len(timed)], attrs.HTTPResponseStatusCodeKey.Int(k.status))
		}
		return &measureOpts{
			add:    []metric.AddOption{metric.WithAttributeSet(attribute.NewSet(counted...))},
			record: []metric.RecordOption{metric.WithAttributeSet(attribute.NewSet(timed...))},
		}
	})
	r.attempts.Inst().Add(ctx, 1, opts.add...)
	r.attemptDuration.Inst().Record(ctx, a.Duration.Seconds(), opts.record...)
}

// RecordBackoff records one pause before a retry on retry.backoff.duration.
func (r *Recorder) RecordBackoff(ctx context.Context, b Backoff) {
	if r.off {
		return
	}
	k := backoffKey{method: NormalizeMethod(b.Method), server: r.server(b.ServerAddress), labels: b.Labels.Equivalent()}
	opts := r.backoffSets.get(k, func() []attribute.KeyValue { return r.base(k.method, k.server, b.Labels) })
	r.backoffDuration.Inst().Record(ctx, b.Duration.Seconds(), opts.record...)
}

func (r *Recorder) server(addr string) string {
	if !r.cfg.serverAddress {
		return ""
	}
	return addr
}

// base returns the labels every instrument carries, the user's labels,
// then extra.
func (r *Recorder) base(method, server string, labels attribute.Set, extra ...attribute.KeyValue) []attribute.KeyValue {
	kv := make([]attribute.KeyValue, 0, 5+labels.Len())
	kv = append(kv, attrs.HTTPRequestMethodKey.String(method))
	if server != "" {
		kv = append(kv, attrs.ServerAddressKey.String(server))
	}
	kv = append(kv, labels.ToSlice()...)
	return append(kv, extra...)
}

// NormalizeMethod returns method if it is a standard HTTP method and
// "_OTHER" otherwise, as the HTTP semantic conventions require, so a client
// sending arbitrary methods cannot create unbounded series.
func NormalizeMethod(method string) string {
	switch method {
	case http.MethodGet, http.MethodHead, http.MethodPost, http.MethodPut, http.MethodPatch,
		http.MethodDelete, http.MethodConnect, http.MethodOptions, http.MethodTrace:
		return method
	case "":
		return http.MethodGet // net/http treats an empty method as GET.
	default:
		return "_OTHER"
	}
}

// measureOpts holds the option slices for one label combination, built once
// so that recording passes an existing slice and allocates nothing.
type measureOpts struct {
	add    []metric.AddOption
	record []metric.RecordOption
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
