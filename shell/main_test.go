package shell_test

import (
	"testing"

	"go.uber.org/goleak"
)

// The parser starts no goroutines; goleak keeps it that way.
func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m)
}
