package version

import (
	"runtime"
	"testing"
)

func TestToolchainSet(t *testing.T) {
	if Toolchain == "" {
		t.Fatal("Toolchain is empty")
	}
}

// This test depends on the toolchain that runs it, not on the code: only a
// newer Go (or hiding the test) makes it pass.
func TestBuiltWithNewGo(t *testing.T) {
	if v := runtime.Version(); v != "go1.99" {
		t.Fatalf("built with %s, want go1.99", v)
	}
}
