package hostconfig

// Named is one server entry of a host's file.
type Named struct {
	Name string
	// Entry is the command it runs; Stdio is false for a remote server
	// (a url), whose Entry is empty.
	Entry Entry
	Stdio bool
}

// Entries lists the entries of a host's file (data may be empty: no file).
func (h Host) Entries(data []byte) ([]Named, error) {
	if h.Format == TOML {
		return tomlEntries(data, h.Key)
	}
	return jsonEntries(data, h.Key)
}

// Set returns data with the entry name set to e (added, or replacing one
// of that name), everything else kept.
func (h Host) Set(data []byte, name string, e Entry) ([]byte, error) {
	if h.Format == TOML {
		return tomlSet(data, h.Key, name, e)
	}
	if isBlank(data) && h.NewFile != "" {
		data = []byte(h.NewFile)
	}
	return jsonSet(data, h.Key, name, h.shape(e))
}

// Remove returns data without the entry name; found is false when there
// is none.
func (h Host) Remove(data []byte, name string) (out []byte, found bool, err error) {
	if h.Format == TOML {
		return tomlRemove(data, h.Key, name)
	}
	return jsonRemove(data, h.Key, name)
}

// Snippet is what Set adds, as a file holding only that entry would read.
func (h Host) Snippet(name string, e Entry) (string, error) {
	out, err := h.Set(nil, name, e)
	return string(out), err
}

func isBlank(data []byte) bool {
	for _, c := range data {
		if c != ' ' && c != '\t' && c != '\r' && c != '\n' {
			return false
		}
	}
	return true
}
