package memory

import (
	"context"

	"github.com/mcpauth/mcpauth/server/store"
)

// PutMetadataDocument implements store.Store.PutMetadataDocument.
func (s *Store) PutMetadataDocument(_ context.Context, d store.MetadataDocument) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.metadocs == nil {
		s.metadocs = map[string]store.MetadataDocument{}
	}
	d.Body = cloneBytes(d.Body)
	s.metadocs[d.URL] = d
	return nil
}

// GetMetadataDocument implements store.Store.GetMetadataDocument.
func (s *Store) GetMetadataDocument(_ context.Context, url string) (store.MetadataDocument, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	d, err := find(s.metadocs, url, "get metadata document")
	d.Body = cloneBytes(d.Body)
	return d, err
}
