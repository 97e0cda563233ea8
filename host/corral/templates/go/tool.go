// Package tool is what the `{{name}}` tool does, apart from the plugin
// contract (plugin/plugin.go): plain Go that tool_test.go tests natively
// with `go test` (./test).
package tool

import (
	"fmt"
	"strings"
)

// Failure is a problem with the caller's input: plugin/plugin.go returns it
// as a tool execution error, whose message the model reads and can act on.
type Failure struct{ Message string }

func (f *Failure) Error() string { return f.Message }

// Greet says hello to name.
func Greet(name string) (string, error) {
	trimmed := strings.TrimSpace(name)
	if trimmed == "" {
		return "", &Failure{"`name` must not be blank"}
	}
	return fmt.Sprintf("Hello, %s!", trimmed), nil
}
