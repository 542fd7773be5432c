// Copyright The otelretry Authors
// SPDX-License-Identifier: Apache-2.0

// Code generated from docs/sdk-recipes.md (section "Kubernetes client-go v0.37", snippet 1) by readmesnippets; DO NOT EDIT.

package snippets

import (
	"github.com/otelretry/otelretry-go/otelretry"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"net/http"
	"strconv"
)

// otelretryUnderClientGo puts otelretry under client-go's own wrappers
// (authentication, user agent), in WrapTransport: client-go refuses a
// custom Transport together with TLS options. The answers client-go
// resends itself are left to it.
func otelretryUnderClientGo(config *rest.Config, opts ...otelretry.Option) {
	opts = append([]otelretry.Option{otelretry.WithClassifier(leaveRetryAfterToClientGo)}, opts...)
	config.Wrap(func(rt http.RoundTripper) http.RoundTripper { return otelretry.NewTransport(rt, opts...) })
}

// leaveRetryAfterToClientGo stops otelretry's retries of the answers that
// client-go resends after the wait they name, whatever the verb (up to 10
// times): a 429 or a 5xx whose Retry-After is a whole number of seconds.
func leaveRetryAfterToClientGo(a otelretry.Answer) otelretry.Classification {
	if a.StatusCode == http.StatusTooManyRequests || a.StatusCode >= http.StatusInternalServerError {
		if _, err := strconv.Atoi(a.Header.Get("Retry-After")); err == nil {
			return otelretry.NotRetryable()
		}
	}
	return otelretry.Classification{}
}

func newKubernetes() (*kubernetes.Clientset, error) {
	config, err := rest.InClusterConfig() // or clientcmd's, from a kubeconfig
	if err != nil {
		return nil, err
	}
	otelretryUnderClientGo(config)
	return kubernetes.NewForConfig(config)
}
