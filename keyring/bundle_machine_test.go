package keyring

import (
	"fmt"
	"strings"
	"testing"
)

// A machine login's secrets never show when a bundle is printed.
func TestMachineBundleStringRedacts(t *testing.T) {
	b := TokenBundle{AccessToken: "at", DPoPKey: "DPOPKEY", Client: &ClientInfo{ClientID: "c", ClientSecret: "CSECRET"},
		Grant: &GrantInfo{Type: GrantEnterprise, IdPClient: &ClientInfo{ClientID: "i", ClientSecret: "ISECRET"}}}
	for _, s := range []string{b.String(), fmt.Sprintf("%v %+v %#v", b, b, b)} {
		for _, secret := range []string{"DPOPKEY", "CSECRET", "ISECRET"} {
			if strings.Contains(s, secret) {
				t.Errorf("%s shows %s", s, secret)
			}
		}
	}
}
