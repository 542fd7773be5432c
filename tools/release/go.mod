// Build-only module of the release tooling (scripts/release.sh,
// scripts/release-test.sh, scripts/apicheck.sh, scripts/apibaseline.sh):
// module zips and a file-system module proxy (golang.org/x/mod), the
// API compatibility check (golang.org/x/exp/apidiff), and CHANGELOG.md
// read as CommonMark (github.com/yuin/goldmark). Kept apart from the
// library's go.mod on purpose, and out of go.work (run its tests with
// GOWORK=off, as scripts/test.sh does); not published.
module github.com/otelretry/otelretry-go/tools/release

go 1.26.0

require (
	github.com/yuin/goldmark v1.8.7
	golang.org/x/exp v0.0.0-20261113113407-e3970619a1a4
	golang.org/x/mod v0.43.0
	golang.org/x/tools v0.52.1-0.20261106145633-d407941a339a
)

require golang.org/x/sync v0.24.0 // indirect
