package conformance

import (
	"context"
	"crypto/tls"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/mcpauth/mcpauth/internal/golden"
)

var update = flag.Bool("update", false, "rewrite the catalogue snapshot, ../testdata/conformance-catalogue.txt")

// The module's testdata/ (shared fixtures), seen from this package.
var sharedTestdata = filepath.Join("..", "testdata")

// testdata/conformance-catalogue.txt is the catalogue's snapshot: a check
// added, removed, renamed or re-graded shows up in review as a diff of that
// file. go test -update rewrites it.
func TestCatalogueSnapshot(t *testing.T) {
	var b strings.Builder
	b.WriteString("# id\tseverity\ttitle (go test ./conformance -run TestCatalogueSnapshot -update rewrites this file)\n")
	for _, part := range []struct {
		name   string
		checks []Check
	}{{"contract: Catalogue()", Catalogue()}, {"--profile mcp: MCPCatalogue()", MCPCatalogue()}} {
		fmt.Fprintf(&b, "# %s\n", part.name)
		for _, c := range part.checks {
			fmt.Fprintf(&b, "%s\t%s\t%s\n", c.ID, c.Severity, c.Title)
		}
	}
	golden.Check(t, filepath.Join(sharedTestdata, "conformance-catalogue.txt"), []byte(b.String()), *update)
}

// testdata/metadata/client-id-metadata.json is the document the CIMD checks
// publish: served by the suite's document host over loopback TLS, it reads
// back as clientDocument(its URL).
func TestExampleClientMetadataDocument(t *testing.T) {
	raw, err := os.ReadFile(filepath.Join(sharedTestdata, "metadata", "client-id-metadata.json"))
	if err != nil {
		t.Fatal(err)
	}
	h, err := NewDocumentHost(nil)
	if err != nil {
		t.Fatal(err)
	}
	defer h.Close()
	id := h.publish(docResponse{status: http.StatusNotFound, contentType: "text/plain"})
	body := strings.ReplaceAll(string(raw), "{{client_id}}", id)
	h.replace(id, docResponse{status: http.StatusOK, contentType: "application/json", body: []byte(body)})

	hc := &http.Client{Transport: &http.Transport{TLSClientConfig: &tls.Config{RootCAs: h.CertPool()}}}
	defer hc.CloseIdleConnections()
	req, err := http.NewRequestWithContext(context.Background(), http.MethodGet, id, nil)
	if err != nil {
		t.Fatal(err)
	}
	resp, err := hc.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	got, err := io.ReadAll(resp.Body)
	if err != nil || resp.StatusCode != http.StatusOK {
		t.Fatalf("GET %s: %d %v", id, resp.StatusCode, err)
	}
	var doc, want map[string]any
	wantJSON, _ := json.Marshal(clientDocument(id))
	if err := json.Unmarshal(got, &doc); err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(wantJSON, &want); err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(doc, want) {
		t.Fatalf("the example differs from what the suite publishes:\n%s\nwant %s", got, wantJSON)
	}
}
