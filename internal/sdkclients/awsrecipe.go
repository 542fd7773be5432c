// Copyright The otelretry Authors
// SPDX-License-Identifier: Apache-2.0

package sdkclients

import (
	"bytes"
	"compress/gzip"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"strings"

	"github.com/aws/aws-sdk-go-v2/aws"
	awsmiddleware "github.com/aws/aws-sdk-go-v2/aws/middleware"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/smithy-go/middleware"

	"github.com/otelretry/otelretry-go/otelretry"
)

// The AWS recipe of docs/sdk-recipes.md, as code the tests use: keep
// the two the same.

// dynamoDBReads are the DynamoDB operations that only read; the SDK sends
// every operation as a POST.
var dynamoDBReads = map[string]bool{"GetItem": true, "BatchGetItem": true, "Query": true, "Scan": true,
	"TransactGetItems": true, "DescribeTable": true, "ListTables": true}

// dynamoDBThrottled are the error types DynamoDB answers 400 with when it
// refused a request without running it: its SDK retries them, reads and
// writes alike (retry.DefaultThrottleErrorCodes: too many table
// operations at once, a transaction token still in progress too).
var dynamoDBThrottled = map[string]bool{"ProvisionedThroughputExceededException": true,
	"ThrottlingException": true, "RequestLimitExceeded": true,
	"LimitExceededException": true, "TransactionInProgressException": true}

// dynamoDBVerdict is the should-retry header dynamoDBThrottles sets: the
// service's word, in the form otelretry reads it, that a request was
// refused unrun and may be sent again.
const dynamoDBVerdict = "Dynamodb-Should-Retry"

// dynamoDBThrottles goes below otelretry: it reads the error type of a 400
// (X-Amzn-Errortype, else the body's __type:
// "com.amazonaws.dynamodb.v20120810#ThrottlingException", gzip
// decompressed for a client that asked for it) and says "true" in
// dynamoDBVerdict for a throttling one. The body stays as it came.
type dynamoDBThrottles struct{ next http.RoundTripper }

func (t dynamoDBThrottles) RoundTrip(req *http.Request) (*http.Response, error) {
	resp, err := t.next.RoundTrip(req)
	if err != nil || resp.StatusCode != http.StatusBadRequest {
		return resp, err
	}
	errorType := resp.Header.Get("X-Amzn-Errortype")
	if errorType == "" {
		head, _ := io.ReadAll(io.LimitReader(resp.Body, 64<<10))
		resp.Body = struct {
			io.Reader
			io.Closer
		}{io.MultiReader(bytes.NewReader(head), resp.Body), resp.Body}
		text := head
		if strings.EqualFold(resp.Header.Get("Content-Encoding"), "gzip") { // EnableAcceptEncodingGzip
			if zr, err := gzip.NewReader(bytes.NewReader(head)); err == nil {
				text, _ = io.ReadAll(io.LimitReader(zr, 64<<10))
			}
		}
		var e struct {
			Type string `json:"__type"`
		}
		_ = json.Unmarshal(text, &e) // not JSON: no type
		errorType = e.Type
	}
	errorType, _, _ = strings.Cut(errorType[strings.LastIndexByte(errorType, '#')+1:], ":")
	if dynamoDBThrottled[errorType] {
		resp.Header.Set(dynamoDBVerdict, "true")
	}
	return resp, nil
}

// dynamoDBTransport is otelretry over base for a DynamoDB client: it also
// retries what DynamoDB refused unrun (throttling), reads and writes, and
// a read answered 500, as the SDK does.
func dynamoDBTransport(base http.RoundTripper, opts ...otelretry.Option) http.RoundTripper {
	return otelretry.NewTransport(dynamoDBThrottles{base}, append([]otelretry.Option{
		otelretry.WithShouldRetryHeaders(dynamoDBVerdict), otelretry.WithShouldRetryWrites(),
		otelretry.WithRetryableStatuses(408, 429, 500, 502, 503, 504)}, opts...)...)
}

// otelretryOwnsRetries turns the SDK's retries off (otelretry retries),
// marks the read operations repeatable (in the caller's Intent, kept), and
// gives every call an operation id, unless the caller's context has one.
func otelretryOwnsRetries(o *dynamodb.Options) {
	o.Retryer = aws.NopRetryer{}
	o.APIOptions = append(o.APIOptions, func(stack *middleware.Stack) error {
		return stack.Initialize.Add(middleware.InitializeMiddlewareFunc("otelretry",
			func(ctx context.Context, in middleware.InitializeInput, next middleware.InitializeHandler) (middleware.InitializeOutput, middleware.Metadata, error) {
				if dynamoDBReads[awsmiddleware.GetOperationName(ctx)] {
					in := otelretry.CallIntent(ctx) // the caller's, kept
					in.Repeatable = true
					ctx = otelretry.WithIntent(ctx, in)
				}
				ctx = otelretry.EnsureOperationID(ctx)
				return next.HandleInitialize(ctx, in)
			}), middleware.After)
	})
}
