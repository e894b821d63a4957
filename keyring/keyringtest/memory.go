// Package keyringtest has an OS keyring held in memory, for tests of
// commands where the real one cannot run (keyring/ tests the real Secret
// Service, and the end-to-end tests use it).
package keyringtest

import (
	"sync"

	"github.com/mcpauth/mcpauth/keyring"
)

// Memory is a working keyring.Backend held in memory; the zero value is
// empty and ready.
type Memory struct {
	mu   sync.Mutex
	m    map[string]string
	down error
}

// SetUnavailable makes every later call fail with err, as a Secret Service
// that went away does (a desktop session ended, no D-Bus over SSH); nil
// brings the keyring back with what it held.
func (k *Memory) SetUnavailable(err error) {
	k.mu.Lock()
	defer k.mu.Unlock()
	k.down = err
}

var _ keyring.Backend = (*Memory)(nil)

func key(service, user string) string { return service + "\x00" + user }

// Get implements keyring.Backend.
func (k *Memory) Get(service, user string) (string, error) {
	k.mu.Lock()
	defer k.mu.Unlock()
	if k.down != nil {
		return "", k.down
	}
	if v, ok := k.m[key(service, user)]; ok {
		return v, nil
	}
	return "", keyring.ErrNotFound
}

// Set implements keyring.Backend.
func (k *Memory) Set(service, user, secret string) error {
	k.mu.Lock()
	defer k.mu.Unlock()
	if k.down != nil {
		return k.down
	}
	if k.m == nil {
		k.m = map[string]string{}
	}
	k.m[key(service, user)] = secret
	return nil
}

// Delete implements keyring.Backend.
func (k *Memory) Delete(service, user string) error {
	k.mu.Lock()
	defer k.mu.Unlock()
	if k.down != nil {
		return k.down
	}
	delete(k.m, key(service, user))
	return nil
}
