// Copyright The otelretry Authors
// SPDX-License-Identifier: Apache-2.0

package sdkclients

import (
	"context"

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

// otelretryOwnsRetries turns the SDK's retries off (otelretry retries),
// marks the read operations repeatable, and gives every call an operation
// id, unless the caller's context has one.
func otelretryOwnsRetries(o *dynamodb.Options) {
	o.Retryer = aws.NopRetryer{}
	o.APIOptions = append(o.APIOptions, func(stack *middleware.Stack) error {
		return stack.Initialize.Add(middleware.InitializeMiddlewareFunc("otelretry",
			func(ctx context.Context, in middleware.InitializeInput, next middleware.InitializeHandler) (middleware.InitializeOutput, middleware.Metadata, error) {
				if dynamoDBReads[awsmiddleware.GetOperationName(ctx)] {
					ctx = otelretry.WithIntent(ctx, otelretry.Intent{Repeatable: true})
				}
				if _, ok := otelretry.OperationIDFromContext(ctx); !ok {
					ctx = otelretry.WithOperationID(ctx, otelretry.NewOperationID())
				}
				return next.HandleInitialize(ctx, in)
			}), middleware.After)
	})
}
