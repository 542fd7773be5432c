// Copyright The otelretry Authors
// SPDX-License-Identifier: Apache-2.0

// Package errtree walks an error's tree as errors.As does (depth first,
// in order, through Unwrap() error and Unwrap() []error) without calling
// a method of a typed nil: the classifiers (classify/h2, classify/h3) read
// the errors of bases that put typed nils in their chains (quic-go's
// *http3.Error unwraps through its receiver), and a nil one would panic
// where errors.As reaches it.
package errtree
