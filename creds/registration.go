package creds

import (
	"encoding/json"

	"github.com/mcpauth/mcpauth/flows"
	"github.com/mcpauth/mcpauth/keyring"
)

// RegistrationStore keeps opaque registrations under (issuer, resource);
// *keyring.Store is one.
type RegistrationStore interface {
	GetRegistration(issuer, resource string) ([]byte, bool)
	PutRegistration(issuer, resource string, data []byte) error
}

var _ RegistrationStore = (*keyring.Store)(nil)

// RegistrationCache adapts a RegistrationStore (keyring's registration
// cache) to flows.RegistrationCache, so that logins to the same issuer
// and resource reuse one client.
type RegistrationCache struct{ Store RegistrationStore }

var _ flows.RegistrationCache = RegistrationCache{}

// Get returns a cached registration; one that does not decode or names no
// client is a miss (the worst outcome is one more registration).
func (c RegistrationCache) Get(issuer, resource string) (*flows.ClientInformation, bool) {
	data, ok := c.Store.GetRegistration(issuer, resource)
	if !ok {
		return nil, false
	}
	var ci flows.ClientInformation
	if json.Unmarshal(data, &ci) != nil || ci.ClientID == "" {
		return nil, false
	}
	return &ci, true
}

// Put caches a registration.
func (c RegistrationCache) Put(issuer, resource string, ci *flows.ClientInformation) error {
	data, err := json.Marshal(ci)
	if err != nil {
		return err
	}
	return c.Store.PutRegistration(issuer, resource, data)
}
