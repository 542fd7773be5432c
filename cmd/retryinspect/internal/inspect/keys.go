// Copyright The otelretry Authors
// SPDX-License-Identifier: Apache-2.0

package inspect

import (
	"strings"

	semconv "go.opentelemetry.io/otel/semconv/v1.43.0"

	"github.com/otelretry/otelretry-go/attrs"
)

// Attribute names as the span model stores them. They all come from attrs,
// the single source of the vocabulary; none is spelled here.
var (
	keyOperationID         = string(attrs.OperationIDKey)
	keyRequestID           = string(attrs.RequestIDKey)
	keyAttempt             = string(attrs.AttemptKey)
	keyAttempts            = string(attrs.AttemptsKey)
	keyDecision            = string(attrs.DecisionKey)
	keyOutcome             = string(attrs.OutcomeKey)
	keyErrorClass          = string(attrs.ErrorClassKey)
	keyElapsedMs           = string(attrs.ElapsedMsKey)
	keyRemainingMs         = string(attrs.RemainingMsKey)
	keyRetryAfterMs        = string(attrs.RetryAfterMsKey)
	keyBackoffMs           = string(attrs.BackoffMsKey)
	keyDeadlineMs          = string(attrs.DeadlineMsKey)
	keyLegacyBudgetMs      = string(attrs.LegacyBudgetMsKey)
	keyReason              = string(attrs.ReasonKey)
	keyRedirects           = string(attrs.RedirectsKey)
	keyRepeat              = string(attrs.RepeatKey)
	keyIdempotencyContract = string(attrs.IdempotencyContractKey)
	keyIdempotencyKey      = string(attrs.IdempotencyKeySourceKey)
	keyIdempotencyValue    = string(attrs.IdempotencyKeyValueKey)
	keyReplayed            = string(attrs.IdempotencyReplayedKey)
	keyStateCheckResult    = string(attrs.StateCheckResultKey)
	keyStateCheckAttempt   = string(attrs.StateCheckAttemptKey)
	keyMethod              = string(attrs.HTTPRequestMethodKey)
	keyMethodOriginal      = string(attrs.HTTPRequestMethodOriginalKey)
	keyStatusCode          = string(attrs.HTTPResponseStatusCodeKey)
	keyResendCount         = string(attrs.HTTPRequestResendCountKey)
	keyURLFull             = string(attrs.URLFullKey)
	keyServerAddress       = string(attrs.ServerAddressKey)
	keyServerPort          = string(attrs.ServerPortKey)
	keyHedgeOf             = string(attrs.HedgeOfKey)
	keyHedgedAfterMs       = string(attrs.HedgedAfterMsKey)
	keyHedgeDelayMs        = string(attrs.HedgeDelayMsKey)
)

// The names of the service an operation calls, which otelretry does not
// write (see Dependency): semantic conventions v1.43's, and the one it
// replaced, which v1.43 no longer defines.
var (
	keyServicePeerName = string(semconv.ServicePeerNameKey)
	keyPeerService     = FromPeerService
)

// urlNamespace is the namespace of the URL attributes ("url" in url.full,
// url.query, ...), taken from attrs.URLFullKey. Legacy conventions name
// URLs with it as the last segment (http.url).
var urlNamespace, _, _ = strings.Cut(keyURLFull, ".")
