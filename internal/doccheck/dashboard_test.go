// Copyright The otelretry Authors
// SPDX-License-Identifier: Apache-2.0

package doccheck

import (
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"testing"
)

// TestStackPageCountsTheDashboardsExpressions: docs/stack.md says how many
// PromQL expressions the end-to-end test evaluates, every one of the
// dashboard's: the count it gives is the dashboard's.
func TestStackPageCountsTheDashboardsExpressions(t *testing.T) {
	raw, err := os.ReadFile(filepath.Join(root, "deploy/grafana/dashboards/otelretry.json"))
	if err != nil {
		t.Fatal(err)
	}
	var dashboard struct {
		Panels []struct {
			Targets []struct {
				Expr string `json:"expr"`
			} `json:"targets"`
		} `json:"panels"`
	}
	if err := json.Unmarshal(raw, &dashboard); err != nil {
		t.Fatal(err)
	}
	exprs := 0
	for _, p := range dashboard.Panels {
		for _, tg := range p.Targets {
			if tg.Expr != "" {
				exprs++
			}
		}
	}
	page, err := os.ReadFile(filepath.Join(root, "docs/stack.md"))
	if err != nil {
		t.Fatal(err)
	}
	m := regexp.MustCompile(`every one of its (\d+) expressions`).FindSubmatch(page)
	if m == nil {
		t.Fatal(`docs/stack.md no longer says "every one of its N expressions"`)
	}
	if n, _ := strconv.Atoi(string(m[1])); n != exprs {
		t.Errorf("docs/stack.md says %d expressions; the dashboard has %d", n, exprs)
	}
}
