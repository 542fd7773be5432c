module github.com/otelretry/otelretry-go/internal/e2e

go 1.26.0
