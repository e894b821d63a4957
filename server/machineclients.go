package server

import (
	"bytes"
	"crypto"
	"crypto/ecdsa"
	"crypto/ed25519"
	"crypto/rsa"
	"crypto/x509"
	"encoding/hex"
	"encoding/json"
	"encoding/pem"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
)

// MachineClient is a confidential client an operator registered for the
// client credentials grant (RFC 6749 §4.4): it authenticates with a secret
// (client_secret_basic or client_secret_post) or with a key
// (private_key_jwt, RFC 7523 §2.2), never both.
type MachineClient struct {
	ID string
	// SecretHash is the SHA-256 of the client secret; nil for a key client.
	// The secret itself is never kept.
	SecretHash []byte
	// PublicKey verifies the client's assertions (RSA, ECDSA or Ed25519);
	// nil for a secret client.
	PublicKey crypto.PublicKey
}

// minMachineSecretLen: secrets are compared as unsalted SHA-256 hashes,
// which is sound only for secrets too long to guess (32 characters of
// openssl rand -hex 16 or more).
const minMachineSecretLen = 32

// validMachineClientID: a name an operator picks, never one a user could
// hold (user ids start with u_, and a machine token's sub is its client
// id) nor a metadata document URL: 1-64 of [A-Za-z0-9._-], starting with a
// letter or digit.
func validMachineClientID(id string) bool {
	if id == "" || len(id) > 64 || strings.HasPrefix(id, "u_") || id[0] == '.' || id[0] == '_' || id[0] == '-' {
		return false
	}
	for _, c := range []byte(id) {
		ok := c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '.' || c == '_' || c == '-'
		if !ok {
			return false
		}
	}
	return true
}

// machineClientEntry is one entry of the --machine-clients file.
type machineClientEntry struct {
	ClientID           string `json:"client_id"`
	ClientSecretFile   string `json:"client_secret_file"`
	ClientSecretSHA256 string `json:"client_secret_sha256"`
	PublicKeyFile      string `json:"public_key_file"`
}

// LoadMachineClients reads the JSON file of operator-registered machine
// clients: an array of {client_id, and one of client_secret_file,
// client_secret_sha256 (hex) or public_key_file (PEM)}. Relative file
// names are relative to the file's directory. Errors name files and
// clients, never a secret.
func LoadMachineClients(path string) ([]MachineClient, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("machine clients: %w", err)
	}
	var entries []machineClientEntry
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&entries); err != nil {
		return nil, fmt.Errorf("machine clients %s: want a JSON array of {client_id, client_secret_file | client_secret_sha256 | public_key_file}: %w", path, err)
	}
	dir := filepath.Dir(path)
	out := make([]MachineClient, 0, len(entries))
	for i, e := range entries {
		c, err := e.client(dir)
		if err != nil {
			return nil, fmt.Errorf("machine clients %s, entry %d: %w", path, i+1, err)
		}
		out = append(out, c)
	}
	if err := checkMachineClients(out); err != nil {
		return nil, fmt.Errorf("machine clients %s: %w", path, err)
	}
	return out, nil
}

func (e machineClientEntry) client(dir string) (MachineClient, error) {
	c := MachineClient{ID: e.ClientID}
	given := 0
	for _, v := range []string{e.ClientSecretFile, e.ClientSecretSHA256, e.PublicKeyFile} {
		if v != "" {
			given++
		}
	}
	if given != 1 {
		return c, errors.New("give exactly one of client_secret_file, client_secret_sha256 and public_key_file")
	}
	rel := func(p string) string {
		if filepath.IsAbs(p) {
			return p
		}
		return filepath.Join(dir, p)
	}
	switch {
	case e.ClientSecretFile != "":
		b, err := os.ReadFile(rel(e.ClientSecretFile))
		if err != nil {
			return c, fmt.Errorf("client secret: %w", err)
		}
		secret := strings.TrimRight(string(b), "\r\n")
		if len(secret) < minMachineSecretLen {
			return c, fmt.Errorf("client secret %s: at least %d characters are required (openssl rand -hex 32)", e.ClientSecretFile, minMachineSecretLen)
		}
		sum := sum256(secret)
		c.SecretHash = sum[:]
	case e.ClientSecretSHA256 != "":
		h, err := hex.DecodeString(e.ClientSecretSHA256)
		if err != nil || len(h) != 32 {
			return c, errors.New("client_secret_sha256 must be 64 hex digits (sha256sum of the secret)")
		}
		c.SecretHash = h
	default:
		b, err := os.ReadFile(rel(e.PublicKeyFile))
		if err != nil {
			return c, fmt.Errorf("public key: %w", err)
		}
		if c.PublicKey, err = parsePublicKey(b); err != nil {
			return c, fmt.Errorf("public key %s: %w", e.PublicKeyFile, err)
		}
	}
	return c, nil
}

// parsePublicKey reads a PEM PUBLIC KEY (PKIX), as openssl pkey -pubout
// writes it.
func parsePublicKey(pemBytes []byte) (crypto.PublicKey, error) {
	blk, _ := pem.Decode(pemBytes)
	if blk == nil || blk.Type != "PUBLIC KEY" {
		return nil, errors.New(`no PEM "PUBLIC KEY" block (openssl pkey -in KEY -pubout)`)
	}
	k, err := x509.ParsePKIXPublicKey(blk.Bytes)
	if err != nil {
		return nil, err
	}
	if _, err := assertionAlgs(k); err != nil {
		return nil, err
	}
	return k, nil
}

// assertionSigningAlgs are every algorithm assertionAlgs may allow, for
// token_endpoint_auth_signing_alg_values_supported.
var assertionSigningAlgs = []string{"RS256", "RS384", "RS512", "PS256", "PS384", "PS512", "ES256", "ES384", "ES512", "EdDSA"}

// assertionAlgs are the JWS algorithms a client's key may sign its
// assertions with: never HMAC, never none, never another key type's.
func assertionAlgs(k crypto.PublicKey) ([]string, error) {
	switch k := k.(type) {
	case *rsa.PublicKey:
		if k.N.BitLen() < 2048 {
			return nil, fmt.Errorf("RSA keys need at least 2048 bits, this one has %d", k.N.BitLen())
		}
		return []string{"RS256", "RS384", "RS512", "PS256", "PS384", "PS512"}, nil
	case *ecdsa.PublicKey:
		switch k.Curve.Params().BitSize {
		case 256:
			return []string{"ES256"}, nil
		case 384:
			return []string{"ES384"}, nil
		case 521:
			return []string{"ES512"}, nil
		}
	case ed25519.PublicKey:
		return []string{"EdDSA"}, nil
	}
	return nil, fmt.Errorf("keys of type %T are not supported (RSA, EC P-256/384/521 or Ed25519)", k)
}

// checkMachineClients refuses bad ids, repeated ids and incomplete entries
// (Config.MachineClients may be built without LoadMachineClients).
func checkMachineClients(cs []MachineClient) error {
	seen := map[string]bool{}
	for _, c := range cs {
		switch {
		case !validMachineClientID(c.ID):
			return fmt.Errorf("client_id %q: want 1-64 of [A-Za-z0-9._-], starting with a letter or digit, not with u_", truncate(c.ID, 70))
		case seen[c.ID]:
			return fmt.Errorf("client_id %q is listed twice", c.ID)
		case (len(c.SecretHash) == 32) == (c.PublicKey != nil):
			return fmt.Errorf("client %q needs a secret hash or a public key, and not both", c.ID)
		}
		if c.PublicKey != nil {
			if _, err := assertionAlgs(c.PublicKey); err != nil {
				return fmt.Errorf("client %q: %w", c.ID, err)
			}
		}
		seen[c.ID] = true
	}
	return nil
}
