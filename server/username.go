package server

import "context"

// userName is the display name the identity provider gave for a user, or ""
// when there is none or the lookup fails: the name is an extension for
// display (GET /api/ping and the whoami tool), never a reason to fail.
func (s *Server) userName(ctx context.Context, userID string) string {
	if userID == "" {
		return ""
	}
	u, err := s.store.GetUser(ctx, userID)
	if err != nil {
		return ""
	}
	return u.Name
}
