//go:build unix

package main

import (
	"os"
	"testing"
)

// TestMain removes the binary the process tests built (see buildYarnEr).
func TestMain(m *testing.M) {
	code := m.Run()
	if builtDir != "" {
		_ = os.RemoveAll(builtDir)
	}
	os.Exit(code)
}
