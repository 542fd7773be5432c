// Copyright The otelretry Authors
// SPDX-License-Identifier: Apache-2.0

package sdkclients

import (
	"net/http"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
)

// DynamoDB answers 400 with other error types the SDK's standard retryer
// retries as throttling (aws/retry.DefaultThrottleErrorCodes), which
// DynamoDB documents as a request refused: LimitExceededException (too
// many table operations at once: CreateTable, UpdateTable...) and
// TransactionInProgressException (a TransactWriteItems whose
// ClientRequestToken is still being processed). And a read answered 500
// InternalServerError, which the SDK retries. The recipe's comment:
// "dynamoDBThrottled are the error types DynamoDB answers 400 with when
// it refused a request without running it: its SDK retries them".
func TestDynamoDBOtherRefusalsRetried(t *testing.T) {
	cases := []struct {
		name, op string
		status   int
		errType  string
		call     func(c *dynamodb.Client) error
	}{
		{"LimitExceededException", "UpdateTable", 400, "LimitExceededException", func(c *dynamodb.Client) error {
			_, err := c.UpdateTable(t.Context(), &dynamodb.UpdateTableInput{TableName: aws.String("items"), BillingMode: types.BillingModePayPerRequest})
			return err
		}},
		{"TransactionInProgressException", "TransactWriteItems", 400, "TransactionInProgressException", func(c *dynamodb.Client) error {
			_, err := c.TransactWriteItems(t.Context(), &dynamodb.TransactWriteItemsInput{ClientRequestToken: aws.String("token-1"),
				TransactItems: []types.TransactWriteItem{{Put: &types.Put{TableName: aws.String("items"), Item: map[string]types.AttributeValue{"id": &types.AttributeValueMemberS{Value: "42"}}}}}})
			return err
		}},
		{"GetItem InternalServerError", "GetItem", 500, "InternalServerError", func(c *dynamodb.Client) error {
			_, err := getItem(t.Context(), c)
			return err
		}},
	}
	for _, tc := range cases {
		for _, s := range []setup{sdkDefaults, recipe} {
			t.Run(tc.name+"/"+s.String(), func(t *testing.T) {
				f := newFakeDynamoDB(t, func(op string, n int, w http.ResponseWriter, r *http.Request) {
					if n == 1 {
						jsonAnswer(w, tc.status, `{"__type":"com.amazonaws.dynamodb.v20120810#`+tc.errType+`","message":"refused"}`)
						return
					}
					if op == "GetItem" {
						jsonAnswer(w, 200, item)
						return
					}
					jsonAnswer(w, 200, `{}`)
				})
				err := tc.call(awsClient(f.URL, s))
				got := f.executed(tc.op)
				t.Logf("%s, %s %d %s then 200: executed %d, err %v", s, tc.op, tc.status, tc.errType, got, err)
				if err != nil || got != 2 {
					t.Errorf("%s: executed %d, err %v; want it retried once, as the SDK at its defaults does", s, got, err)
				}
			})
		}
	}
}
