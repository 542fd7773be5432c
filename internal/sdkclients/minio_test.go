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
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/minio/minio-go/v7"
	"github.com/minio/minio-go/v7/pkg/credentials"

	"github.com/otelretry/otelretry-go/otelretry"
)

func s3Error(w http.ResponseWriter, status int, code string) {
	w.Header().Set("Content-Type", "application/xml")
	w.WriteHeader(status)
	fmt.Fprintf(w, `<?xml version="1.0" encoding="UTF-8"?><Error><Code>%s</Code><Message>busy</Message><Resource>/items/a</Resource><RequestId>1</RequestId></Error>`, code)
}

func s3Object(w http.ResponseWriter, body string) {
	w.Header().Set("Content-Type", "application/octet-stream")
	w.Header().Set("Content-Length", fmt.Sprint(len(body)))
	w.Header().Set("ETag", `"d41d8cd98f00b204e9800998ecf8427e"`)
	w.Header().Set("Last-Modified", "Mon, 02 Jan 2006 15:04:05 GMT")
	w.WriteHeader(200)
	io.WriteString(w, body)
}

type minioSetup int

const (
	minioDefaults minioSetup = iota // the client at its defaults
	minioRecipe                     // otelretryOwnsMinioRetries
)

func (s minioSetup) String() string { return [...]string{"SDK defaults", "recipe"}[s] }

// minioClient is a client of the fake over a fresh otelretry Transport;
// tries counts the client's calls to it at its defaults.
func minioClient(t *testing.T, url string, s minioSetup) (*minio.Client, *tries) {
	o := &minio.Options{Creds: credentials.NewStaticV4("AKID", "secret", ""), Region: "us-east-1"}
	rt := &tries{next: testTransport()}
	switch s {
	case minioRecipe: // as newMinio: minio-go's default transport under otelretry
		if err := otelretryOwnsMinioRetries(o, testOptions()...); err != nil {
			t.Fatal(err)
		}
	default:
		o.Transport = rt
	}
	c, err := minio.New(strings.TrimPrefix(url, "http://"), o)
	if err != nil {
		t.Fatal(err)
	}
	return c, rt
}

func minioGet(ctx context.Context, c *minio.Client) ([]byte, error) {
	obj, err := c.GetObject(ctx, "items", "a", minio.GetObjectOptions{})
	if err != nil {
		return nil, err
	}
	defer obj.Close()
	return io.ReadAll(obj)
}

const smallObject = "a small object"

// TestMinioReadRetried: a GetObject answered 503, 503, 200.
func TestMinioReadRetried(t *testing.T) {
	for _, s := range []minioSetup{minioDefaults, minioRecipe} {
		t.Run(s.String(), func(t *testing.T) {
			f := newCountingServer(t, methodAndPath, func(k string, n int, w http.ResponseWriter, r *http.Request) {
				if n <= 2 {
					s3Error(w, 503, "SlowDown")
					return
				}
				s3Object(w, smallObject)
			})
			c, rt := minioClient(t, f.URL, s)
			b, err := minioGet(t.Context(), c)
			got := f.executed("GET /items/a")
			t.Logf("GetObject 503, 503, 200, %s: executed %d in %d client tries, err %v", s, got, rt.n.Load(), err)
			if err != nil || string(b) != smallObject || got != 3 {
				t.Errorf("executed %d, read %q, err %v; want 3 and the object", got, b, err)
			}
		})
	}
}

// TestMinioWriteNotRepeated: a small PutObject the server executed and
// never answered (hung), or answered by dropping the connection, under a
// caller's deadline of 3s (minio-go's 10 tries back off up to 1s each).
func TestMinioWriteNotRepeated(t *testing.T) {
	t.Parallel()
	for _, mode := range []string{"hung", "dropped"} {
		for _, s := range []minioSetup{minioDefaults, minioRecipe} {
			t.Run(mode+"/"+s.String(), func(t *testing.T) {
				// A hung server is waited out under the client's own
				// timeouts; each case has a server and a client of its
				// own, so the cases wait together.
				t.Parallel()
				f := newCountingServer(t, methodAndPath, func(k string, n int, w http.ResponseWriter, r *http.Request) {
					if mode == "hung" {
						hang(r)
						return
					}
					drop(w)
				})
				c, rt := minioClient(t, f.URL, s)
				ctx, cancel := context.WithTimeout(t.Context(), 3*time.Second)
				defer cancel()
				ctx = otelretry.WithOperationID(ctx, "put-items-a")
				ctx, otelretryErr := withOtelretryError(ctx)
				_, err := c.PutObject(ctx, "items", "a", bytes.NewReader([]byte(smallObject)), int64(len(smallObject)), minio.PutObjectOptions{})
				got := f.executed("PUT /items/a")
				t.Logf("%s write, %s: executed %d in %d client tries, unknown outcome %v (kept: %v), err %v", mode, s, got, rt.n.Load(),
					errors.Is(err, otelretry.ErrOutcomeUnknown), errors.Is(otelretryErr(), otelretry.ErrOutcomeUnknown), err)
				if err == nil {
					t.Fatal("no error")
				}
				if s == minioRecipe {
					var oe *otelretry.Error
					kept := otelretryErr()
					if got != 1 || !errors.Is(kept, otelretry.ErrOutcomeUnknown) || !errors.As(kept, &oe) || oe.OperationID != "put-items-a" {
						t.Errorf("executed %d, kept %v; want 1 and ErrOutcomeUnknown for put-items-a", got, kept)
					}
					if s == minioRecipe && mode == "dropped" && errors.Is(err, otelretry.ErrOutcomeUnknown) {
						t.Log("minio-go no longer hides the EOF: docs/sdk-recipes.md can say so")
					}
				}
			})
		}
	}
}

// TestMinioRetryAfter: a GetObject answered 429 with Retry-After, then the
// object.
func TestMinioRetryAfter(t *testing.T) {
	for _, s := range []minioSetup{minioDefaults, minioRecipe} {
		t.Run(s.String(), func(t *testing.T) {
			f := newCountingServer(t, methodAndPath, func(k string, n int, w http.ResponseWriter, r *http.Request) {
				if n == 1 {
					w.Header().Set("Retry-After", "1")
					s3Error(w, 429, "SlowDown")
					return
				}
				s3Object(w, smallObject)
			})
			c, rt := minioClient(t, f.URL, s)
			_, err := minioGet(t.Context(), c)
			const key = "GET /items/a"
			got, gap := f.executed(key), f.gap(key)
			t.Logf("429 Retry-After: 1, then 200, %s: executed %d in %d client tries, gap %v, err %v", s, got, rt.n.Load(), gap.Round(10*time.Millisecond), err)
			if err != nil || got != 2 || gap < 900*time.Millisecond {
				t.Errorf("executed %d, gap %v, err %v; want 2, after the server's 1s", got, gap, err)
			}
		})
	}
}

// TestMinioCallerDeadline: the caller's deadline (300ms) is shorter than
// otelretry's (2s); the server hangs on a GetObject.
func TestMinioCallerDeadline(t *testing.T) {
	for _, s := range []minioSetup{minioDefaults, minioRecipe} {
		t.Run(s.String(), func(t *testing.T) {
			f := newCountingServer(t, methodAndPath, func(k string, n int, w http.ResponseWriter, r *http.Request) { hang(r) })
			c, rt := minioClient(t, f.URL, s)
			ctx, cancel := context.WithTimeout(t.Context(), 300*time.Millisecond)
			defer cancel()
			start := time.Now()
			_, err := minioGet(ctx, c)
			took, got := time.Since(start), f.executed("GET /items/a")
			t.Logf("caller deadline 300ms, %s: executed %d in %d client tries, took %v, err %v", s, got, rt.n.Load(), took.Round(10*time.Millisecond), err)
			if !errors.Is(err, context.DeadlineExceeded) || took > time.Second || got != 1 {
				t.Errorf("executed %d, took %v, err %v; want 1, about 300ms, a deadline", got, took, err)
			}
		})
	}
}

// TestMinioLargeDownload: an object of 4 MiB that takes longer than the
// attempt timeout to read is read whole.
func TestMinioLargeDownload(t *testing.T) {
	blob := strings.Repeat("x", 4<<20)
	f := newCountingServer(t, methodAndPath, func(k string, n int, w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Length", fmt.Sprint(len(blob)))
		w.Header().Set("ETag", `"d41d8cd98f00b204e9800998ecf8427e"`)
		w.Header().Set("Last-Modified", "Mon, 02 Jan 2006 15:04:05 GMT")
		w.WriteHeader(200)
		for i := 0; i < 8; i++ { // 8 chunks, 60ms apart, past the 400ms attempt timeout
			io.WriteString(w, blob[i*len(blob)/8:(i+1)*len(blob)/8])
			w.(http.Flusher).Flush()
			time.Sleep(60 * time.Millisecond)
		}
	})
	c, _ := minioClient(t, f.URL, minioRecipe)
	b, err := minioGet(t.Context(), c)
	if err != nil || len(b) != len(blob) || f.executed("GET /items/a") != 1 {
		t.Errorf("read %d of %d bytes in %d executions, err %v", len(b), len(blob), f.executed("GET /items/a"), err)
	}
}

// An object stored with Content-Encoding: gzip (a .tar.gz or a
// pre-compressed asset uploaded with that metadata). minio-go's own
// transport sets DisableCompression so that its bytes come back as stored.
// With the recipe as docs/sdk-recipes.md writes newMinio (o.Transport
// unset), otelretryOwnsMinioRetries puts otelretry over that transport, not
// http.DefaultTransport, which would decompress the object: it reads the
// bytes stored.
func TestTheMinioRecipeKeepsAGzipObjectsBytes(t *testing.T) {
	var gz bytes.Buffer
	zw := gzip.NewWriter(&gz)
	io.WriteString(zw, strings.Repeat("a small object, compressed. ", 40))
	zw.Close()
	stored := gz.Bytes()
	f := newCountingServer(t, methodAndPath, func(k string, n int, w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/gzip")
		w.Header().Set("Content-Encoding", "gzip")
		w.Header().Set("Content-Length", fmt.Sprint(len(stored)))
		w.Header().Set("ETag", `"0123456789abcdef0123456789abcdef"`)
		w.Header().Set("Last-Modified", "Mon, 02 Jan 2006 15:04:05 GMT")
		w.WriteHeader(200)
		w.Write(stored)
	})
	endpoint := strings.TrimPrefix(f.URL, "http://")
	read := func(o *minio.Options) ([]byte, int64, error) {
		c, err := minio.New(endpoint, o)
		if err != nil {
			t.Fatal(err)
		}
		obj, err := c.GetObject(t.Context(), "items", "a", minio.GetObjectOptions{})
		if err != nil {
			return nil, 0, err
		}
		defer obj.Close()
		st, _ := obj.Stat()
		b, err := io.ReadAll(obj)
		return b, st.Size, err
	}
	// minio-go alone.
	plain, plainSize, err := read(&minio.Options{Creds: credentials.NewStaticV4("AKID", "secret", ""), Region: "us-east-1"})
	t.Logf("minio-go alone: %d bytes (stat size %d), err %v, Accept-Encoding sent %q", len(plain), plainSize, err, f.headerOf("GET /items/a", "Accept-Encoding"))
	if err != nil || !bytes.Equal(plain, stored) {
		t.Fatalf("minio-go alone: %d bytes, err %v; want the %d stored", len(plain), err, len(stored))
	}
	// The recipe, as newMinio writes it (no Transport of the caller's).
	o := &minio.Options{Creds: credentials.NewStaticV4("AKID", "secret", ""), Region: "us-east-1"}
	if err := otelretryOwnsMinioRetries(o); err != nil {
		t.Fatal(err)
	}
	got, size, err := read(o)
	t.Logf("recipe: %d bytes (stat size %d), err %v, Accept-Encoding sent %q", len(got), size, err, f.headerOf("GET /items/a", "Accept-Encoding"))
	if err != nil || !bytes.Equal(got, stored) {
		t.Errorf("through the recipe: %d bytes (stat size %d), err %v; want the %d bytes stored, as minio-go alone reads them", len(got), size, err, len(stored))
	}
}

// TestMinioThrottledWriteRetried: a PutObject S3 refused with 503
// SlowDown, then stored. minio-go at its defaults retries it; the recipe's
// one try per call left it to otelretry, which does not resend a write
// after a 503: the write failed. s3SlowDowns reads S3's code as the
// service's word that the request was refused, so otelretry retries it
// (its body replayable: up to the body buffer's 64 KiB).
func TestMinioThrottledWriteRetried(t *testing.T) {
	for _, s := range []minioSetup{minioDefaults, minioRecipe} {
		t.Run(s.String(), func(t *testing.T) {
			f := newCountingServer(t, methodAndPath, func(k string, n int, w http.ResponseWriter, r *http.Request) {
				io.Copy(io.Discard, r.Body)
				if n == 1 {
					s3Error(w, 503, "SlowDown")
					return
				}
				w.Header().Set("ETag", `"d41d8cd98f00b204e9800998ecf8427e"`)
				w.WriteHeader(200)
			})
			c, rt := minioClient(t, f.URL, s)
			_, err := c.PutObject(t.Context(), "items", "a", bytes.NewReader([]byte(smallObject)), int64(len(smallObject)), minio.PutObjectOptions{})
			got := f.executed("PUT /items/a")
			t.Logf("PutObject 503 SlowDown, then 200, %s: executed %d in %d client tries, err %v", s, got, rt.n.Load(), err)
			if err != nil || got != 2 {
				t.Errorf("executed %d, err %v; want 2 and the object stored", got, err)
			}
		})
	}
}
