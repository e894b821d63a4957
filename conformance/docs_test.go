package conformance

import (
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"testing"
)

// checkIDPattern matches anything shaped like a check id (AREA-NN), so a
// typo or a removed check in the docs is caught, not just known ids.
var checkIDPattern = regexp.MustCompile(`\b[A-Z]{2,}-[0-9]{2}\b`)

// TestDocsNameEveryCheck keeps docs/service.md and docs/decisions.md true
// to the suite: every rule there names the checks that verify it, so each
// check of the catalogue must be named somewhere in them, and every id they
// name must be a check.
func TestDocsNameEveryCheck(t *testing.T) {
	named := map[string][]string{} // id -> files naming it
	for _, name := range []string{"service.md", "decisions.md"} {
		path := filepath.Join("..", "docs", name)
		b, err := os.ReadFile(path)
		if err != nil {
			t.Fatalf("reading the docs: %v", err)
		}
		for _, id := range checkIDPattern.FindAllString(string(b), -1) {
			if !slices.Contains(named[id], name) {
				named[id] = append(named[id], name)
			}
		}
	}
	known := map[string]bool{}
	for _, c := range append(Catalogue(), MCPCatalogue()...) {
		known[c.ID] = true
		if len(named[c.ID]) == 0 {
			t.Errorf("check %s (%s) is not named in docs/service.md or docs/decisions.md: add it to the rule it verifies", c.ID, c.Title)
		}
	}
	for id, files := range named {
		if !known[id] {
			t.Errorf("docs/%s names %s, which is no check of the catalogue", files[0], id)
		}
	}
}
