package server

import (
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"math/big"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/mcpauth/mcpauth/server/store"
)

// deviceCodeResponse is RFC 8628 §3.2 with the contract's fields.
type deviceCodeResponse struct {
	DeviceCode              string `json:"device_code"`
	UserCode                string `json:"user_code"`
	VerificationURI         string `json:"verification_uri"`
	VerificationURIComplete string `json:"verification_uri_complete"`
	ExpiresIn               int64  `json:"expires_in"`
	Interval                int64  `json:"interval"`
}

// handleDeviceCode is POST /api/oauth/device/code (JSON, or a form for
// RFC 8628 clients).
func (s *Server) handleDeviceCode(w http.ResponseWriter, r *http.Request) {
	p, oerr := readParams(r, true)
	if oerr != nil {
		writeOAuthError(w, oerr)
		return
	}
	if oerr := s.checkDeviceClient(r.Context(), p["client_id"]); oerr != nil {
		writeOAuthError(w, oerr)
		return
	}
	scope, oerr := normalizeScope(p["scope"])
	if oerr != nil {
		writeOAuthError(w, oerr)
		return
	}
	now := s.clock.Now()
	for range 5 {
		deviceCode, err := randomToken(32)
		if err != nil {
			s.serverError(w, r, "generating device code", err)
			return
		}
		userCode, err := newUserCode()
		if err != nil {
			s.serverError(w, r, "generating user code", err)
			return
		}
		err = s.store.CreateDeviceCode(r.Context(), store.DeviceCode{
			Hash: hashSecret(deviceCode), UserCodeHash: s.userCodeHash(userCode),
			ClientID: p["client_id"], Scope: scope, Status: store.DevicePending,
			Interval: DeviceInterval, CreatedAt: now, ExpiresAt: now.Add(DeviceCodeLifetime),
		})
		if isAlreadyExists(err) {
			continue // a live user code collided: draw again
		}
		if err != nil {
			s.serverError(w, r, "storing device code", err)
			return
		}
		verify := s.baseURL + "/auth/device"
		writeJSON(w, http.StatusOK, deviceCodeResponse{
			DeviceCode: deviceCode, UserCode: userCode, VerificationURI: verify,
			VerificationURIComplete: verify + "?user_code=" + url.QueryEscape(userCode),
			ExpiresIn:               int64(DeviceCodeLifetime / time.Second), Interval: int64(DeviceInterval / time.Second),
		})
		return
	}
	s.serverError(w, r, "storing device code", errCollisions)
}

func (s *Server) checkDeviceClient(ctx context.Context, clientID string) *oauthError {
	if clientID == "" {
		return invalidRequest("client_id is required")
	}
	if len(clientID) > 200 {
		return invalidClient("unknown client")
	}
	if s.cfg.AllowUnregisteredDeviceClients {
		return nil
	}
	c, err := s.client(ctx, clientID)
	if isNotFound(err) {
		return invalidClient("unknown client")
	}
	var ue *cimdUnavailableError
	if errors.As(err, &ue) {
		return ue.oauthError()
	}
	if err != nil {
		return newError(http.StatusInternalServerError, errServerError, "internal error")
	}
	if !containsString(c.GrantTypes, grantDeviceCode) {
		return newError(http.StatusBadRequest, errUnauthorizedClient, "the client is not registered for the device_code grant")
	}
	return nil
}

// handleDeviceToken is POST /api/oauth/device/token (JSON, or a form).
func (s *Server) handleDeviceToken(w http.ResponseWriter, r *http.Request) {
	p, oerr := readParams(r, true)
	if oerr != nil {
		writeOAuthError(w, oerr)
		return
	}
	// Only the device grant is served here; the others are at /oauth/token.
	switch g := s.grants.lookup(p["grant_type"]); {
	case p["grant_type"] == "":
		writeOAuthError(w, invalidRequest("grant_type is required"))
	case g == nil || g.name != grantDeviceCode:
		writeOAuthError(w, newError(http.StatusBadRequest, errUnsupportedGrantType, "grant_type must be %s", grantDeviceCode))
	default:
		s.pollDeviceToken(w, r, p, g)
	}
}

// pollDeviceToken implements the device code state table of service.md with
// RFC 8628 §3.5's errors, as one compare-and-set on the record so that racing
// pollers (on any instance) see consistent transitions.
func (s *Server) pollDeviceToken(w http.ResponseWriter, r *http.Request, p map[string]string, g *grantType) {
	if p["device_code"] == "" {
		writeOAuthError(w, invalidRequest("device_code is required"))
		return
	}
	if p["client_id"] == "" {
		writeOAuthError(w, invalidRequest("client_id is required"))
		return
	}
	// An unknown client is invalid_client (401) before anything about the
	// code is revealed.
	if !s.cfg.AllowUnregisteredDeviceClients {
		if _, ok := s.knownClient(w, r, p["client_id"]); !ok {
			return
		}
	}
	now := s.clock.Now()
	var outcome *oauthError
	d, err := s.store.UpdateDeviceCode(r.Context(), hashSecret(p["device_code"]), func(d store.DeviceCode) (store.DeviceCode, error) {
		outcome = nil
		switch {
		case d.ClientID != p["client_id"]:
			return d, invalidGrant("device code was issued to another client")
		case d.Status == store.DeviceSpent:
			return d, invalidGrant("device code already used")
		case !now.Before(d.ExpiresAt):
			return d, newError(http.StatusBadRequest, errExpiredToken, "device code expired")
		case d.Status == store.DeviceDenied:
			d.Status = store.DeviceSpent
			outcome = newError(http.StatusBadRequest, errAccessDenied, "the user denied the request")
		case d.Status == store.DeviceApproved:
			d.Status = store.DeviceSpent
		case !d.LastPollAt.IsZero() && now.Sub(d.LastPollAt) < d.Interval:
			d.Interval += slowDownStep
			d.LastPollAt = now
			outcome = newError(http.StatusBadRequest, errSlowDown, "polling too fast; wait at least %d seconds between polls", int(d.Interval/time.Second))
		default:
			d.LastPollAt = now
			outcome = newError(http.StatusBadRequest, errAuthorizationPending, "the user has not approved yet")
		}
		return d, nil
	})
	var oe *oauthError
	switch {
	case errors.As(err, &oe):
		writeOAuthError(w, oe)
		return
	case isNotFound(err):
		writeOAuthError(w, invalidGrant("unknown device code"))
		return
	case err != nil:
		s.serverError(w, r, "polling device code", err)
		return
	case outcome != nil:
		writeOAuthError(w, outcome)
		return
	}
	// An unregistered device client (when allowed) gets no refresh token.
	// The device code is spent: a metadata document not fetched for a limit
	// counts as an unknown client, so the token is still issued (without a
	// refresh token) rather than lost.
	client, err := s.client(r.Context(), d.ClientID)
	var ue *cimdUnavailableError
	if err != nil && !isNotFound(err) && !errors.As(err, &ue) {
		s.serverError(w, r, "looking up client", err)
		return
	}
	s.issue(w, r, g, &issuance{userID: d.UserID, clientID: d.ClientID, client: client, scope: d.Scope})
}

// User codes: 4 letters, hyphen, 4 digits (service.md), letters from an
// alphabet without vowels or look-alikes (no I, O, U, A, E; decisions.md).
const userCodeLetters = "BCDFGHJKLMNPQRSTVWXZ"

func newUserCode() (string, error) {
	var b strings.Builder
	for i := range 8 {
		if i == 4 {
			b.WriteByte('-')
		}
		alphabet := userCodeLetters
		if i >= 4 {
			alphabet = "0123456789"
		}
		n, err := rand.Int(rand.Reader, big.NewInt(int64(len(alphabet))))
		if err != nil {
			return "", fmt.Errorf("reading random bytes: %w", err)
		}
		b.WriteByte(alphabet[n.Int64()])
	}
	return b.String(), nil
}

// normalizeUserCode accepts any case, with or without the hyphen and spaces,
// and returns the canonical ABCD-1234 form, or "" if it cannot be a code.
func normalizeUserCode(in string) string {
	if len(in) > 32 {
		return ""
	}
	var b []byte
	for _, r := range in {
		switch {
		case r == '-' || r == ' ' || r == '\t':
			continue
		case r >= 'a' && r <= 'z':
			b = append(b, byte(r-'a'+'A'))
		case r >= 'A' && r <= 'Z', r >= '0' && r <= '9':
			b = append(b, byte(r))
		default:
			return ""
		}
	}
	if len(b) != 8 {
		return ""
	}
	for i, c := range b {
		if i < 4 && !strings.ContainsRune(userCodeLetters, rune(c)) || i >= 4 && (c < '0' || c > '9') {
			return ""
		}
	}
	return string(b[:4]) + "-" + string(b[4:])
}

func (s *Server) userCodeHash(canonical string) string { return keyedHash(s.userCodeK, canonical) }
