// Copyright The otelretry Authors
// SPDX-License-Identifier: Apache-2.0

// Package sdkclients drives cloud SDKs through otelretry.NewTransport,
// against local fakes on 127.0.0.1 that speak each SDK's protocol and
// count the requests the server executed: the SDK at its defaults and with
// its recipe, so that the tables of docs/sdk-recipes.md are measured. The
// *recipe.go files are that page's recipes (TestRecipesAreTheDocs): the
// AWS SDK v2 (DynamoDB), go-elasticsearch v8, the Vault api, minio-go v7,
// stripe-go v82, openai-go v3, azcore's pipeline and Kubernetes client-go.
package sdkclients
