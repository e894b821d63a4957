package sqlstore

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/mcpauth/mcpauth/server/store"
)

// scanner is *sql.Row or *sql.Rows.
type scanner interface{ Scan(dest ...any) error }

// ms and fromMS convert times to and from stored Unix milliseconds (UTC).
func ms(t time.Time) int64 { return t.UnixMilli() }

func fromMS(v int64) time.Time { return time.UnixMilli(v).UTC() }

// encodeStrings stores a slice as a JSON array; nil and empty both become "[]".
func encodeStrings(s []string) (string, error) {
	if len(s) == 0 {
		return "[]", nil
	}
	b, err := json.Marshal(s)
	return string(b), err
}

// decodeStrings reads a JSON array; an empty one becomes nil.
func decodeStrings(text string) ([]string, error) {
	var s []string
	if err := json.Unmarshal([]byte(text), &s); err != nil {
		return nil, err
	}
	if len(s) == 0 {
		return nil, nil
	}
	return s, nil
}

// notFound maps sql.ErrNoRows to store.ErrNotFound and wraps with what.
func notFound(what string, err error) error {
	if errors.Is(err, sql.ErrNoRows) {
		return fmt.Errorf("%s: %w", what, store.ErrNotFound)
	}
	return fmt.Errorf("%s: %w", what, err)
}

// insertErr maps a unique violation to store.ErrAlreadyExists.
func (s *Store) insertErr(what string, err error) error {
	if s.d.uniqueViolation(err) {
		return fmt.Errorf("%s: %w", what, store.ErrAlreadyExists)
	}
	return fmt.Errorf("%s: %w", what, err)
}

const clientCols = `id, name, redirect_uris, grant_types, response_types, scope, token_endpoint_auth_method, created_at, application_type`

func (s *Store) CreateClient(ctx context.Context, c store.Client) error {
	var lists [3]string
	for i, l := range [][]string{c.RedirectURIs, c.GrantTypes, c.ResponseTypes} {
		var err error
		if lists[i], err = encodeStrings(l); err != nil {
			return fmt.Errorf("create client: %w", err)
		}
	}
	_, err := s.exec(ctx, `INSERT INTO clients (`+clientCols+`) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)`,
		c.ID, c.Name, lists[0], lists[1], lists[2], c.Scope, c.TokenEndpointAuthMethod, ms(c.CreatedAt), c.ApplicationType)
	if err != nil {
		return s.insertErr("create client", err)
	}
	return nil
}

func (s *Store) GetClient(ctx context.Context, id string) (store.Client, error) {
	var c store.Client
	var lists [3]string
	var created int64
	err := s.queryRow(ctx, `SELECT `+clientCols+` FROM clients WHERE id = ?`, id).Scan(
		&c.ID, &c.Name, &lists[0], &lists[1], &lists[2], &c.Scope, &c.TokenEndpointAuthMethod, &created, &c.ApplicationType)
	if err != nil {
		return store.Client{}, notFound("get client", err)
	}
	for i, dst := range []*[]string{&c.RedirectURIs, &c.GrantTypes, &c.ResponseTypes} {
		if *dst, err = decodeStrings(lists[i]); err != nil {
			return store.Client{}, fmt.Errorf("get client %q: %w", id, err)
		}
	}
	c.CreatedAt = fromMS(created)
	return c, nil
}

const authCodeCols = `hash, client_id, redirect_uri, code_challenge, scope, resource, user_id,
	created_at, expires_at, used, used_at, token_id, token_exp`

func scanAuthCode(row scanner) (store.AuthCode, error) {
	var c store.AuthCode
	var created, expires, usedAt, tokenExp int64
	var used int
	err := row.Scan(&c.Hash, &c.ClientID, &c.RedirectURI, &c.CodeChallenge, &c.Scope, &c.Resource, &c.UserID,
		&created, &expires, &used, &usedAt, &c.TokenID, &tokenExp)
	c.CreatedAt, c.ExpiresAt, c.UsedAt, c.TokenExp = fromMS(created), fromMS(expires), fromMS(usedAt), fromMS(tokenExp)
	c.Used = used != 0
	return c, err
}

func (s *Store) CreateAuthCode(ctx context.Context, c store.AuthCode) error {
	used := 0
	if c.Used {
		used = 1
	}
	_, err := s.exec(ctx, `INSERT INTO auth_codes (`+authCodeCols+`) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
		c.Hash, c.ClientID, c.RedirectURI, c.CodeChallenge, c.Scope, c.Resource, c.UserID,
		ms(c.CreatedAt), ms(c.ExpiresAt), used, ms(c.UsedAt), c.TokenID, ms(c.TokenExp))
	if err != nil {
		return s.insertErr("create auth code", err)
	}
	return nil
}

func (s *Store) GetAuthCode(ctx context.Context, hash string) (store.AuthCode, error) {
	c, err := scanAuthCode(s.queryRow(ctx, `SELECT `+authCodeCols+` FROM auth_codes WHERE hash = ?`, hash))
	if err != nil {
		return store.AuthCode{}, notFound("get auth code", err)
	}
	return c, nil
}

// ConsumeAuthCode is one conditional UPDATE: the database lets exactly one
// matching caller flip used from 0 to 1, checking the redemption in the
// same statement (a read before it cost as much as the write). The others
// read the record as stored, to learn why.
func (s *Store) ConsumeAuthCode(ctx context.Context, hash string, r store.Redemption) (store.AuthCode, error) {
	const consume = `UPDATE auth_codes SET used = 1, used_at = ?, token_id = ?, token_exp = ?
		WHERE hash = ? AND used = 0 AND client_id = ? AND redirect_uri = ? AND code_challenge = ? AND expires_at > ?
		RETURNING scope, resource, user_id, created_at, expires_at`
	args := []any{ms(r.Now), r.TokenID, ms(r.TokenExp), hash, r.ClientID, r.RedirectURI, r.CodeChallenge, ms(r.Now)}
	// The columns the redemption matched or set are not read back.
	c := store.AuthCode{Hash: hash, ClientID: r.ClientID, RedirectURI: r.RedirectURI, CodeChallenge: r.CodeChallenge,
		Used: true, UsedAt: fromMS(ms(r.Now)), TokenID: r.TokenID, TokenExp: fromMS(ms(r.TokenExp))}
	scanRest := func(row scanner) error {
		var created, expires int64
		err := row.Scan(&c.Scope, &c.Resource, &c.UserID, &created, &expires)
		c.CreatedAt, c.ExpiresAt = fromMS(created), fromMS(expires)
		return err
	}
	var err error
	if s.group == nil {
		err = scanRest(s.queryRow(ctx, consume, args...))
	} else if st, perr := s.prepared(ctx, consume); perr != nil {
		// Prepared once, outside the group's transaction (which may hold
		// the only connection): parsing the UPDATE in every transaction was
		// a quarter of an exchange's CPU.
		return store.AuthCode{}, fmt.Errorf("consume auth code: %w", perr)
	} else if gerr := s.groupedStmt(ctx, "code:"+hash, func(ctx context.Context, tx querier) error {
		err = scanRest(tx.StmtContext(ctx, st).QueryRowContext(ctx, args...))
		if errors.Is(err, sql.ErrNoRows) {
			return nil // nothing written; the caller reads the record
		}
		return err
	}); gerr != nil {
		return store.AuthCode{}, fmt.Errorf("consume auth code: %w", gerr)
	}
	if err == nil {
		return c, nil
	}
	if !errors.Is(err, sql.ErrNoRows) {
		return store.AuthCode{}, fmt.Errorf("consume auth code: %w", err)
	}
	c, err = s.GetAuthCode(ctx, hash)
	if err != nil {
		return store.AuthCode{}, fmt.Errorf("consume auth code: %w", err)
	}
	if !c.Used {
		return c, fmt.Errorf("consume auth code: %w", store.ErrCodeMismatch)
	}
	return c, fmt.Errorf("consume auth code: %w", store.ErrAlreadyUsed)
}
