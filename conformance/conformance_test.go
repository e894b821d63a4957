package conformance

import (
	"regexp"
	"testing"
)

var idShape = regexp.MustCompile(`^([A-Z]+)-[0-9]{2}$`)

// mcpSource is what an mcp profile check's source must cite.
var mcpSource = regexp.MustCompile(`MCP (authorization|transports)|RFC [0-9]{4}|OAuth 2\.1|OpenID Connect`)

var areaPrefix = map[string]string{
	"discovery": "DISC", "register": "REG", "authorize": "AUTHZ", "token": "TOKEN", "device": "DEV",
	"ping": "PING", "apikey": "KEY", "headers": "HDR", "login": "LOGIN",
	"refresh": "REFRESH", "revoke": "REVOKE", "cimd": "CIMD", "mcp": "MCP", "machine": "MACH",
}

func TestCatalogue(t *testing.T) {
	cat := Catalogue()
	if len(cat) < 50 {
		t.Errorf("catalogue has %d checks, want at least 50", len(cat))
	}
	mcp := MCPCatalogue()
	if len(mcp) < 60 {
		t.Errorf("the mcp profile has %d checks, want at least 60", len(mcp))
	}
	cat = append(cat, mcp...)
	seen := map[string]bool{}
	for i, c := range cat {
		prefix := areaPrefix[c.Area]
		if i >= len(cat)-len(mcp) {
			prefix = "MCP" // the mcp profile's areas share names with the contract's
			if !mcpSource.MatchString(c.Source) {
				t.Errorf("%s: source %q names no MCP section, RFC or OAuth 2.1", c.ID, c.Source)
			}
		}
		m := idShape.FindStringSubmatch(c.ID)
		switch {
		case m == nil:
			t.Errorf("%s: ID does not look like AREA-NN", c.ID)
		case prefix != m[1]:
			t.Errorf("%s: area %q, want the prefix %s", c.ID, c.Area, prefix)
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
