// Copyright The otelretry Authors
// SPDX-License-Identifier: Apache-2.0

// Package metrics records what otelretry operations did, as distributions
// and counters a dashboard can divide: the share of attempts whose decision
// was retry, the share of operations that ended deadline_exceeded, the
// number of attempts per operation.
//
// Instruments (names, units and labels are a public contract):
//
//	retry.operations          Int64Counter     {operation}  http.request.method, retry.outcome
//	retry.attempts            Int64Counter     {attempt}    http.request.method, retry.decision,
//	                                                        retry.error_class | http.response.status_code
//	retry.operation.attempts  Int64Histogram   {attempt}    http.request.method, retry.outcome
//	retry.operation.duration  Float64Histogram s            http.request.method, retry.outcome, error.type
//	retry.attempt.duration    Float64Histogram s            http.request.method, retry.decision, retry.error_class,
//	                                                        error.type
//	retry.backoff.duration    Float64Histogram s            http.request.method
//	retry.throttled           Int64Counter     {request}    http.request.method
//
// error.type (semantic conventions) is set only on what failed: an attempt
// without a 2xx, 3xx or 101 answer (its error class, or its status code) and an
// operation that did not end return.
//
// Labels come only from closed sets (attrs) and the HTTP method, collapsed
// to _OTHER when it is not a standard one (attrs.Methods). retry.operation.id,
// retry.request.id, URLs and paths are never labels: each distinct value
// would create a new time series, so a million operations would become a
// million series that no backend can store and no query can aggregate. Ids
// belong on spans and log records, which are built for high cardinality.
// server.address labels a series only when the caller passes one (the
// transport does with its WithServerAddressInMetrics option), bounded by the
// number of dependencies a client talks to. User labels (NewLabels) never
// carry ids, url or url.* keys, http.url or http.target, under any case; a
// set made otherwise is filtered the same way. A decision, outcome, error
// class or error.type outside its closed set (a value of a caller's own)
// labels a series as _OTHER.
//
// retry.throttled counts the requests a client-side throttle refused
// before they started (first attempts, retries, hedges): its share of
// retry.attempts plus itself is the throttle's rejection rate, a little
// below the throttle's own where attempts were canceled or superseded by
// their hedge (counted in retry.attempts, by the throttle neither way).
//
// The Recorder creates the seven instruments on the Meter it is given. An
// instrument the Meter returns with an error is kept (the SDK's still
// records for its readers that can aggregate it), and one it does not
// return is replaced by a no-op, so telemetry never breaks the request
// path. The Recorder precomputes attribute sets so
// that recording an operation does not allocate once its label combinations
// have been seen.
//
// # Why this is exported
//
// The instrument names, units, buckets and labels are the contract the
// dashboards and alerts are written against. The Recorder stays exported
// so that a retry loop that is not otelretry's Transport (a gRPC client, a
// queue consumer, a hand-written loop) can feed the same series and reuse
// the same dashboards: NewRecorder, the four Record methods, what they
// record (Attempt, Operation, Backoff, Throttled) and NewLabels are the whole surface,
// and the transport itself uses nothing else.
package metrics
