package sqlstore

import (
	"context"
	"fmt"

	"github.com/mcpauth/mcpauth/server/store"
)

// PutMetadataDocument is one upsert: the latest fetch wins, on any instance.
func (s *Store) PutMetadataDocument(ctx context.Context, d store.MetadataDocument) error {
	_, err := s.exec(ctx, `INSERT INTO client_metadata_documents (url, body, fetched_at, expires_at) VALUES (?, ?, ?, ?)
		ON CONFLICT (url) DO UPDATE SET body = excluded.body, fetched_at = excluded.fetched_at, expires_at = excluded.expires_at`,
		d.URL, nonNilBytes(d.Body), ms(d.FetchedAt), ms(d.ExpiresAt))
	if err != nil {
		return fmt.Errorf("put metadata document: %w", err)
	}
	return nil
}

func (s *Store) GetMetadataDocument(ctx context.Context, url string) (store.MetadataDocument, error) {
	d := store.MetadataDocument{URL: url}
	var fetched, expires int64
	err := s.queryRow(ctx, `SELECT body, fetched_at, expires_at FROM client_metadata_documents WHERE url = ?`, url).
		Scan(&d.Body, &fetched, &expires)
	if err != nil {
		return store.MetadataDocument{}, notFound("get metadata document", err)
	}
	if len(d.Body) == 0 {
		d.Body = nil // empty and nil read back alike, as in the memory backend
	}
	d.FetchedAt, d.ExpiresAt = fromMS(fetched), fromMS(expires)
	return d, nil
}

// nonNilBytes keeps the NOT NULL column satisfied for an empty body.
func nonNilBytes(b []byte) []byte {
	if b == nil {
		return []byte{}
	}
	return b
}
