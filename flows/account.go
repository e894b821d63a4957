package flows

import (
	"encoding/base64"
	"encoding/json"
	"strings"
)

// accountFromJWT reads who a JWT access token is for, for display only:
// the signature is not checked (the token came straight from the token
// endpoint), and the first of preferred_username, email, name and sub wins.
// "" when the token is not a JWT.
func accountFromJWT(token string) string {
	parts := strings.Split(token, ".")
	if len(parts) != 3 || len(parts[1]) > 8192 {
		return ""
	}
	raw, err := base64.RawURLEncoding.DecodeString(parts[1])
	if err != nil {
		return ""
	}
	var c struct {
		PreferredUsername string `json:"preferred_username"`
		Email             string `json:"email"`
		Name              string `json:"name"`
		Sub               string `json:"sub"`
	}
	if json.Unmarshal(raw, &c) != nil {
		return ""
	}
	for _, v := range []string{c.PreferredUsername, c.Email, c.Name, c.Sub} {
		if v != "" {
			return v
		}
	}
	return ""
}
