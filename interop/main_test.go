package interop

import (
	"os"
	"testing"

	"github.com/mcpauth/mcpauth/internal/testenv"
)

// TestMain reports at exit the tests skipped for want of Node.js or a
// pinned npm package (tsserver ends them through testenv).
func TestMain(m *testing.M) { os.Exit(testenv.Main(m)) }
