package server

import (
	"bytes"
	"encoding/json"
	"testing"
)

// Error bodies written by hand are what encoding/json writes.
func TestOAuthErrorBodyAsJSONWritesIt(t *testing.T) {
	for _, e := range []*oauthError{
		newError(400, errAuthorizationPending, "the user has not approved yet"),
		newError(400, errSlowDown, "polling too fast; wait at least %d seconds between polls", 10),
		invalidRequest("parameter %q is repeated", "a<b>&c"),
		invalidRequest("quote \" backslash \\ control \x01 non-ASCII é"),
		{Code: errInvalidToken, Status: 401},
		{Code: "odd<code>", Description: "", Status: 400},
	} {
		var want bytes.Buffer
		_ = json.NewEncoder(&want).Encode(struct {
			Error       string `json:"error"`
			Description string `json:"error_description,omitempty"`
		}{e.Code, e.Description})
		if got := oauthErrorBody(e); string(got) != want.String() {
			t.Errorf("%+v:\n got %s\nwant %s", e, got, want.Bytes())
		}
	}
}
