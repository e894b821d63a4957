package sqlstore

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
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

const clientCols = `id, name, redirect_uris, grant_types, response_types, scope, token_endpoint_auth_method, created_at, application_type, used_at`

func (s *Store) CreateClient(ctx context.Context, c store.Client) error {
	var lists [3]string
	for i, l := range [][]string{c.RedirectURIs, c.GrantTypes, c.ResponseTypes} {
		var err error
		if lists[i], err = encodeStrings(l); err != nil {
			return fmt.Errorf("create client: %w", err)
		}
	}
	_, err := s.exec(ctx, `INSERT INTO clients (`+clientCols+`) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
		c.ID, c.Name, lists[0], lists[1], lists[2], c.Scope, c.TokenEndpointAuthMethod, ms(c.CreatedAt), c.ApplicationType, ms(c.UsedAt))
	if err != nil {
		return s.insertErr("create client", err)
	}
	return nil
}

func (s *Store) GetClient(ctx context.Context, id string) (store.Client, error) {
	var c store.Client
	var lists [3]string
	var created, used int64
	err := s.queryRow(ctx, `SELECT `+clientCols+` FROM clients WHERE id = ?`, id).Scan(
		&c.ID, &c.Name, &lists[0], &lists[1], &lists[2], &c.Scope, &c.TokenEndpointAuthMethod, &created, &c.ApplicationType, &used)
	if err != nil {
		return store.Client{}, notFound("get client", err)
	}
	for i, dst := range []*[]string{&c.RedirectURIs, &c.GrantTypes, &c.ResponseTypes} {
		if *dst, err = decodeStrings(lists[i]); err != nil {
			return store.Client{}, fmt.Errorf("get client %q: %w", id, err)
		}
	}
	c.CreatedAt, c.UsedAt = fromMS(created), fromMS(used)
	return c, nil
}

// zeroMS is the zero time.Time as stored: a client's used_at until its
// first use.
var zeroMS = ms(time.Time{})

// MarkClientUsed is one UPDATE, so it cannot interleave with GC's DELETE:
// a client is either marked and kept, or gone and ErrNotFound.
func (s *Store) MarkClientUsed(ctx context.Context, id string, at time.Time) error {
	return s.updateOne(ctx, "mark client used",
		`UPDATE clients SET used_at = CASE WHEN used_at = ? THEN ? ELSE used_at END WHERE id = ?`, zeroMS, ms(at), id)
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

// consumeOneSQL spends one code when the redemption matches it.
const consumeOneSQL = `UPDATE auth_codes SET used = 1, used_at = ?, token_id = ?, token_exp = ?
	WHERE hash = ? AND used = 0 AND client_id = ? AND redirect_uri = ? AND code_challenge = ? AND expires_at > ?
	RETURNING scope, resource, user_id, created_at, expires_at`

// ConsumeAuthCode is one conditional UPDATE: the database lets exactly one
// matching caller flip used from 0 to 1, checking the redemption in the
// same statement (a read before it cost as much as the write). The others
// read the record as stored, to learn why.
func (s *Store) ConsumeAuthCode(ctx context.Context, hash string, r store.Redemption) (store.AuthCode, error) {
	w, err := s.newConsumeWrite(ctx, hash, r)
	if err != nil {
		return store.AuthCode{}, fmt.Errorf("consume auth code: %w", err)
	}
	if s.group == nil {
		w.err = w.scan(s.queryRow(ctx, consumeOneSQL, w.args()...))
	} else if err := s.groupedMerge(ctx, "code:"+hash, w, w.runAlone); err != nil {
		return store.AuthCode{}, fmt.Errorf("consume auth code: %w", err)
	}
	if w.err == nil {
		return w.code, nil
	}
	if !errors.Is(w.err, sql.ErrNoRows) {
		return store.AuthCode{}, fmt.Errorf("consume auth code: %w", w.err)
	}
	c, err := s.GetAuthCode(ctx, hash)
	if err != nil {
		return store.AuthCode{}, fmt.Errorf("consume auth code: %w", err)
	}
	if !c.Used {
		return c, fmt.Errorf("consume auth code: %w", store.ErrCodeMismatch)
	}
	return c, fmt.Errorf("consume auth code: %w", store.ErrAlreadyUsed)
}

// consumeWrite is one code consumption: alone, the single UPDATE; in a
// group on SQLite, merged with the group's others into one UPDATE … FROM a
// table of the redemptions.
type consumeWrite struct {
	s     *Store
	hash  string
	r     store.Redemption
	alone *sql.Stmt      // consumeOneSQL, prepared (grouped stores only)
	code  store.AuthCode // the record as spent, once err is nil
	err   error          // nil once spent; sql.ErrNoRows when nothing matched
}

func (s *Store) newConsumeWrite(ctx context.Context, hash string, r store.Redemption) (*consumeWrite, error) {
	// The columns the redemption matched or set are not read back.
	w := &consumeWrite{s: s, hash: hash, r: r, code: store.AuthCode{Hash: hash, ClientID: r.ClientID, RedirectURI: r.RedirectURI,
		CodeChallenge: r.CodeChallenge, Used: true, UsedAt: fromMS(ms(r.Now)), TokenID: r.TokenID, TokenExp: fromMS(ms(r.TokenExp))}}
	if s.group != nil {
		// Prepared once, outside the group's transaction (which may hold
		// the only connection): parsing the UPDATE in every transaction was
		// a quarter of an exchange's CPU.
		st, err := s.prepared(ctx, consumeOneSQL)
		if err != nil {
			return nil, err
		}
		w.alone = st
	}
	return w, nil
}

func (w *consumeWrite) args() []any {
	r := w.r
	return []any{ms(r.Now), r.TokenID, ms(r.TokenExp), w.hash, r.ClientID, r.RedirectURI, r.CodeChallenge, ms(r.Now)}
}

// scan reads the RETURNING columns of consumeOneSQL into the record.
func (w *consumeWrite) scan(row scanner) error {
	var created, expires int64
	err := row.Scan(&w.code.Scope, &w.code.Resource, &w.code.UserID, &created, &expires)
	w.code.CreatedAt, w.code.ExpiresAt = fromMS(created), fromMS(expires)
	return err
}

// runAlone is the grouped write run by itself. A code not spent writes
// nothing and is no error to the group: the caller reads the record.
func (w *consumeWrite) runAlone(ctx context.Context, q querier) error {
	w.err = w.scan(q.StmtContext(ctx, w.alone).QueryRowContext(ctx, w.args()...))
	if errors.Is(w.err, sql.ErrNoRows) {
		return nil
	}
	return w.err
}

func (*consumeWrite) mergeKind() string { return "consume auth code" }

// runMerged spends, in one statement, every code of all whose redemption
// matches, with consumeOneSQL's conditions. The group gives it at most one
// write per code, so each returned row is one caller's.
func (w *consumeWrite) prepareMerged(ctx context.Context, n int) (*sql.Stmt, error) {
	return w.s.prepared(ctx, mergedConsumeSQL(n))
}

func (w *consumeWrite) runMerged(ctx context.Context, q querier, st *sql.Stmt, all []merger) error {
	args := make([]any, 0, 7*len(all))
	byHash := make(map[string]*consumeWrite, len(all))
	for _, m := range all {
		c := m.(*consumeWrite)
		if byHash[c.hash] != nil {
			return fmt.Errorf("code %.8s… twice in one merged consume", c.hash)
		}
		byHash[c.hash] = c
		r := c.r
		args = append(args, c.hash, r.ClientID, r.RedirectURI, r.CodeChallenge, ms(r.Now), r.TokenID, ms(r.TokenExp))
	}
	rows, err := q.StmtContext(ctx, st).QueryContext(ctx, args...)
	if err != nil {
		return err
	}
	defer rows.Close()
	spent := make(map[*consumeWrite]store.AuthCode, len(all))
	for rows.Next() {
		var hash string
		var created, expires int64
		var got store.AuthCode
		if err := rows.Scan(&hash, &got.Scope, &got.Resource, &got.UserID, &created, &expires); err != nil {
			return err
		}
		c := byHash[hash]
		if _, twice := spent[c]; c == nil || twice {
			return fmt.Errorf("merged consume returned code %.8s… for no caller", hash)
		}
		got.CreatedAt, got.ExpiresAt = fromMS(created), fromMS(expires)
		spent[c] = got
	}
	if err := rows.Err(); err != nil {
		return err
	}
	// Outcomes are recorded only now: after an error above the group runs
	// every write alone, from where it was.
	for _, m := range all {
		c := m.(*consumeWrite)
		got, ok := spent[c]
		if !ok {
			c.err = sql.ErrNoRows // nothing written; the caller reads the record
			continue
		}
		c.code.Scope, c.code.Resource, c.code.UserID = got.Scope, got.Resource, got.UserID
		c.code.CreatedAt, c.code.ExpiresAt = got.CreatedAt, got.ExpiresAt
		c.err = nil
	}
	return nil
}

// mergedConsumeSQL is the UPDATE for n redemptions, the table of them a
// VALUES list (hash, client, redirect URI, challenge, now, token id, token
// expiry). At 7 parameters each, a group's 64 stay far below SQLite's
// limit of 32,766.
func mergedConsumeSQL(n int) string {
	var b strings.Builder
	b.WriteString(`WITH r(hash, client_id, redirect_uri, code_challenge, now, token_id, token_exp) AS (VALUES `)
	for i := range n {
		if i > 0 {
			b.WriteString(", ")
		}
		b.WriteString("(?, ?, ?, ?, ?, ?, ?)")
	}
	b.WriteString(`)
		UPDATE auth_codes SET used = 1, used_at = r.now, token_id = r.token_id, token_exp = r.token_exp
		FROM r
		WHERE auth_codes.hash = r.hash AND auth_codes.used = 0 AND auth_codes.client_id = r.client_id
			AND auth_codes.redirect_uri = r.redirect_uri AND auth_codes.code_challenge = r.code_challenge
			AND auth_codes.expires_at > r.now
		RETURNING auth_codes.hash, auth_codes.scope, auth_codes.resource, auth_codes.user_id,
			auth_codes.created_at, auth_codes.expires_at`)
	return b.String()
}
