// Copyright The otelretry Authors
// SPDX-License-Identifier: Apache-2.0

package sdkclients

import (
	"bytes"
	"compress/gzip"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/aws/retry"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/otelretry/otelretry-go/otelretry"
)

// fakeDynamoDB speaks DynamoDB's JSON protocol on 127.0.0.1 (X-Amz-Target,
// application/x-amz-json-1.0) and counts what it executed per operation.
// answer plays the n-th request (from 1) of an operation.
type fakeDynamoDB struct {
	*httptest.Server
	mu     sync.Mutex
	count  map[string]int
	bodies map[string][]string
	answer func(op string, n int, w http.ResponseWriter, r *http.Request)
}

func newFakeDynamoDB(t *testing.T, answer func(op string, n int, w http.ResponseWriter, r *http.Request)) *fakeDynamoDB {
	f := &fakeDynamoDB{count: map[string]int{}, bodies: map[string][]string{}, answer: answer}
	f.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		op := strings.TrimPrefix(r.Header.Get("X-Amz-Target"), "DynamoDB_20120810.")
		body, _ := io.ReadAll(r.Body)
		f.mu.Lock()
		f.count[op]++
		n := f.count[op]
		f.bodies[op] = append(f.bodies[op], string(body))
		f.mu.Unlock()
		f.answer(op, n, w, r)
	}))
	t.Cleanup(f.Close)
	return f
}

func (f *fakeDynamoDB) executed(op string) int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.count[op]
}

func (f *fakeDynamoDB) bodiesOf(op string) []string {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]string(nil), f.bodies[op]...)
}

func jsonAnswer(w http.ResponseWriter, status int, body string) {
	w.Header().Set("Content-Type", "application/x-amz-json-1.0")
	w.WriteHeader(status)
	io.WriteString(w, body)
}

const item = `{"Item":{"id":{"S":"42"},"name":{"S":"a small item"}}}`

func unavailable(w http.ResponseWriter) {
	jsonAnswer(w, 503, `{"__type":"com.amazonaws.dynamodb.v20120810#ServiceUnavailable","message":"busy"}`)
}

// hang holds the request until the client gives up (bounded).
func hang(r *http.Request) {
	select {
	case <-r.Context().Done():
	case <-time.After(3 * time.Second):
	}
}

// drop closes the connection without an answer, after reading the request.
func drop(w http.ResponseWriter) {
	conn, _, err := w.(http.Hijacker).Hijack()
	if err == nil {
		conn.Close()
	}
}

// setup is how the SDK is configured in a scenario.
type setup int

const (
	sdkDefaults        setup = iota // the SDK's retryer at its defaults, only its backoff shortened for the tests' time
	recipe                          // otelretryOwnsRetries
	retriesOffUnmarked              // the SDK's retries off, reads not marked
)

func (s setup) String() string {
	return [...]string{"SDK defaults", "recipe", "SDK retries off, reads not marked"}[s]
}

// awsClient is a DynamoDB client over a fresh otelretry Transport with
// short limits (deadline 2s, attempt timeout 400ms).
func awsClient(url string, s setup, opts ...otelretry.Option) *dynamodb.Client {
	return awsClientWith(url, s, func(*dynamodb.Options) {}, opts...)
}

// awsClientWith is awsClient with the client's options set by more.
func awsClientWith(url string, s setup, more func(*dynamodb.Options), opts ...otelretry.Option) *dynamodb.Client {
	opts = append([]otelretry.Option{otelretry.WithDeadline(2 * time.Second), otelretry.WithAttemptTimeout(400 * time.Millisecond),
		otelretry.WithBackoff(otelretry.ConstantBackoff(10 * time.Millisecond))}, opts...)
	base := http.DefaultTransport.(*http.Transport).Clone()
	var rt http.RoundTripper = otelretry.NewTransport(base, opts...)
	cfg := aws.Config{
		Region: "us-east-1",
		Credentials: aws.CredentialsProviderFunc(func(context.Context) (aws.Credentials, error) {
			return aws.Credentials{AccessKeyID: "AKID", SecretAccessKey: "secret", Source: "test"}, nil
		}),
	}
	endpoint := func(o *dynamodb.Options) {
		o.BaseEndpoint = aws.String(url)
		more(o)
	}
	switch s {
	case recipe:
		return dynamodb.NewFromConfig(cfg, endpoint, func(o *dynamodb.Options) {
			o.HTTPClient = &http.Client{Transport: dynamoDBTransport(base, opts...)}
		}, otelretryOwnsRetries)
	case retriesOffUnmarked:
		return dynamodb.NewFromConfig(cfg, endpoint, func(o *dynamodb.Options) {
			o.HTTPClient = &http.Client{Transport: rt}
			o.Retryer = aws.NopRetryer{}
		})
	}
	return dynamodb.NewFromConfig(cfg, endpoint, func(o *dynamodb.Options) {
		o.HTTPClient = &http.Client{Transport: rt}
		o.Retryer = retry.NewStandard(func(so *retry.StandardOptions) {
			so.Backoff = retry.BackoffDelayerFunc(func(int, error) (time.Duration, error) { return 10 * time.Millisecond, nil })
		})
	})
}

func getItem(ctx context.Context, c *dynamodb.Client) (*dynamodb.GetItemOutput, error) {
	return c.GetItem(ctx, &dynamodb.GetItemInput{TableName: aws.String("items"), Key: map[string]types.AttributeValue{"id": &types.AttributeValueMemberS{Value: "42"}}})
}

func putItem(ctx context.Context, c *dynamodb.Client) error {
	_, err := c.PutItem(ctx, &dynamodb.PutItemInput{TableName: aws.String("items"), Item: map[string]types.AttributeValue{"id": &types.AttributeValueMemberS{Value: "42"}}})
	return err
}

// TestDynamoDBReadRetried: a GetItem answered 503, 503, 200. The SDK's
// bodies have no GetBody: the recipe's retries go through otelretry's body
// buffer, and the server executes identical bytes.
func TestDynamoDBReadRetried(t *testing.T) {
	for _, s := range []setup{sdkDefaults, recipe, retriesOffUnmarked} {
		t.Run(s.String(), func(t *testing.T) {
			f := newFakeDynamoDB(t, func(op string, n int, w http.ResponseWriter, r *http.Request) {
				if n <= 2 {
					unavailable(w)
					return
				}
				jsonAnswer(w, 200, item)
			})
			out, err := getItem(t.Context(), awsClient(f.URL, s))
			got := f.executed("GetItem")
			t.Logf("%s: GetItem 503, 503, 200: executed %d, err %v", s, got, err)
			switch s {
			case retriesOffUnmarked:
				// A POST otelretry may not repeat: the first 503 is the answer.
				if err == nil || got != 1 {
					t.Errorf("executed %d, err %v; want 1 and the 503", got, err)
				}
				return
			}
			if err != nil || got != 3 {
				t.Fatalf("executed %d, err %v; want 3 and the item", got, err)
			}
			if v, ok := out.Item["name"].(*types.AttributeValueMemberS); !ok || v.Value != "a small item" {
				t.Errorf("item %v", out.Item)
			}
			bodies := f.bodiesOf("GetItem")
			for _, b := range bodies[1:] {
				if b != bodies[0] {
					t.Errorf("retried body %q, first %q", b, bodies[0])
				}
			}
		})
	}
}

// gzipAnswer answers as jsonAnswer does, the body gzip-compressed when the
// request asks for it, as DynamoDB does for a client with
// EnableAcceptEncodingGzip (the SDK decompresses above otelretry).
func gzipAnswer(w http.ResponseWriter, r *http.Request, status int, body string) {
	if !strings.Contains(r.Header.Get("Accept-Encoding"), "gzip") {
		jsonAnswer(w, status, body)
		return
	}
	var b bytes.Buffer
	zw := gzip.NewWriter(&b)
	io.WriteString(zw, body)
	zw.Close()
	w.Header().Set("Content-Encoding", "gzip")
	jsonAnswer(w, status, b.String())
}

// TestDynamoDBThrottledRetried: DynamoDB answers a request it refused
// unrun 400, its throttling error type in the body; the SDK's retryer
// retries it, read or write. With the SDK's retries off, the recipe
// retried neither (otelretry does not retry a 400), until it read the type
// into a should-retry header below otelretry.
func TestDynamoDBThrottledRetried(t *testing.T) {
	for _, throttle := range []string{"ProvisionedThroughputExceededException", "ThrottlingException", "RequestLimitExceeded", "ThrottlingException, gzip"} {
		for _, s := range []setup{sdkDefaults, recipe} {
			t.Run(throttle+"/"+s.String(), func(t *testing.T) {
				throttle, gzipped := strings.CutSuffix(throttle, ", gzip") // the client's EnableAcceptEncodingGzip
				f := newFakeDynamoDB(t, func(op string, n int, w http.ResponseWriter, r *http.Request) {
					switch {
					case n == 1:
						gzipAnswer(w, r, 400, `{"__type":"com.amazonaws.dynamodb.v20120810#`+throttle+`","message":"slow down"}`)
					case op == "GetItem":
						gzipAnswer(w, r, 200, item)
					default:
						gzipAnswer(w, r, 200, `{}`)
					}
				})
				c := awsClientWith(f.URL, s, func(o *dynamodb.Options) { o.EnableAcceptEncodingGzip = gzipped })
				_, getErr := getItem(t.Context(), c)
				putErr := putItem(t.Context(), c)
				if getErr != nil || putErr != nil || f.executed("GetItem") != 2 || f.executed("PutItem") != 2 {
					t.Errorf("GetItem: %v after %d; PutItem: %v after %d; want each retried once", getErr, f.executed("GetItem"), putErr, f.executed("PutItem"))
				}
			})
		}
	}
	// A 400 that is no throttling is the caller's mistake: not retried.
	f := newFakeDynamoDB(t, func(op string, n int, w http.ResponseWriter, r *http.Request) {
		jsonAnswer(w, 400, `{"__type":"com.amazonaws.dynamodb.v20120810#ValidationException","message":"bad key"}`)
	})
	if _, err := getItem(t.Context(), awsClient(f.URL, recipe)); err == nil || f.executed("GetItem") != 1 {
		t.Errorf("a ValidationException: %v after %d; want it returned after 1", err, f.executed("GetItem"))
	}
}

// The SDK's request bodies have no GetBody: without otelretry's body
// buffer, the recipe's read is not replayable and the first 503 is the
// answer.
func TestDynamoDBReadNeedsTheBodyBuffer(t *testing.T) {
	f := newFakeDynamoDB(t, func(op string, n int, w http.ResponseWriter, r *http.Request) {
		if n <= 2 {
			unavailable(w)
			return
		}
		jsonAnswer(w, 200, item)
	})
	_, err := getItem(t.Context(), awsClient(f.URL, recipe, otelretry.WithBodyBuffer(0, 0)))
	if got := f.executed("GetItem"); err == nil || got != 1 {
		t.Errorf("executed %d, err %v; want 1 and the 503 (not replayable)", got, err)
	}
}

// TestDynamoDBWriteNotRepeated: a PutItem the server executed and never
// answered (hung, under an otelretry deadline of 300 ms), or answered by
// dropping the connection: 1 execution in both setups. At its defaults
// the SDK's standard retryer asks the error's RetryableError() first,
// which otelretry answers false for a write whose outcome is unknown
// (before it did, the retryer resent such a PutItem twice: 3 executions).
func TestDynamoDBWriteNotRepeated(t *testing.T) {
	for _, mode := range []string{"hung", "dropped"} {
		for _, s := range []setup{sdkDefaults, recipe} {
			t.Run(mode+"/"+s.String(), func(t *testing.T) {
				t.Parallel()
				f := newFakeDynamoDB(t, func(op string, n int, w http.ResponseWriter, r *http.Request) {
					if mode == "hung" {
						hang(r)
						return
					}
					drop(w)
				})
				err := putItem(t.Context(), awsClient(f.URL, s, otelretry.WithDeadline(300*time.Millisecond)))
				got := f.executed("PutItem")
				t.Logf("%s write, %s: executed %d, unknown outcome %v, err %v", mode, s, got, errors.Is(err, otelretry.ErrOutcomeUnknown), err)
				if err == nil {
					t.Fatal("no error")
				}
				if got != 1 {
					t.Errorf("executed %d, want 1", got)
				}
				if !errors.Is(err, otelretry.ErrOutcomeUnknown) {
					t.Errorf("error %v does not match ErrOutcomeUnknown", err)
				}
				var oe *otelretry.Error
				if s == recipe && (!errors.As(err, &oe) || oe.OperationID == "") {
					t.Errorf("no operation id reachable from %v", err)
				}
			})
		}
	}
}

// TestDynamoDBRetryAfter: 429 with Retry-After, then the item.
func TestDynamoDBRetryAfter(t *testing.T) {
	for _, s := range []setup{sdkDefaults, recipe} {
		t.Run(s.String(), func(t *testing.T) {
			var mu sync.Mutex
			var times []time.Time
			f := newFakeDynamoDB(t, func(op string, n int, w http.ResponseWriter, r *http.Request) {
				mu.Lock()
				times = append(times, time.Now())
				mu.Unlock()
				if n == 1 {
					w.Header().Set("Retry-After", "1")
					jsonAnswer(w, 429, `{"__type":"com.amazonaws.dynamodb.v20120810#ThrottlingException","message":"slow down"}`)
					return
				}
				jsonAnswer(w, 200, item)
			})
			_, err := getItem(t.Context(), awsClient(f.URL, s))
			got := f.executed("GetItem")
			var gap time.Duration
			if len(times) > 1 {
				gap = times[1].Sub(times[0])
			}
			t.Logf("%s: 429 Retry-After: 1, then 200: executed %d, gap %v, err %v", s, got, gap.Round(10*time.Millisecond), err)
			if err != nil || got != 2 {
				t.Fatalf("executed %d, err %v; want 2 and the item", got, err)
			}
			if s == sdkDefaults && gap > 500*time.Millisecond {
				t.Errorf("the SDK waited %v: it was measured ignoring Retry-After", gap)
			}
			if s == recipe && gap < 900*time.Millisecond {
				t.Errorf("retried after %v, before the server's Retry-After (1s)", gap)
			}
		})
	}
}

// TestDynamoDBCallerDeadline: the caller's deadline (300ms) is shorter
// than otelretry's (2s); the server hangs.
func TestDynamoDBCallerDeadline(t *testing.T) {
	f := newFakeDynamoDB(t, func(op string, n int, w http.ResponseWriter, r *http.Request) { hang(r) })
	ctx, cancel := context.WithTimeout(t.Context(), 300*time.Millisecond)
	defer cancel()
	start := time.Now()
	_, err := getItem(ctx, awsClient(f.URL, recipe))
	took := time.Since(start)
	if !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("error %v, want a deadline", err)
	}
	if took > time.Second {
		t.Errorf("took %v, want about the caller's 300ms", took)
	}
	if got := f.executed("GetItem"); got != 1 {
		t.Errorf("executed %d, want 1", got)
	}
}

// A PutItem executed and never answered, ended by the caller's deadline
// (300 ms, with a cause; otelretry's 2 s): smithy-go returns a
// *smithy.CanceledError around ctx.Err() once the context is done, so the
// SDK's error no longer says the write's outcome is unknown; a result slot
// does, and keepOutcomeUnknown puts it back, with the operation id and the
// caller's cause (docs/sdk-recipes.md, the AWS section).
func TestDynamoDBWriteUnderTheCallersDeadlineNeedsKeepOutcomeUnknown(t *testing.T) {
	f := newFakeDynamoDB(t, func(op string, n int, w http.ResponseWriter, r *http.Request) { hang(r) })
	cause := errors.New("the handler's time is spent")
	put := func(ctx context.Context) error { return putItem(ctx, awsClient(f.URL, recipe)) }

	ctx, cancel := context.WithTimeoutCause(t.Context(), 300*time.Millisecond, cause)
	defer cancel()
	var results otelretry.Results
	err := put(otelretry.WithResults(ctx, &results))
	if last, _ := results.Last(); !last.OutcomeUnknown || errors.Is(err, otelretry.ErrOutcomeUnknown) || !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("alone: slot %+v, SDK error %v; want the slot's unknown write and an error of ctx.Err() only", last, err)
	}

	ctx, cancel = context.WithTimeoutCause(t.Context(), 300*time.Millisecond, cause)
	defer cancel()
	err = keepOutcomeUnknown(ctx, put)
	var oe *otelretry.Error
	if !errors.Is(err, otelretry.ErrOutcomeUnknown) || !errors.As(err, &oe) || oe.OperationID == "" || !errors.Is(err, cause) {
		t.Errorf("through keepOutcomeUnknown: %v; want ErrOutcomeUnknown, the operation id and the caller's cause", err)
	}
	if got := f.executed("PutItem"); got != 2 {
		t.Errorf("executed %d, want 1 per call", got)
	}
}

// TestDynamoDBLargeDownload: a Scan whose answer (4 MiB) takes longer than
// the attempt timeout to read is read whole.
func TestDynamoDBLargeDownload(t *testing.T) {
	const items, size = 64, 64 << 10
	var page strings.Builder
	page.WriteString(`{"Count":64,"ScannedCount":64,"Items":[`)
	for i := range items {
		if i > 0 {
			page.WriteByte(',')
		}
		fmt.Fprintf(&page, `{"id":{"S":"%d"},"blob":{"S":"%s"}}`, i, strings.Repeat("x", size))
	}
	page.WriteString(`]}`)
	f := newFakeDynamoDB(t, func(op string, n int, w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/x-amz-json-1.0")
		w.WriteHeader(200)
		body := page.String()
		// Slowly: 8 chunks, 60ms apart, past the 400ms attempt timeout.
		for i := 0; i < 8; i++ {
			io.WriteString(w, body[i*len(body)/8:(i+1)*len(body)/8])
			w.(http.Flusher).Flush()
			time.Sleep(60 * time.Millisecond)
		}
	})
	out, err := awsClient(f.URL, recipe).Scan(t.Context(), &dynamodb.ScanInput{TableName: aws.String("items")})
	if err != nil {
		t.Fatal(err)
	}
	if len(out.Items) != items || f.executed("Scan") != 1 {
		t.Errorf("%d items in %d executions, want %d in 1", len(out.Items), f.executed("Scan"), items)
	}
}

// TestDynamoDBStandardRetryerKeepsTheUnknownWrite: the SDK's standard
// retryer over a hung server. smithy-go wraps every error of the HTTP
// client in a RequestSendError whose ConnectionError() is true, and the
// retryer retries connection errors before it looks at timeouts, so
// (*otelretry.Error).Timeout() alone would not stop it (3 executions of
// the PutItem, each an unknown write, before RetryableError). It asks an
// error's RetryableError() first: otelretry's is false for an unknown
// write, so the PutItem is executed once. A read marked repeatable that
// ran out of attempts is retried above (RetryableError true for
// max_attempts), until the retry budget refuses.
func TestDynamoDBStandardRetryerKeepsTheUnknownWrite(t *testing.T) {
	t.Run("write, outcome unknown", func(t *testing.T) {
		f := newFakeDynamoDB(t, func(op string, n int, w http.ResponseWriter, r *http.Request) { hang(r) })
		var results otelretry.Results
		err := putItem(otelretry.WithResults(t.Context(), &results), awsClient(f.URL, sdkDefaults))
		got, ops := f.executed("PutItem"), results.Operations()
		t.Logf("hung PutItem, standard retryer: executed %d, %d operations, all unknown %v, net.Error timeout %v, err %v", got, len(ops), allUnknown(ops), isTimeout(err), err)
		if got != 1 || len(ops) != 1 || !allUnknown(ops) || !errors.Is(err, otelretry.ErrOutcomeUnknown) || isTimeout(err) {
			t.Errorf("executed %d, operations %+v, err %v; want 1, 1 unknown write, ErrOutcomeUnknown, no timeout", got, ops, err)
		}
	})
	t.Run("read, timed out", func(t *testing.T) {
		f := newFakeDynamoDB(t, func(op string, n int, w http.ResponseWriter, r *http.Request) { hang(r) })
		var results otelretry.Results
		ctx := otelretry.WithResults(otelretry.WithIntent(t.Context(), otelretry.Intent{Repeatable: true}), &results)
		_, err := getItem(ctx, awsClient(f.URL, sdkDefaults))
		got, ops := f.executed("GetItem"), results.Operations()
		t.Logf("hung GetItem marked repeatable, standard retryer: executed %d in %d operations %+v, net.Error timeout %v, err %v", got, len(ops), ops, isTimeout(err), err)
		if got != 4 || len(ops) != 2 || ops[0].Outcome != "max_attempts" || ops[1].Outcome != "budget_exhausted" {
			t.Errorf("executed %d in %d operations %+v, err %v; want 4 in 2: max_attempts, then budget_exhausted", got, len(ops), ops, err)
		}
	})
}

// TestDynamoDBWriteUnderAClientTimeout: a hung PutItem whose http.Client
// has a Timeout (awshttp's WithTimeout sets one). When net/http's timer
// fires before otelretry returns, as it does at the same instant as the
// context's deadline, Client.Do flattens otelretry's error to a timeout of
// its own: the RetryableError() the standard retryer asks first is gone,
// and the SDK at its defaults resends the write (docs/sdk-recipes.md says
// so). Each try's result slot still reports its unknown write. The
// recipe (the SDK's retries off) executes it once, and so do the SDK's
// defaults when otelretry's deadline ends before the Client's Timeout.
func TestDynamoDBWriteUnderAClientTimeout(t *testing.T) {
	withClientTimeout := func(d time.Duration) func(*dynamodb.Options) {
		return func(o *dynamodb.Options) {
			c := *o.HTTPClient.(*http.Client)
			c.Timeout = d
			o.HTTPClient = &c
		}
	}
	put := func(t *testing.T, c *dynamodb.Client, timeout time.Duration) (executed int, ops []otelretry.OperationResult, err error) {
		f := newFakeDynamoDB(t, func(op string, n int, w http.ResponseWriter, r *http.Request) { hang(r) })
		var results otelretry.Results
		_, err = c.PutItem(otelretry.WithResults(t.Context(), &results), &dynamodb.PutItemInput{TableName: aws.String("items"),
			Item: map[string]types.AttributeValue{"id": &types.AttributeValueMemberS{Value: "42"}}},
			func(o *dynamodb.Options) { o.BaseEndpoint = aws.String(f.URL) }, withClientTimeout(timeout))
		return f.executed("PutItem"), results.Operations(), err
	}
	t.Run("SDK defaults, the Timeout before otelretry's deadline", func(t *testing.T) {
		got, ops, err := put(t, awsClient("http://127.0.0.1:1", sdkDefaults), 200*time.Millisecond)
		t.Logf("executed %d in %d tries, err %v", got, len(ops), err)
		if got < 1 || got > 3 || len(ops) != got || !allUnknown(ops) {
			t.Errorf("executed %d, tries %+v; want 1 to 3 (the standard retryer's attempts), each try's slot an unknown write", got, ops)
		}
	})
	t.Run("recipe", func(t *testing.T) {
		got, ops, err := put(t, awsClient("http://127.0.0.1:1", recipe), 200*time.Millisecond)
		if got != 1 || len(ops) != 1 || !allUnknown(ops) {
			t.Errorf("executed %d, tries %+v, err %v; want 1, an unknown write", got, ops, err)
		}
	})
	t.Run("SDK defaults, otelretry's deadline first", func(t *testing.T) {
		c := awsClient("http://127.0.0.1:1", sdkDefaults, otelretry.WithDeadline(200*time.Millisecond))
		got, ops, err := put(t, c, 2*time.Second)
		if got != 1 || len(ops) != 1 || !allUnknown(ops) || !errors.Is(err, otelretry.ErrOutcomeUnknown) {
			t.Errorf("executed %d, tries %+v, err %v; want 1, an unknown write, ErrOutcomeUnknown", got, ops, err)
		}
	})
}

// isTimeout reports whether err holds a net.Error that is a timeout, as a
// retryer reads it.
func isTimeout(err error) bool {
	var ne net.Error
	return errors.As(err, &ne) && ne.Timeout()
}

func allUnknown(ops []otelretry.OperationResult) bool {
	for _, o := range ops {
		if !o.OutcomeUnknown {
			return false
		}
	}
	return len(ops) > 0
}

// TestDynamoDBKeepsTheCallersIntent: the recipe marks a read repeatable on
// top of the Intent the caller gave it, never in its place: a GetItem
// answered 503, 503, 200 under the caller's MaxAttempts of 2 is tried
// twice (retried, and no more), and under its NoRetry once.
func TestDynamoDBKeepsTheCallersIntent(t *testing.T) {
	for _, c := range callersIntents {
		t.Run(c.name, func(t *testing.T) {
			f := newFakeDynamoDB(t, func(op string, n int, w http.ResponseWriter, r *http.Request) {
				if n <= 2 {
					unavailable(w)
					return
				}
				jsonAnswer(w, 200, item)
			})
			_, err := getItem(otelretry.WithIntent(t.Context(), c.in), awsClient(f.URL, recipe))
			if got := f.executed("GetItem"); got != c.want || err == nil {
				t.Errorf("executed %d, err %v; want %d and the 503", got, err, c.want)
			}
		})
	}
}
