// Copyright The otelretry Authors
// SPDX-License-Identifier: Apache-2.0

package h3_test

import (
	"bytes"
	"context"
	"crypto/tls"
	"strings"
	"sync"
	"testing"

	"github.com/quic-go/qpack"
	"github.com/quic-go/quic-go"
	"github.com/quic-go/quic-go/http3"
	"github.com/quic-go/quic-go/quicvarint"
)

// Text a QUIC server writes that quic-go's client prints in its error: a
// CONNECTION_CLOSE's reason phrase (RFC 9000 §19.19: "H3_INTERNAL_ERROR:
// …", "Application error 0x… (remote): …"), and a :status that is no
// number ("invalid status code: strconv.Atoi: parsing \"…\""). Neither
// reaches the caller's error, a span or a log record, as a GOAWAY's debug
// data and a header's value do not.
func TestHTTP3ServerTextReachesNoTelemetry(t *testing.T) {
	const secret = "SUPERSECRETSESSION0123456789"
	for _, tc := range []struct {
		name   string
		answer func(*quic.Conn, *quic.Stream)
	}{
		{"H3 reason phrase", func(conn *quic.Conn, _ *quic.Stream) {
			conn.CloseWithError(quic.ApplicationErrorCode(http3.ErrCodeInternalError), "session sid="+secret+" expired")
		}},
		{"QPACK reason phrase", func(conn *quic.Conn, _ *quic.Stream) {
			conn.CloseWithError(quic.ApplicationErrorCode(http3.ErrCodeQPACKDecompressionFailed), "session sid="+secret+" expired")
		}},
		{"application reason phrase", func(conn *quic.Conn, _ *quic.Stream) {
			conn.CloseWithError(0x1337, "session sid="+secret+" expired")
		}},
		{":status no number", func(_ *quic.Conn, str *quic.Stream) {
			var block bytes.Buffer
			enc := qpack.NewEncoder(&block)
			enc.WriteField(qpack.HeaderField{Name: ":status", Value: "sid=" + secret})
			enc.Close()
			frame := quicvarint.Append(nil, 0x01) // HEADERS
			frame = quicvarint.Append(frame, uint64(block.Len()))
			str.Write(append(frame, block.Bytes()...))
			str.Close()
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cert, pool := newCert(t)
			addr := rawQUICServer(t, cert, tc.answer)
			roundTripLeaks(t, pool, "https://"+addr+"/x", func(text string) bool { return strings.Contains(text, secret) })
		})
	}
}

// rawQUICServer answers each request stream with answer, on QUIC without
// http3's server (which would write neither text), after a control
// stream with empty SETTINGS; it returns its address, and stops with the
// test.
func rawQUICServer(t *testing.T, cert tls.Certificate, answer func(*quic.Conn, *quic.Stream)) string {
	addr, _ := serveQUIC(t, cert, func(conn *quic.Conn, _ *sync.WaitGroup) {
		if ctrl, err := conn.OpenUniStream(); err == nil {
			ctrl.Write([]byte{0x00, 0x04, 0x00}) // control stream, SETTINGS of length 0
		}
		if str, err := conn.AcceptStream(context.Background()); err == nil {
			answer(conn, str)
		}
	})
	return addr
}
