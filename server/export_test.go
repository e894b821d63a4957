package server

import "context"

// IssueTokenForTest signs an access token for userID, for benchmarks and
// tests in package server_test that need one without running a flow.
func (s *Server) IssueTokenForTest(userID string) (string, error) {
	t, err := s.tokens.Issue(userID)
	return t.Raw, err
}

// LegacySealForTest seals key as versions before separate sealing keys did:
// under a key derived from the JWT signing key.
func LegacySealForTest(signingKey []byte, key, userID string) ([]byte, error) {
	s, err := newSealer(deriveKey(signingKey, "api key seal"))
	if err != nil {
		return nil, err
	}
	return s.seal(key, userID)
}

// IssueWithKeyForTest signs a token for userID as this server would with
// key: a token from before a key rotation.
func (s *Server) IssueWithKeyForTest(key []byte, userID string) (string, error) {
	t, err := newTokenService(key, s.baseURL, s.resource, s.clock, s.store).Issue(userID)
	return t.Raw, err
}

// APIKeyForTest gives userID a fresh API key.
func (s *Server) APIKeyForTest(userID string) (string, error) {
	return s.regenerateAPIKey(context.Background(), userID)
}
