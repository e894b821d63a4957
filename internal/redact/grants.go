package redact

import "net/url"

// grantNames are the parameters of a redirect whose values are a grant.
var grantNames = []string{"code", "access_token", "id_token", "refresh_token"}

// ElideGrants is u for a message, with the values of what it grants (a
// code or token in its query or fragment) elided; every other parameter
// stays, since it can be what the message is about.
func ElideGrants(u *url.URL) string {
	c := *u
	for _, part := range []*string{&c.RawQuery, &c.Fragment} {
		q, err := url.ParseQuery(*part)
		if err != nil {
			continue
		}
		for _, k := range grantNames {
			if q.Has(k) {
				q.Set(k, "…")
			}
		}
		*part = q.Encode()
	}
	return c.String()
}
