// Unit tests of tool.go, natively: ./test, or go test ./...
// (plugin/ builds only for wasip1: the host functions it calls exist only
// inside the component.)
package tool

import (
	"errors"
	"testing"
)

func TestGreetsByName(t *testing.T) {
	got, err := Greet(" Ada ")
	if err != nil || got != "Hello, Ada!" {
		t.Fatalf("Greet(\" Ada \") = %q, %v", got, err)
	}
}

func TestABlankNameIsAFailure(t *testing.T) {
	_, err := Greet("  ")
	var failure *Failure
	if !errors.As(err, &failure) {
		t.Fatalf("Greet(\"  \") = %v, want a *Failure", err)
	}
}
