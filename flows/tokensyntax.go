package flows

import (
	"errors"
	"fmt"
	"strings"
)

// ErrTokenSyntax: a token response carried a token that is not an RFC 6750
// §2.1 b64token (DPoP's token68, RFC 9449 §7.1, is the same syntax).
var ErrTokenSyntax = errors.New("token outside the b64token characters of RFC 6750 §2.1")

// checkTokenSyntax refuses a token (access or refresh; "" is absent) that
// could not travel as `Authorization: Bearer <token>`: 1*(ALPHA / DIGIT /
// "-" / "." / "_" / "~" / "+" / "/") *"=". Anything else, a CR LF above
// all, would become extra header lines wherever the token is written as a
// header (token --header, curl -H @file). The token itself is never
// quoted in the error.
func checkTokenSyntax(tok string) error {
	body := strings.TrimRight(tok, "=")
	if body == "" && tok != "" {
		return fmt.Errorf("it is only padding: %w", ErrTokenSyntax)
	}
	for i := 0; i < len(body); i++ {
		c := body[i]
		if 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || strings.IndexByte("-._~+/", c) >= 0 {
			continue
		}
		return fmt.Errorf("byte %d of %d is %s: refused: %w", i+1, len(tok), describeByte(c), ErrTokenSyntax)
	}
	return nil
}

// describeByte names a byte a token may not hold without showing the
// token: a control character or space by name, any other by its code.
func describeByte(c byte) string {
	switch {
	case c == '\r':
		return "a carriage return (CR)"
	case c == '\n':
		return "a line feed (LF)"
	case c < 0x20 || c == 0x7f:
		return fmt.Sprintf("the control character 0x%02X", c)
	case c == ' ':
		return "a space"
	case c >= 0x80:
		return "a non-ASCII byte"
	}
	return fmt.Sprintf("%q", c)
}
