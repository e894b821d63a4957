package conformance

import (
	"regexp"
	"testing"
)

var idShape = regexp.MustCompile(`^([A-Z]+)-[0-9]{2}$`)

var areaPrefix = map[string]string{
	"discovery": "DISC", "register": "REG", "authorize": "AUTHZ", "token": "TOKEN", "device": "DEV",
	"ping": "PING", "apikey": "KEY", "headers": "HDR", "login": "LOGIN",
	"refresh": "REFRESH", "revoke": "REVOKE", "cimd": "CIMD", "mcp": "MCP",
}

func TestCatalogue(t *testing.T) {
	cat := Catalogue()
	if len(cat) < 50 {
		t.Errorf("catalogue has %d checks, want at least 50", len(cat))
	}
	cat = append(cat, MCPCatalogue()...)
	seen := map[string]bool{}
	for _, c := range cat {
		m := idShape.FindStringSubmatch(c.ID)
		switch {
		case m == nil:
			t.Errorf("%s: ID does not look like AREA-NN", c.ID)
		case areaPrefix[c.Area] != m[1]:
			t.Errorf("%s: area %q, want the prefix %s", c.ID, c.Area, areaPrefix[c.Area])
		}
		if seen[c.ID] {
			t.Errorf("%s: duplicate ID", c.ID)
		}
		seen[c.ID] = true
		if c.Title == "" || c.Source == "" || c.Run == nil {
			t.Errorf("%s: title, source and run are required", c.ID)
		}
		if c.Has(NeedTimeTravel) != (c.Wait > 0) {
			t.Errorf("%s: NeedTimeTravel and Wait (%s) must go together", c.ID, c.Wait)
		}
	}
}
