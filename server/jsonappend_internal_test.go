package server

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"
)

func TestAppendJSONStringIsEncodingJSON(t *testing.T) {
	for _, s := range append(oddStrings, strings.Repeat("x", 300), "a&b", "ok-._~:/?=") {
		want, _ := json.Marshal(s)
		if got := appendJSONString([]byte("prefix"), s); !bytes.Equal(got, append([]byte("prefix"), want...)) {
			t.Errorf("%q: got %s, want %s", s, got[6:], want)
		}
	}
}

func TestTokenResponseJSONIsEncodingJSON(t *testing.T) {
	for _, r := range []tokenResponse{
		{AccessToken: "eyJ.a.b", TokenType: "Bearer", ExpiresIn: 86400, Scope: "mcp"},
		{AccessToken: "eyJ.a.b", TokenType: "Bearer", ExpiresIn: 0, Scope: "mcp offline_access", RefreshToken: "r_x"},
		{AccessToken: `"<&>"`, TokenType: "ü", ExpiresIn: -1, Scope: "", RefreshToken: "\n"},
		{},
	} {
		var want bytes.Buffer
		if err := json.NewEncoder(&want).Encode(r); err != nil {
			t.Fatal(err)
		}
		if got := r.appendJSON(nil); !bytes.Equal(got, want.Bytes()) {
			t.Errorf("got  %s\nwant %s", got, want.Bytes())
		}
	}
}

func TestPingResponseJSONIsEncodingJSON(t *testing.T) {
	for _, r := range []pingResponse{
		{Status: "ok", UserID: "u_abc"},
		{Status: "ok", UserID: "u_abc", Name: "Mona Lisa"},
		{Status: "ok", UserID: "u_<x>", Name: "Zoë \"Z\" & co\n"},
		{},
	} {
		var want bytes.Buffer
		if err := json.NewEncoder(&want).Encode(r); err != nil {
			t.Fatal(err)
		}
		if got := r.appendJSON(nil); !bytes.Equal(got, want.Bytes()) {
			t.Errorf("got  %s\nwant %s", got, want.Bytes())
		}
	}
}
