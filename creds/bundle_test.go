package creds

import (
	"fmt"
	"strings"
	"testing"

	"github.com/mcpauth/mcpauth/keyring"
)

// A machine login's secrets never show when a bundle is printed.
func TestMachineBundleStringRedacts(t *testing.T) {
	b := Bundle{AccessToken: "at", DPoPKey: "DPOPKEY", Client: &ClientInfo{ClientID: "c", ClientSecret: "CSECRET"},
		Grant: &GrantInfo{Type: GrantEnterprise, IdPClient: &ClientInfo{ClientID: "i", ClientSecret: "ISECRET"}}}
	for _, s := range []string{b.String(), fmt.Sprintf("%v %+v %#v", b, b, b)} {
		for _, secret := range []string{"DPOPKEY", "CSECRET", "ISECRET"} {
			if strings.Contains(s, secret) {
				t.Errorf("%s shows %s", s, secret)
			}
		}
	}
}

// Secrets reach no formatted output, whichever verb prints the bundle.
func TestBundleStringRedacts(t *testing.T) {
	b := Bundle{Issuer: "https://as.example", AccessToken: "SECRET-AT", RefreshToken: "SECRET-RT", APIKey: "SECRET-KEY",
		Client: &ClientInfo{ClientID: "c", ClientSecret: "SECRET-CS"}}
	for _, out := range []string{fmt.Sprint(b), fmt.Sprintf("%+v", b), fmt.Sprintf("%#v", b), fmt.Sprintf("%v", &b), fmt.Sprint(*b.Client)} {
		if strings.Contains(out, "SECRET") {
			t.Errorf("formatted bundle leaks a secret: %s", out)
		}
	}
}

// Save refuses a bundle that holds no credential of its kind, before
// anything is written.
func TestSaveRefusesEmptyBundles(t *testing.T) {
	st, err := keyring.Open(keyring.Config{Dir: t.TempDir(), Storage: keyring.StorageFile})
	if err != nil {
		t.Fatal(err)
	}
	for name, b := range map[string]Bundle{
		"oauth without tokens":     {Issuer: "x"},
		"api key kind without key": {Kind: KindAPIKey},
		"unknown kind":             {Kind: "password", AccessToken: "x"},
	} {
		if err := Save(st, "https://a.example/mcp", "", b); err == nil {
			t.Errorf("%s: saved", name)
		}
	}
	if list, _ := List(st); len(list) != 0 {
		t.Fatalf("refused saves left entries: %+v", list)
	}
	if err := Save(st, "https://a.example/mcp", "", Bundle{RefreshToken: "rt"}); err != nil {
		t.Fatal(err)
	}
	if list, _ := List(st); len(list) != 1 || list[0].Kind != KindOAuth {
		t.Fatalf("a bundle without kind is saved as oauth: %+v", list)
	}
}

// A server's name for the user, however long, is stored cut to what the
// CLI shows of one value: the entry metadata has a size limit, and a
// login must not fail for a name.
func TestSaveCutsLongUserText(t *testing.T) {
	st, err := keyring.Open(keyring.Config{Dir: t.TempDir(), Storage: keyring.StorageFile})
	if err != nil {
		t.Fatal(err)
	}
	long := strings.Repeat("ñ", 5000)
	if err := Save(st, "https://a.example/mcp", "", Bundle{AccessToken: "at", UserID: long, UserName: "mona"}); err != nil {
		t.Fatal(err)
	}
	list, _ := List(st)
	want := strings.Repeat("ñ", maxUserText-1) + "…"
	if len(list) != 1 || list[0].UserID != want || list[0].UserName != "mona" {
		t.Fatalf("stored %+v", list)
	}
}
