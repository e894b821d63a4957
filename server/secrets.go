package server

import (
	"crypto/aes"
	"crypto/cipher"
	"crypto/hkdf"
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"math/big"
	"strings"
)

// hashSecret is how every high-entropy secret (codes, device codes, API keys)
// is keyed in the store: SHA-256, hex. The secret itself is never stored.
func hashSecret(s string) string {
	sum := sum256(s)
	return hex.EncodeToString(sum[:])
}

// sum256 is sha256.Sum256([]byte(s)) with s copied to the stack rather than
// converted: the conversion was a heap allocation per bearer request.
func sum256(s string) [32]byte {
	var buf [1024]byte
	if len(s) <= len(buf) {
		return sha256.Sum256(append(buf[:0], s...))
	}
	return sha256.Sum256([]byte(s))
}

// keyedHash is for low-entropy values (user codes): an HMAC with a server key,
// so a stolen database does not let anyone enumerate the 10^4·20^4 codes.
func keyedHash(key []byte, s string) string {
	m := hmac.New(sha256.New, key)
	m.Write([]byte(s))
	return hex.EncodeToString(m.Sum(nil))
}

// deriveKey derives a purpose-bound key from the signing key, so one
// configured secret serves every purpose without reusing bytes across them.
func deriveKey(master []byte, purpose string) []byte {
	k, err := hkdf.Key(sha256.New, master, nil, "mcpauth "+purpose, 32)
	if err != nil {
		panic(fmt.Sprintf("hkdf: %v", err)) // only fails for absurd lengths
	}
	return k
}

// API keys look like mcpa_<43 base62 chars>: a fixed prefix secret scanners
// can spot, then 32 random bytes (decisions.md).
const apiKeyPrefix = "mcpa_"

const base62Alphabet = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"

// apiKeyBodyLen is the length of 32 bytes in base62: ceil(256/log2(62)).
const apiKeyBodyLen = 43

func newAPIKey() (string, error) { return newBase62Secret(apiKeyPrefix) }

// looksLikeAPIKey tells API keys from JWTs before any lookup: a JWT never
// starts with the prefix, and a malformed key is refused without touching
// the store.
func looksLikeAPIKey(s string) bool { return looksLikeBase62Secret(s, apiKeyPrefix) }

// newBase62Secret returns prefix and 32 random bytes in base62, the shape
// of API keys and refresh tokens.
func newBase62Secret(prefix string) (string, error) {
	b := make([]byte, 32)
	if _, err := rand.Read(b); err != nil {
		return "", fmt.Errorf("reading random bytes: %w", err)
	}
	n := new(big.Int).SetBytes(b)
	out := make([]byte, apiKeyBodyLen)
	base, mod := big.NewInt(62), new(big.Int)
	for i := apiKeyBodyLen - 1; i >= 0; i-- {
		n.DivMod(n, base, mod)
		out[i] = base62Alphabet[mod.Int64()]
	}
	return prefix + string(out), nil
}

// looksLikeBase62Secret: s is prefix and apiKeyBodyLen base62 characters,
// as newBase62Secret makes them.
func looksLikeBase62Secret(s, prefix string) bool {
	if !strings.HasPrefix(s, prefix) || len(s) != len(prefix)+apiKeyBodyLen {
		return false
	}
	for i := len(prefix); i < len(s); i++ {
		if strings.IndexByte(base62Alphabet, s[i]) < 0 {
			return false
		}
	}
	return true
}

// sealer encrypts secrets at rest (AES-256-GCM): API keys, so Settings can
// show a key the store otherwise only knows by hash, and the pair a refresh
// rotation keeps for its reuse interval.
type sealer struct{ aead cipher.AEAD }

func newSealer(key []byte) (*sealer, error) {
	block, err := aes.NewCipher(key)
	if err != nil {
		return nil, fmt.Errorf("sealer: %w", err)
	}
	aead, err := cipher.NewGCM(block)
	if err != nil {
		return nil, fmt.Errorf("sealer: %w", err)
	}
	return &sealer{aead: aead}, nil
}

// seal binds the ciphertext to its record (an API key's user), so a sealed
// value cannot be moved to another record and opened there.
func (s *sealer) seal(plaintext, record string) ([]byte, error) {
	nonce := make([]byte, s.aead.NonceSize())
	if _, err := rand.Read(nonce); err != nil {
		return nil, fmt.Errorf("reading random bytes: %w", err)
	}
	return s.aead.Seal(nonce, nonce, []byte(plaintext), []byte(record)), nil
}

func (s *sealer) open(sealed []byte, record string) (string, error) {
	n := s.aead.NonceSize()
	if len(sealed) < n {
		return "", errors.New("sealed value too short")
	}
	pt, err := s.aead.Open(nil, sealed[:n], sealed[n:], []byte(record))
	if err != nil {
		return "", fmt.Errorf("opening sealed value: %w", err)
	}
	return string(pt), nil
}

// errKeyUnreadable: no configured sealing key opens a stored API key (the
// keys were rotated without keeping the previous one). The key itself still
// authenticates, by hash; only Settings cannot show it.
var errKeyUnreadable = errors.New("the stored api key cannot be opened with the configured sealing keys")

// sealers seal API keys with the current sealing key and open them with it
// or with a previous one, so a rotation does not lock anyone out.
type sealers struct {
	current  *sealer
	previous []*sealer
}

// newSealers takes raw 32-byte AES keys, current first.
func newSealers(current []byte, previous [][]byte) (*sealers, error) {
	cur, err := newSealer(current)
	if err != nil {
		return nil, err
	}
	ss := &sealers{current: cur}
	for _, k := range previous {
		p, err := newSealer(k)
		if err != nil {
			return nil, err
		}
		ss.previous = append(ss.previous, p)
	}
	return ss, nil
}

func (ss *sealers) seal(plaintext, userID string) ([]byte, error) {
	return ss.current.seal(plaintext, userID)
}

// open returns the key and whether a previous sealing key opened it, in
// which case the caller re-seals it under the current one.
func (ss *sealers) open(sealed []byte, userID string) (key string, stale bool, err error) {
	if key, err := ss.current.open(sealed, userID); err == nil {
		return key, false, nil
	}
	for _, p := range ss.previous {
		if key, err := p.open(sealed, userID); err == nil {
			return key, true, nil
		}
	}
	return "", false, errKeyUnreadable
}
