// Package store defines the persistence contract of the reference server.
//
// Every secret the server hands out (authorization codes, device codes, user
// codes, API keys) reaches the store only as a hash computed by the caller, so
// a leaked database yields nothing that can be presented to the server. Every
// backend (memory, SQLite, PostgreSQL) passes the same contract suite in
// package storetest, concurrency cases included.
package store

import (
	"context"
	"errors"
	"time"
)

// Sentinel errors. Backends wrap driver errors with %w; callers branch with
// errors.Is.
var (
	// ErrNotFound: no record under that key (or it was garbage collected).
	ErrNotFound = errors.New("store: not found")
	// ErrAlreadyExists: a record with that key exists already.
	ErrAlreadyExists = errors.New("store: already exists")
	// ErrAlreadyUsed: ConsumeAuthCode found the code already consumed. The
	// returned AuthCode is still filled in, so the caller can revoke the token
	// issued from it (RFC 6749 §4.1.2).
	ErrAlreadyUsed = errors.New("store: already used")
	// ErrCodeMismatch: ConsumeAuthCode found the code unused, but the
	// redemption does not match it (another client, redirect URI or
	// verifier, or the code has expired). Nothing was written; the returned
	// AuthCode is the record as stored, so the caller can say what failed.
	ErrCodeMismatch = errors.New("store: code does not match the redemption")
)

// Client is a registered OAuth client (RFC 7591). Clients are public: PKCE
// replaces a secret (token_endpoint_auth_method "none").
type Client struct {
	ID                      string
	Name                    string
	RedirectURIs            []string
	GrantTypes              []string
	ResponseTypes           []string
	Scope                   string
	TokenEndpointAuthMethod string
	ApplicationType         string // "native" or "web"; "" for clients registered before it was recorded
	CreatedAt               time.Time
	// UsedAt is when a login first issued the client a token (set by
	// MarkClientUsed); zero while it has never been used, and GC removes
	// it UnusedClientLifetime after CreatedAt.
	UsedAt time.Time
}

// UnusedClientLifetime is how long a registered client never used for a
// login is kept (RFC 7591 lets a server expire clients): registering costs
// nothing, so registrations nobody logs in with must not pile up.
const UnusedClientLifetime = 24 * time.Hour

// AuthCode is an issued authorization code, keyed by the hash of the code.
type AuthCode struct {
	Hash          string // SHA-256 of the code, hex; the code itself is never stored
	ClientID      string
	RedirectURI   string // exactly as sent in the authorization request
	CodeChallenge string // S256 only
	Scope         string
	Resource      string // RFC 8707 resource, if the request named one
	UserID        string
	CreatedAt     time.Time
	ExpiresAt     time.Time
	// Set by ConsumeAuthCode: UsedAt is when the code was exchanged and
	// TokenID the jti of the token issued for it.
	Used     bool
	UsedAt   time.Time
	TokenID  string
	TokenExp time.Time // expiry of that token, so a revocation can be collected later
}

// Redemption is a token request's claim on a code (RFC 6749 §4.1.3, RFC
// 7636 §4.6). ConsumeAuthCode checks it in the same atomic step that spends
// the code, so the common case costs one statement and a request that does
// not match spends nothing.
type Redemption struct {
	ClientID      string
	RedirectURI   string
	CodeChallenge string    // S256 of the presented code_verifier
	Now           time.Time // the code must expire after Now; recorded as UsedAt
	TokenID       string    // the jti of the token issued for the code
	TokenExp      time.Time
}

// Matches reports whether r may spend c, whether or not c is used yet.
// Times compare at the stored precision, milliseconds.
func (c AuthCode) Matches(r Redemption) bool {
	return c.ClientID == r.ClientID && c.RedirectURI == r.RedirectURI && c.CodeChallenge == r.CodeChallenge &&
		r.Now.UnixMilli() < c.ExpiresAt.UnixMilli()
}

// DeviceStatus is the state of a device code (contract: "States and transitions").
type DeviceStatus string

const (
	DevicePending  DeviceStatus = "pending"
	DeviceApproved DeviceStatus = "approved"
	DeviceDenied   DeviceStatus = "denied"
	// DeviceSpent: the token was delivered, or the denial was reported; any
	// further poll is refused.
	DeviceSpent DeviceStatus = "spent"
)

// DeviceCode is a device authorization (RFC 8628), keyed by the hash of the
// device_code and findable by the hash of the normalised user_code.
type DeviceCode struct {
	Hash         string // SHA-256 of device_code, hex
	UserCodeHash string // keyed hash of the normalised user_code, hex
	ClientID     string
	Scope        string
	Status       DeviceStatus
	UserID       string        // set on approval
	Interval     time.Duration // current minimum polling interval; slow_down raises it
	LastPollAt   time.Time     // zero until the first poll
	CreatedAt    time.Time
	ExpiresAt    time.Time
}

// User is an account known to the server. Users are created on first login.
type User struct {
	ID        string
	Name      string // display name from the identity provider
	Subject   string // issuer-scoped subject at the identity provider ("iss|sub")
	CreatedAt time.Time
}

// APIKey is a user's personal key. Hash looks it up; Sealed is the key
// encrypted with a server key so Settings can show it (decisions.md).
type APIKey struct {
	UserID    string
	Hash      string // SHA-256 of the key, hex
	Sealed    []byte
	CreatedAt time.Time
}

// MetadataDocument is a cached Client ID Metadata Document, keyed by its
// URL (the client_id). Body is the document as fetched, so the server
// validates it again on every use and a rule change applies to cached
// documents too. Shared through the store so instances fetch it once.
type MetadataDocument struct {
	URL       string
	Body      []byte
	FetchedAt time.Time
	ExpiresAt time.Time
}

// RefreshToken is one refresh token of a family (RFC 9700 §4.14.2): the
// tokens that descend, by rotation, from one authorization grant. Client,
// user, scope, resource and expiry belong to the family; the rest to the
// token.
type RefreshToken struct {
	Hash string // SHA-256 of the token, hex; the token itself is never stored
	// FamilyID is the jti of the family's first access token, so that a
	// replayed authorization code, which records that jti, finds the family.
	FamilyID  string
	ClientID  string
	UserID    string
	Scope     string
	Resource  string
	ExpiresAt time.Time // the family's end, fixed at the original grant
	CreatedAt time.Time // when this token was issued
	// TokenID and TokenExp name the access token issued with this refresh
	// token, so revoking the family can deny it.
	TokenID  string
	TokenExp time.Time
	// Set by RotateRefreshToken: the token was exchanged and must not be
	// presented again.
	Used   bool
	UsedAt time.Time
	// Revoked: the whole family was revoked (RevokeRefreshFamily).
	Revoked bool
	// Successor is what the rotation that spent this token was given to
	// keep (the server's sealed copy of the pair it issued, opaque to the
	// store), while that rotation is its family's latest and the family
	// is not revoked; nil otherwise, and nil when nothing was kept.
	Successor []byte
}

// RevokedToken names an access token denied by RevokeRefreshFamily.
type RevokedToken struct {
	ID        string // jti
	ExpiresAt time.Time
}

// Store is the reference server's storage. All methods are safe for concurrent
// use, including from several server instances sharing one database.
type Store interface {
	// CreateClient stores a new client; ErrAlreadyExists if the ID is taken.
	CreateClient(ctx context.Context, c Client) error
	// GetClient returns the client or ErrNotFound.
	GetClient(ctx context.Context, id string) (Client, error)
	// MarkClientUsed sets the client's UsedAt to at unless it is set
	// already (the first use counts); ErrNotFound for an unknown client.
	MarkClientUsed(ctx context.Context, id string, at time.Time) error

	// CreateAuthCode stores a new code; ErrAlreadyExists if the hash is taken.
	CreateAuthCode(ctx context.Context, c AuthCode) error
	// GetAuthCode returns the code (used or not) or ErrNotFound.
	GetAuthCode(ctx context.Context, hash string) (AuthCode, error)
	// ConsumeAuthCode atomically checks that an unused code matches r and
	// marks it used at r.Now, recording the jti and expiry of the token
	// issued for it, and returns the updated record. Of any number of
	// concurrent matching calls for one hash exactly one succeeds; the
	// others get ErrAlreadyUsed together with the record as stored (whose
	// TokenID names the token to revoke). An unused code that does not match
	// gets ErrCodeMismatch and stays unused.
	ConsumeAuthCode(ctx context.Context, hash string, r Redemption) (AuthCode, error)

	// CreateDeviceCode stores a new device code; ErrAlreadyExists if either
	// the hash or the user code hash is taken by a live record.
	CreateDeviceCode(ctx context.Context, d DeviceCode) error
	// GetDeviceCode returns the device code or ErrNotFound.
	GetDeviceCode(ctx context.Context, hash string) (DeviceCode, error)
	// GetDeviceCodeByUserCode returns the device code or ErrNotFound.
	GetDeviceCodeByUserCode(ctx context.Context, userCodeHash string) (DeviceCode, error)
	// UpdateDeviceCode is a compare-and-set: it reads the record, calls fn,
	// and writes fn's result only if the record did not change in between
	// (retrying fn on conflict). If fn returns an error nothing is written and
	// that error is returned as is. Hash and UserCodeHash cannot change.
	UpdateDeviceCode(ctx context.Context, hash string, fn func(DeviceCode) (DeviceCode, error)) (DeviceCode, error)

	// UpsertUser creates the user or updates Name and Subject.
	UpsertUser(ctx context.Context, u User) error
	// GetUser returns the user or ErrNotFound.
	GetUser(ctx context.Context, id string) (User, error)
	// GetUserBySubject returns the user with that identity-provider subject.
	GetUserBySubject(ctx context.Context, subject string) (User, error)

	// SetAPIKey replaces the user's API key (there is at most one) atomically:
	// after it returns, the previous hash is not found.
	SetAPIKey(ctx context.Context, k APIKey) error
	// GetAPIKeyByHash returns the key or ErrNotFound.
	GetAPIKeyByHash(ctx context.Context, hash string) (APIKey, error)
	// GetAPIKeyByUser returns the user's key or ErrNotFound.
	GetAPIKeyByUser(ctx context.Context, userID string) (APIKey, error)
	// ListAPIKeys returns every stored key, for re-sealing after a key
	// rotation.
	ListAPIKeys(ctx context.Context) ([]APIKey, error)
	// ResealAPIKey replaces Sealed of the user's key only while its hash is
	// still hash, so a re-seal racing a regeneration never brings the old
	// key back; ErrNotFound if the user has no key with that hash.
	ResealAPIKey(ctx context.Context, userID, hash string, sealed []byte) error

	// RevokeToken denies a JWT by its jti until exp (after which the token is
	// invalid anyway and the entry can be collected).
	RevokeToken(ctx context.Context, jti string, exp time.Time) error
	// IsTokenRevoked reports whether the jti was revoked.
	IsTokenRevoked(ctx context.Context, jti string) (bool, error)

	// CreateRefreshToken starts a family with its first token;
	// ErrAlreadyExists if the hash or the family is taken.
	CreateRefreshToken(ctx context.Context, t RefreshToken) error
	// GetRefreshToken returns the token (used, revoked or not) with its
	// family's fields, or ErrNotFound.
	GetRefreshToken(ctx context.Context, hash string) (RefreshToken, error)
	// RotateRefreshToken atomically spends the unused token hash of a
	// family that is not revoked, adds next to that family (only next's
	// Hash, CreatedAt, TokenID and TokenExp are read) and keeps successor
	// (nil for none) as the spent token's Successor, which drops the one
	// an earlier rotation of the family kept. Of any number of concurrent
	// calls for one hash exactly one succeeds. It returns the presented
	// token as stored afterwards; ErrAlreadyUsed with that record when the
	// token was spent or its family revoked (the record tells which, and
	// a spent token's record has the winner's Successor), ErrNotFound for
	// an unknown hash, ErrAlreadyExists (nothing changed) if next's hash
	// is taken.
	RotateRefreshToken(ctx context.Context, hash string, next RefreshToken, now time.Time, successor []byte) (RefreshToken, error)
	// RevokeRefreshFamily marks the family revoked, so none of its refresh
	// tokens is accepted again, drops its kept Successor, and revokes (as
	// RevokeToken) every access token issued with them, which it returns
	// so the caller can update any cache. Once it returns, no rotation of the family can succeed, and
	// none that succeeded is missing from the list. Idempotent; ErrNotFound
	// for an unknown family.
	RevokeRefreshFamily(ctx context.Context, familyID string) ([]RevokedToken, error)

	// GetOrCreateSecret returns the named server secret, storing gen's value
	// first if there is none. Concurrent callers (even on other instances)
	// all get the same value.
	GetOrCreateSecret(ctx context.Context, name string, gen func() ([]byte, error)) ([]byte, error)

	// AddCounter atomically adds delta to the named counter (created at 0)
	// and returns the new value; delta 0 reads it. Instances sharing a
	// database share counters (the test clock's offset is one).
	AddCounter(ctx context.Context, name string, delta int64) (int64, error)

	// PutMetadataDocument stores d, replacing any entry for d.URL.
	PutMetadataDocument(ctx context.Context, d MetadataDocument) error
	// GetMetadataDocument returns the entry for url, expired or not (the
	// caller compares ExpiresAt with its clock), or ErrNotFound.
	GetMetadataDocument(ctx context.Context, url string) (MetadataDocument, error)

	// GC deletes what can no longer matter at now: unused auth codes past
	// ExpiresAt, used ones once their token (TokenExp) has expired too (so a
	// late replay can still revoke it), device codes past ExpiresAt,
	// revocations past their token's expiry, metadata documents past
	// ExpiresAt, refresh token families past ExpiresAt once every
	// access token issued in them has expired too, and clients never used
	// whose CreatedAt is more than UnusedClientLifetime past. It returns
	// how many records it removed.
	GC(ctx context.Context, now time.Time) (int, error)

	// Close releases the backend's resources.
	Close() error
}

// Shared is implemented by backends that several server instances can use
// at once. Invalidations returns the source of the changes other instances
// make that a credential cache must hear of, or nil when this store serves
// one process only (a SQLite file), where the process's own writes are all
// there is.
type Shared interface {
	Invalidations() Watcher
}

// Watcher delivers the changes that invalidate cached credentials, made by
// any instance: revoked token ids (RevokeToken, RevokeRefreshFamily,
// a replayed code) and API keys set (SetAPIKey, also a re-seal).
type Watcher interface {
	// WatchInvalidations delivers changes to h until ctx ends, then
	// returns nil. It calls h.Unsynced before anything else and whenever
	// changes may have been missed (connecting, a lost connection, a late
	// heartbeat), and h.Resynced once every change committed from then on
	// will be delivered. Between an Unsynced and the next Resynced, the
	// handler must not trust what it cached.
	WatchInvalidations(ctx context.Context, h InvalidationHandler) error
}

// InvalidationHandler receives what a Watcher delivers, from one goroutine.
type InvalidationHandler interface {
	// Revoked: the token with this jti is refused until exp.
	Revoked(jti string, exp time.Time)
	// APIKeyChanged: the user's API key was replaced or re-sealed.
	APIKeyChanged(userID string)
	// Unsynced: changes may have been missed, for the reason given.
	Unsynced(cause error)
	// Resynced: from now on every change is delivered.
	Resynced()
}
