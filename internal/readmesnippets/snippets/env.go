// Copyright The otelretry Authors
// SPDX-License-Identifier: Apache-2.0

package snippets

import (
	"context"
	"net/http"
)

// The names the snippets take from the code around them.
var (
	ctx         = context.Background()
	req         *http.Request
	ordersURL   = "http://orders.example"
	stateClient = http.DefaultClient
)
