package keyring

import (
	"crypto/aes"
	"crypto/cipher"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"strings"
)

// layoutVersion is the on-disk format of entry files, the index and the
// registration cache. It versions the store layout, never the app, so an
// upgrade of mcpauth does not orphan stored logins (mcp-remote#200).
const layoutVersion = 1

// keyPrefix versions the value kept in the OS keyring.
const keyPrefix = "mcpauth-k1:"

// envelope is the JSON content of one entry file. Server and Account are in
// clear (they are not secrets) so a file copied to another entry's name is
// rejected before decryption; the AAD makes editing them useless.
type envelope struct {
	Version    int             `json:"version"`
	Backend    Storage         `json:"backend"`
	Server     string          `json:"server"`
	Account    string          `json:"account"`
	Nonce      []byte          `json:"nonce,omitempty"`      // keyring backend
	Ciphertext []byte          `json:"ciphertext,omitempty"` // keyring backend: AES-256-GCM(bundle JSON)
	Bundle     json.RawMessage `json:"bundle,omitempty"`     // file backend: bundle JSON, unprotected
}

// lengthPrefixed writes a domain tag and fields with 4-byte lengths so that
// ("a:b","c") and ("a","b:c") never collide.
func lengthPrefixed(tag string, fields ...string) []byte {
	buf := []byte(tag)
	for _, f := range fields {
		buf = binary.BigEndian.AppendUint32(buf, uint32(len(f)))
		buf = append(buf, f...)
	}
	return buf
}

// entryAAD binds a ciphertext to its (server, account) and layout version.
func entryAAD(server, account string) []byte {
	return lengthPrefixed(fmt.Sprintf("mcpauth/keyring/entry/v%d\x00", layoutVersion), server, account)
}

// entryID names an entry's files: a hash, so URLs need no escaping and file
// names stay short on every OS.
func entryID(server, account string) string {
	sum := sha256.Sum256(lengthPrefixed("mcpauth/keyring/id\x00", server, account))
	return hex.EncodeToString(sum[:16])
}

func newKey() ([]byte, error) {
	k := make([]byte, 32)
	if _, err := rand.Read(k); err != nil {
		return nil, fmt.Errorf("keyring: generate key: %w", err)
	}
	return k, nil
}

func encodeKey(k []byte) string { return keyPrefix + base64.StdEncoding.EncodeToString(k) }

func decodeKey(s string) ([]byte, error) {
	rest, ok := strings.CutPrefix(s, keyPrefix)
	if !ok {
		return nil, fmt.Errorf("keyring item has an unknown format: %w", ErrInvalidEntry)
	}
	k, err := base64.StdEncoding.DecodeString(rest)
	if err != nil || len(k) != 32 {
		return nil, fmt.Errorf("keyring item is not a 256-bit key: %w", ErrInvalidEntry)
	}
	return k, nil
}

func newGCM(key []byte) (cipher.AEAD, error) {
	block, err := aes.NewCipher(key)
	if err != nil {
		return nil, fmt.Errorf("keyring: cipher: %w", err)
	}
	return cipher.NewGCM(block)
}

// seal encrypts plaintext with a fresh random nonce. Keys are reused across
// saves of one entry; random 96-bit nonces are safe far beyond any realistic
// number of token refreshes.
func seal(key, plaintext, aad []byte) (nonce, ct []byte, err error) {
	aead, err := newGCM(key)
	if err != nil {
		return nil, nil, err
	}
	nonce = make([]byte, aead.NonceSize())
	if _, err := rand.Read(nonce); err != nil {
		return nil, nil, fmt.Errorf("keyring: nonce: %w", err)
	}
	return nonce, aead.Seal(nil, nonce, plaintext, aad), nil
}

func open(key, nonce, ct, aad []byte) ([]byte, error) {
	aead, err := newGCM(key)
	if err != nil {
		return nil, err
	}
	if len(nonce) != aead.NonceSize() {
		return nil, fmt.Errorf("bad nonce length: %w", ErrInvalidEntry)
	}
	pt, err := aead.Open(nil, nonce, ct, aad)
	if err != nil {
		return nil, fmt.Errorf("decryption failed: %w", ErrInvalidEntry)
	}
	return pt, nil
}
