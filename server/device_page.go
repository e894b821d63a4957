package server

import (
	"errors"
	"net/http"
	"strconv"

	"github.com/mcpauth/mcpauth/server/pages"
	"github.com/mcpauth/mcpauth/server/store"
)

// handleDevicePage is GET /auth/device: the verification URI (RFC 8628 §3.3).
func (s *Server) handleDevicePage(w http.ResponseWriter, r *http.Request) {
	c := s.requireSession(w, r)
	if c == nil {
		return
	}
	code := r.URL.Query().Get("user_code")
	if canonical := normalizeUserCode(code); canonical != "" {
		code = canonical
	}
	s.render(w, r, http.StatusOK, pages.DeviceEnter, deviceEnterPage{pageBase: s.base(c), CSRF: s.csrfToken(c), UserCode: truncate(code, 20)})
}

// handleDeviceSubmit is POST /auth/device: look a code up (action=lookup),
// then approve or deny it.
func (s *Server) handleDeviceSubmit(w http.ResponseWriter, r *http.Request) {
	c, form := s.sessionForm(w, r, "Your session ended. Sign in and enter the code again.", reloadForm)
	if c == nil {
		return
	}
	// Guessing is limited per session and per client address, behind a
	// trusted proxy the address it forwarded for (decisions.md): every
	// attempt is paid for before the lookup, atomically, and refunded
	// unless the code was wrong. A wrong code matches no flow, so there is
	// no device code to charge it to.
	ok, wait, refund := s.limits.wrongUserCode.Charge("ip:"+s.limits.caller(clientAddr(r)), "session:"+c.ID)
	if !ok {
		w.Header().Set("Retry-After", strconv.Itoa(retryAfterSeconds(wait)))
		s.renderError(w, r, http.StatusTooManyRequests, "Too many attempts", "Too many wrong codes. Wait a few minutes and try again.", errRateLimited)
		return
	}
	isWrong := false
	defer func() {
		if !isWrong {
			refund()
		}
	}()
	entered := form.Get("user_code")
	canonical := normalizeUserCode(entered)
	wrong := func() {
		isWrong = true
		s.render(w, r, http.StatusBadRequest, pages.DeviceEnter, deviceEnterPage{
			pageBase: s.base(c), CSRF: s.csrfToken(c), UserCode: truncate(entered, 20),
			Error: "That code is not valid or has expired. Check the code on your device.",
		})
	}
	if canonical == "" {
		wrong()
		return
	}
	now := s.clock.Now()
	d, err := s.store.GetDeviceCodeByUserCode(r.Context(), s.userCodeHash(canonical))
	if isNotFound(err) || err == nil && (d.Status != store.DevicePending || !now.Before(d.ExpiresAt)) {
		wrong()
		return
	}
	if err != nil {
		s.renderFailure(w, r, "looking up user code", err, "Try again.")
		return
	}
	action := form.Get("action")
	if action != "approve" && action != "deny" {
		s.render(w, r, http.StatusOK, pages.DeviceConfirm, deviceConfirmPage{
			pageBase: s.base(c), clientView: s.deviceClientView(r, d.ClientID), CSRF: s.csrfToken(c), UserCode: canonical,
			Access: accessText(d.Scope),
		})
		return
	}
	errNotPending := errors.New("device code no longer pending")
	_, err = s.store.UpdateDeviceCode(r.Context(), d.Hash, func(d store.DeviceCode) (store.DeviceCode, error) {
		if d.Status != store.DevicePending || !now.Before(d.ExpiresAt) {
			return d, errNotPending
		}
		if action == "approve" {
			d.Status, d.UserID = store.DeviceApproved, c.Subject
		} else {
			d.Status = store.DeviceDenied
		}
		return d, nil
	})
	if errors.Is(err, errNotPending) || isNotFound(err) {
		wrong()
		return
	}
	if err != nil {
		s.renderFailure(w, r, "deciding device code", err, "Try again.")
		return
	}
	s.log.Info("device code decided", "request_id", requestID(r.Context()), "user_id", c.Subject, "client_id", d.ClientID, "action", action)
	s.render(w, r, http.StatusOK, pages.DeviceDone, deviceDonePage{pageBase: s.base(c), Approved: action == "approve"})
}

// deviceClientView names the client of a device code; a client that is gone
// (or an unregistered one, with --allow-unregistered-device-clients) is
// shown by its id.
func (s *Server) deviceClientView(r *http.Request, clientID string) clientView {
	cl, err := s.client(r.Context(), clientID)
	if err != nil {
		name := truncate(clientID, 80)
		return clientView{ClientName: name, Claims: claimedIdentity(name, redirectHost(s.baseURL))}
	}
	return s.clientView(cl)
}
