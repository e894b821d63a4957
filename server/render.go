package server

import (
	"context"
	"net"
	"net/http"
	"strings"

	"github.com/mcpauth/mcpauth/server/pages"
	"github.com/mcpauth/mcpauth/server/store"
)

// pageBase is embedded in every page's data: the layout shows who is signed
// in; ServerName (the host of the base URL) is what the consent and device
// pages name as the server being given access to.
type pageBase struct {
	User       string
	ServerName string
}

type hiddenField struct{ Name, Value string }

// clientView is how the consent and device pages name a client: first what
// the server checked (the host serving a metadata document; on consent, the
// redirect host), then the name the client chose for itself, always labelled
// self-declared, since anyone can register or publish any name.
type clientView struct {
	// ClientName is the self-declared client_name; may be empty.
	ClientName string
	// ClientHost is set for a metadata document client: the document's
	// host, the one verified thing about it.
	ClientHost string
	// Claims is whose identity the self-chosen name claims (this server's
	// host or a known brand), which the page warns about; "" for our own
	// CLI and for names that claim no one, which are stated plainly.
	Claims string
	// Returns is where a consent's redirect goes, for the plain statement.
	Returns string
}

type consentPage struct {
	pageBase
	clientView
	RedirectHost, CSRF string
	// LoopbackRedirect: the redirect URI is on this computer (a CLI or
	// desktop app).
	LoopbackRedirect bool
	Access           []string
	Hidden           []hiddenField
}

type deviceEnterPage struct {
	pageBase
	CSRF, UserCode, Error string
}

type deviceConfirmPage struct {
	pageBase
	clientView
	CSRF, UserCode string
	Access         []string
}

type deviceDonePage struct {
	pageBase
	Approved bool
}

type settingsPage struct {
	pageBase
	UserID, APIKey, CSRF string
	// Resource is the MCP URL to name in the apikey set command.
	Resource    string
	Regenerated bool
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
	// Link, when set, is where the person can try again (a local path);
	// the link home is always there.
	Link, LinkText string
	// Steps are what the person can do next; RequestID lets the server's
	// operator find the request in the log.
	Steps     []string
	RequestID string
}

type homePage struct {
	pageBase
	Resource string
}

func (s *Server) base(c *accessClaims) pageBase {
	b := pageBase{ServerName: redirectHost(s.baseURL)}
	if c != nil {
		b.User = s.displayName(context.Background(), c.Subject)
	}
	return b
}

// serverBrand is the product name in every page's header: a client calling
// itself this, other than our own CLI, is pointed out on consent.
const serverBrand = "mcpauth"

func (s *Server) clientView(c store.Client) clientView {
	v := clientView{ClientName: c.Name}
	if isMetadataDocumentID(c.ID) {
		v.ClientHost = redirectHost(c.ID)
	}
	if !firstParty(c) {
		v.Claims = claimedIdentity(c.Name, redirectHost(s.baseURL))
	}
	return v
}

// accessText says in words what a scope lets the client do.
func accessText(scope string) []string {
	out := []string{"Use the MCP server as you (" + scopeMCP + ")"}
	for tok := range strings.SplitSeq(scope, " ") {
		if tok == scopeOfflineAccess {
			out = append(out, "Stay signed in after you leave, until you revoke it or for at most 30 days ("+scopeOfflineAccess+")")
		}
	}
	return out
}

func hostOnly(hostport string) string {
	if h, _, err := net.SplitHostPort(hostport); err == nil {
		return h
	}
	return hostport
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

// errorPage is what every error page carries: the title and message, the
// error code, the request id the operator can look up, and (in the
// template) a link home.
func (s *Server) errorPage(r *http.Request, title, msg, code string) errorPage {
	return errorPage{pageBase: s.base(s.session(r)), Title: title, Message: msg, Code: code, RequestID: requestID(r.Context())}
}

// renderError is the HTML error page of the browser endpoints.
func (s *Server) renderError(w http.ResponseWriter, r *http.Request, status int, title, msg, code string) {
	s.render(w, r, status, pages.Error, s.errorPage(r, title, msg, code))
}

// renderFailure logs err (while doing what) and shows the 500 page with
// advice; the error itself stays in the log.
func (s *Server) renderFailure(w http.ResponseWriter, r *http.Request, what string, err error, advice string) {
	s.logError(r, what, err)
	s.renderError(w, r, http.StatusInternalServerError, "Something went wrong", advice, "")
}

func (s *Server) handleHome(w http.ResponseWriter, r *http.Request) {
	s.render(w, r, http.StatusOK, pages.Home, homePage{pageBase: s.base(s.session(r)), Resource: s.resource})
}
