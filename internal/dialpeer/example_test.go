// Copyright The otelretry Authors
// SPDX-License-Identifier: Apache-2.0

package dialpeer_test

import (
	"fmt"
	"net/url"

	"github.com/otelretry/otelretry-go/internal/dialpeer"
)

func ExamplePeer() {
	for _, host := range []string{"[0:0::1]:0080", "2001:db8::abcd", "API.test.:8080"} {
		addr := dialpeer.Dialed(&url.URL{Scheme: "http", Host: host, Path: "/"}, "")
		peer, _ := dialpeer.Peer(addr)
		fmt.Printf("%s dials %s: peer %s\n", host, addr, peer)
	}
	// Output:
	// [0:0::1]:0080 dials [0:0::1]:0080: peer ::1 80
	// 2001:db8::abcd dials [2001:db8::abcd]:80: peer 2001:db8::abcd 80
	// API.test.:8080 dials API.test.:8080: peer api.test 8080
}
