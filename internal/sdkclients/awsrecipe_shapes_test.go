// Copyright The otelretry Authors
// SPDX-License-Identifier: Apache-2.0

package sdkclients

import (
	"errors"
	"net/http"
	"testing"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/aws/smithy-go"
)

// TestDynamoDBRecipeErrortypeHeaderWithSuffix: DynamoDB's
// X-Amzn-Errortype may carry ":" and a URL after the type; the recipe cuts
// it there. A PutItem throttled that way is retried (2 executions).
func TestDynamoDBRecipeErrortypeHeaderWithSuffix(t *testing.T) {
	f := newFakeDynamoDB(t, func(op string, n int, w http.ResponseWriter, r *http.Request) {
		if n == 1 {
			w.Header().Set("X-Amzn-Errortype", "ThrottlingException:http://internal.amazon.com/coral/com.amazon.coral.availability/")
			jsonAnswer(w, 400, `{"message":"refused"}`)
			return
		}
		jsonAnswer(w, 200, `{}`)
	})
	err := putItem(t.Context(), awsClient(f.URL, recipe))
	if got := f.executed("PutItem"); err != nil || got != 2 {
		t.Errorf("executed %d, err %v; want the throttled write retried once", got, err)
	}
}

// TestDynamoDBRecipeBatchGetItemIsARead: BatchGetItem is in
// dynamoDBReads: answered 500, it is retried (2 executions).
func TestDynamoDBRecipeBatchGetItemIsARead(t *testing.T) {
	f := newFakeDynamoDB(t, func(op string, n int, w http.ResponseWriter, r *http.Request) {
		if n == 1 {
			jsonAnswer(w, 500, `{"__type":"com.amazonaws.dynamodb.v20120810#InternalServerError","message":"x"}`)
			return
		}
		jsonAnswer(w, 200, `{}`)
	})
	_, err := awsClient(f.URL, recipe).BatchGetItem(t.Context(), &dynamodb.BatchGetItemInput{RequestItems: map[string]types.KeysAndAttributes{
		"items": {Keys: []map[string]types.AttributeValue{{"id": &types.AttributeValueMemberS{Value: "42"}}}}}})
	if got := f.executed("BatchGetItem"); err != nil || got != 2 {
		t.Errorf("executed %d, err %v; want the read retried once", got, err)
	}
}

// TestDynamoDBRecipeBodyKept: "The body stays as it came": a 400
// whose type is in the body alone reaches the SDK whole, which names it.
func TestDynamoDBRecipeBodyKept(t *testing.T) {
	f := newFakeDynamoDB(t, func(op string, n int, w http.ResponseWriter, r *http.Request) {
		jsonAnswer(w, 400, `{"__type":"com.amazonaws.dynamodb.v20120810#ValidationException","message":"bad key"}`)
	})
	err := putItem(t.Context(), awsClient(f.URL, recipe))
	var ae smithy.APIError
	if !errors.As(err, &ae) || ae.ErrorCode() != "ValidationException" || ae.ErrorMessage() != "bad key" {
		t.Errorf("err %v; want the SDK's ValidationException: bad key", err)
	}
}
