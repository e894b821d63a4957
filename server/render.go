package server

import (
	"context"
	"net/http"

	"github.com/mcpauth/mcpauth/server/pages"
)

// pageBase is embedded in every page's data: the layout shows who is signed in.
type pageBase struct {
	User string
}

type hiddenField struct{ Name, Value string }

type consentPage struct {
	pageBase
	ClientName, RedirectHost, Scope, CSRF string
	// ClientHost is set for a metadata document client: the document's
	// host, shown as its identity, with ClientName labelled self-declared.
	ClientHost string
	Hidden     []hiddenField
}

type deviceEnterPage struct {
	pageBase
	CSRF, UserCode, Error string
}

type deviceConfirmPage struct {
	pageBase
	CSRF, UserCode, ClientName string
}

type deviceDonePage struct {
	pageBase
	Approved bool
}

type settingsPage struct {
	pageBase
	UserID, APIKey, CSRF string
	Regenerated          bool
	// KeyUnreadable: the stored key cannot be opened after a key rotation.
	KeyUnreadable bool
}

type logoutPage struct {
	pageBase
	CSRF string
	Done bool
}

type errorPage struct {
	pageBase
	Title, Message, Code string
	// Link, when set, is where the person can try again (a local path).
	Link, LinkText string
}

type homePage struct {
	pageBase
	Resource string
}

func (s *Server) base(c *accessClaims) pageBase {
	if c == nil {
		return pageBase{}
	}
	return pageBase{User: s.displayName(context.Background(), c.Subject)}
}

func (s *Server) displayName(ctx context.Context, userID string) string {
	if u, err := s.store.GetUser(ctx, userID); err == nil && u.Name != "" {
		return u.Name
	}
	return userID
}

func (s *Server) render(w http.ResponseWriter, r *http.Request, status int, name string, data any) {
	if err := s.pages.Render(w, status, name, data); err != nil {
		s.logError(r, "rendering page", err)
		http.Error(w, "internal error", http.StatusInternalServerError)
	}
}

// renderError is the HTML error page of the browser endpoints.
func (s *Server) renderError(w http.ResponseWriter, r *http.Request, status int, title, msg, code string) {
	s.render(w, r, status, pages.Error, errorPage{pageBase: s.base(s.session(r)), Title: title, Message: msg, Code: code})
}

func (s *Server) handleHome(w http.ResponseWriter, r *http.Request) {
	s.render(w, r, http.StatusOK, pages.Home, homePage{pageBase: s.base(s.session(r)), Resource: s.resource})
}
