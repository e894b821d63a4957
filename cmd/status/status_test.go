package status_test

import (
	"context"
	"encoding/json"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/mcpauth/mcpauth/cmd/cmdutil"
	"github.com/mcpauth/mcpauth/cmd/status"
	"github.com/mcpauth/mcpauth/creds"
	"github.com/mcpauth/mcpauth/internal/iostreams"
)

// The USER column shows the name the server gave with the id, the id alone,
// or "-" for entries stored without either.
func TestStatusShowsTheUser(t *testing.T) {
	ios, _, out, _ := iostreams.Test()
	vars := map[string]string{"MCPAUTH_CONFIG_DIR": t.TempDir()}
	f := cmdutil.New(ios, func(k string) string { return vars[k] })
	f.Globals.Storage = "file"
	st, err := f.OpenStore()
	if err != nil {
		t.Fatal(err)
	}
	exp := time.Now().Add(time.Hour)
	for _, e := range []struct {
		server string
		b      creds.Bundle
	}{
		{"http://127.0.0.1:1/mcp", creds.Bundle{AccessToken: "a", Expiry: exp, UserID: "u_1", UserName: "mona"}},
		{"http://127.0.0.1:2/mcp", creds.Bundle{Kind: creds.KindAPIKey, APIKey: "k", UserID: "u_2"}},
		{"http://127.0.0.1:3/mcp", creds.Bundle{AccessToken: "a", Expiry: exp}},
	} {
		if err := creds.Save(st, e.server, "default", e.b); err != nil {
			t.Fatal(err)
		}
	}
	if err := status.Run(context.Background(), &status.Options{F: f}); err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(out.String(), "\n")
	for server, user := range map[string]string{"http://127.0.0.1:1/mcp": "  user mona (u_1)  ", "http://127.0.0.1:2/mcp": "  user u_2  ", "http://127.0.0.1:3/mcp": "  user -  "} {
		i := slices.Index(lines, server)
		if i < 0 || i+1 >= len(lines) || !strings.Contains(lines[i+1], user) {
			t.Errorf("no entry for %s with %q under it:\n%s", server, user, out)
		}
	}

	out.Reset()
	f.Globals.Output = "json"
	if err := status.Run(context.Background(), &status.Options{F: f}); err != nil {
		t.Fatal(err)
	}
	var got []struct {
		Server string `json:"server"`
		UserID string `json:"user_id"`
		Name   string `json:"name"`
	}
	if err := json.Unmarshal(out.Bytes(), &got); err != nil || len(got) != 3 {
		t.Fatalf("json: %v\n%s", err, out)
	}
	for _, g := range got {
		if strings.HasSuffix(g.Server, ":1/mcp") && (g.UserID != "u_1" || g.Name != "mona") {
			t.Errorf("json entry %+v", g)
		}
	}
}
