package server

// IssueTokenForTest signs an access token for userID, for benchmarks and
// tests in package server_test that need one without running a flow.
func (s *Server) IssueTokenForTest(userID string) (string, error) {
	t, err := s.tokens.Issue(userID)
	return t.Raw, err
}
