package storetest

import (
	"bytes"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/mcpauth/mcpauth/server/store"
)

func normDoc(d store.MetadataDocument) store.MetadataDocument {
	d.FetchedAt, d.ExpiresAt = ms(d.FetchedAt), ms(d.ExpiresAt)
	return d
}

// The metadata document cache: get what was put, the latest put wins, keys
// are exact (URLs differing only in case are different clients), and nothing
// aliases the caller's bytes.
func testMetadataDocuments(t *testing.T, s store.Store) {
	ctx := t.Context()
	const u = "https://client.example/app/metadata.json"
	absent(t, "GetMetadataDocument before any put", s.GetMetadataDocument, u)

	body := []byte(`{"client_id":"` + u + `"}`)
	d := store.MetadataDocument{URL: u, Body: body, FetchedAt: base.Add(1500 * time.Microsecond), ExpiresAt: base.Add(5 * time.Minute)}
	must(t, "PutMetadataDocument", s.PutMetadataDocument(ctx, d))
	body[0] = 'X' // the store kept its own copy
	got, err := s.GetMetadataDocument(ctx, u)
	must(t, "GetMetadataDocument", err)
	d.Body = []byte(`{"client_id":"` + u + `"}`)
	same(t, "metadata document", got, d, normDoc)
	got.Body[0] = 'Y' // and hands out copies
	if again, _ := s.GetMetadataDocument(ctx, u); !bytes.Equal(again.Body, d.Body) {
		t.Errorf("changing a returned body changed the stored one: %q", again.Body)
	}

	d2 := store.MetadataDocument{URL: u, Body: []byte(`{"v":2}`), FetchedAt: base.Add(time.Hour), ExpiresAt: base.Add(2 * time.Hour)}
	must(t, "PutMetadataDocument (replace)", s.PutMetadataDocument(ctx, d2))
	stored(t, "replaced metadata document", s.GetMetadataDocument, u, d2, normDoc)

	upper := "https://client.example/APP/metadata.json"
	absent(t, "GetMetadataDocument of a URL differing in case", s.GetMetadataDocument, upper)
	absent(t, "GetMetadataDocument of a URL with a trailing ?", s.GetMetadataDocument, u+"?")
}

// GC removes cache entries strictly past their expiry and nothing else.
func testMetadataDocumentGC(t *testing.T, s store.Store) {
	ctx := t.Context()
	now := base.Add(time.Hour)
	for name, exp := range map[string]time.Time{
		"expired": now.Add(-time.Millisecond),
		"at-now":  now,
		"live":    now.Add(time.Millisecond),
	} {
		must(t, "PutMetadataDocument", s.PutMetadataDocument(ctx, store.MetadataDocument{
			URL: "https://client.example/" + name, Body: []byte("{}"), FetchedAt: base, ExpiresAt: exp,
		}))
	}
	n, err := s.GC(ctx, now)
	must(t, "GC", err)
	if n != 1 {
		t.Errorf("GC removed %d records, want 1", n)
	}
	absent(t, "expired document after GC", s.GetMetadataDocument, "https://client.example/expired")
	for _, name := range []string{"at-now", "live"} {
		if _, err := s.GetMetadataDocument(ctx, "https://client.example/"+name); err != nil {
			t.Errorf("%s document after GC: %v", name, err)
		}
	}
}

// Instances fetching one document at once all store it without error, and
// one complete entry remains.
func testConcurrentPutMetadataDocument(t *testing.T, s store.Store) {
	ctx := t.Context()
	const u = "https://client.example/race"
	const n = 20
	var wg sync.WaitGroup
	errs := make(chan error, n)
	for i := range n {
		wg.Go(func() {
			body := []byte(fmt.Sprintf(`{"i":%d}`, i))
			errs <- s.PutMetadataDocument(ctx, store.MetadataDocument{URL: u, Body: body, FetchedAt: base, ExpiresAt: base.Add(time.Duration(i) * time.Second)})
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		must(t, "concurrent PutMetadataDocument", err)
	}
	got, err := s.GetMetadataDocument(ctx, u)
	must(t, "GetMetadataDocument", err)
	var i int
	if _, err := fmt.Sscanf(string(got.Body), `{"i":%d}`, &i); err != nil || !ms(got.ExpiresAt).Equal(ms(base.Add(time.Duration(i)*time.Second))) {
		t.Errorf("after concurrent puts: body %q with expiry %v is not one put's", got.Body, got.ExpiresAt)
	}
}
