// Copyright The otelretry Authors
// SPDX-License-Identifier: Apache-2.0

// Package meterguard keeps a Meter that made no instrument from breaking
// the request path: wrapped, a Meter's synchronous instrument
// constructors never return nil (a no-op takes the place of one it did
// not make), and a MeterProvider never returns a nil Meter, nor one that
// is a nil pointer. An instrument
// the Meter made is kept, even with an error: the SDK returns a working
// one with an error when one of its readers cannot aggregate it.
//
// The metrics package's Recorder creates its instruments through it, and
// the transport hands otelhttp a guarded MeterProvider, so that a Meter
// breaking the API's contract (nil and no error) panics in neither.
package meterguard
