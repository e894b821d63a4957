package server

import (
	"encoding/json"
	"fmt"
	"net/http"
	"time"

	"github.com/mcpauth/mcpauth/server/store"
)

// MaxRefreshReuseInterval bounds Config.RefreshReuseInterval: for that
// long a spent refresh token is worth its family's live pair, to a thief
// as much as to the client (RFC 9700 §4.14.2), and clients racing one
// another need seconds, not minutes.
const MaxRefreshReuseInterval = time.Minute

// successorPair is the pair a rotation issued, kept sealed in the store
// so that a reuse of the spent token within the interval gets it again,
// on any instance.
type successorPair struct {
	AccessToken  string `json:"access_token"`
	ExpiresAt    int64  `json:"exp"` // the access token's, Unix seconds
	Scope        string `json:"scope"`
	RefreshToken string `json:"refresh_token"`
}

// successorSealer seals the pair a rotation of presented issued under a
// key derived from presented itself. The store knows presented only by its
// SHA-256, so whoever reads the database cannot open the pair; only the
// holder of the spent token can have it, and only from the server.
func successorSealer(presented string) (*sealer, error) {
	return newSealer(deriveKey([]byte(presented), "refresh successor"))
}

// sealSuccessor seals resp, issued for the rotation of presented (stored
// as hash, which binds the seal to that token's record).
func sealSuccessor(presented, hash string, resp tokenResponse, exp time.Time) ([]byte, error) {
	plain, err := json.Marshal(successorPair{AccessToken: resp.AccessToken, ExpiresAt: exp.Unix(), Scope: resp.Scope, RefreshToken: resp.RefreshToken})
	if err != nil {
		return nil, fmt.Errorf("encoding the new pair: %w", err)
	}
	sl, err := successorSealer(presented)
	if err != nil {
		return nil, err
	}
	return sl.seal(string(plain), hash)
}

func openSuccessor(presented, hash string, sealed []byte) (successorPair, error) {
	var p successorPair
	sl, err := successorSealer(presented)
	if err != nil {
		return p, err
	}
	plain, err := sl.open(sealed, hash)
	if err != nil {
		return p, err
	}
	if err := json.Unmarshal([]byte(plain), &p); err != nil {
		return p, fmt.Errorf("decoding the kept pair: %w", err)
	}
	return p, nil
}

// keepSuccessor returns what a rotation of presented keeps for a reuse:
// nothing without a reuse interval.
func (s *Server) keepSuccessor(presented, hash string, resp tokenResponse, exp time.Time) ([]byte, error) {
	if s.cfg.RefreshReuseInterval <= 0 {
		return nil, nil
	}
	return sealSuccessor(presented, hash, resp, exp)
}

// spentRefresh answers a spent refresh token. Presented again within the
// reuse interval of its rotation, while that rotation is its family's
// latest, it gets the pair the rotation issued: clients that refresh at
// once without a lock between them all end up with one working pair.
// Otherwise it may have been stolen, and its family is revoked. A reuse is
// refused, as a refresh would be, when ask fails the refresh's checks (a
// scope beyond the grant's, another resource), and when the kept pair's
// scope is wider than the scope ask names.
func (s *Server) spentRefresh(w http.ResponseWriter, r *http.Request, rt store.RefreshToken, presented string, ask refreshAsk) {
	now := s.clock.Now()
	if s.cfg.RefreshReuseInterval <= 0 || rt.Revoked || rt.Successor == nil ||
		now.Sub(rt.UsedAt) >= s.cfg.RefreshReuseInterval || !now.Before(rt.ExpiresAt) {
		s.replayedRefresh(w, r, rt)
		return
	}
	if ask.refused != nil {
		writeOAuthError(w, ask.refused)
		return
	}
	pair, err := openSuccessor(presented, rt.Hash, rt.Successor)
	if err != nil { // not what this server kept: treat it as a replay
		s.log.Error("opening the pair kept for a refresh reuse", "request_id", requestID(r.Context()), "err", err)
		s.replayedRefresh(w, r, rt)
		return
	}
	if ask.scope != "" {
		if _, oerr := narrowScope(ask.scope, pair.Scope); oerr != nil {
			writeOAuthError(w, newError(http.StatusBadRequest, errInvalidScope,
				"a reuse within the refresh reuse interval gets the pair its rotation issued, with scope %q", pair.Scope))
			return
		}
	}
	s.log.Info("refresh token presented again within the reuse interval: answered with the pair its rotation issued",
		"request_id", requestID(r.Context()), "client_id", rt.ClientID, "user_id", rt.UserID)
	writeTokenResponse(w, tokenResponse{
		AccessToken: pair.AccessToken, TokenType: "Bearer", ExpiresIn: pair.ExpiresAt - now.Unix(),
		Scope: pair.Scope, RefreshToken: pair.RefreshToken,
	})
}
