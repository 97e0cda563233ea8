//go:build wasip1

// The plugin contract (world `plugin`): the tool list and the call. The tool
// itself is package tool (../tool.go).
//
// The package name is the one the generated bindings call: ./build copies
// this folder into the bindings that `corral bindings go` writes, where
// `export_corral_plugin_tools` is the package whose List and Call implement
// the exported interface `corral:plugin/tools`. It builds only for wasip1
// (the line above), so that `go test ./...` natively leaves it out.
//
// Two rules of Go in a component: start no goroutine that should outlive a
// call (between calls the Go runtime does not run, and each call gets a
// fresh instance), and write nothing to stdout (it is not the protocol;
// Corral discards it): log through corral_plugin_host.Log.
package export_corral_plugin_tools

import (
	"encoding/json"
	"errors"
	"fmt"

	tool "corral.plugin/{{name}}"
	witTypes "go.bytecodealliance.org/pkg/wit/types"
	"wit_component/corral_plugin_host"
	"wit_component/corral_plugin_tools"
	"wit_component/corral_plugin_types"
)

const toolName = "{{name}}"

// The host checks every call's arguments against this schema before the
// plugin runs.
const inputSchema = `{
  "type": "object",
  "properties": {"name": {"type": "string", "description": "Who to greet."}},
  "required": ["name"],
  "additionalProperties": false
}`

// List is the plugin's tool list, which Corral checks and caches at load.
func List() []corral_plugin_tools.Tool {
	greet := corral_plugin_tools.Tool{
		Name:        toolName,
		Description: witTypes.Some("Say hello to someone by name."),
		InputSchema: inputSchema,
		Annotations: witTypes.Some(corral_plugin_tools.ToolAnnotations{
			ReadOnlyHint:    witTypes.Some(true),
			DestructiveHint: witTypes.Some(false),
			IdempotentHint:  witTypes.Some(true),
			OpenWorldHint:   witTypes.Some(false),
		}),
	}
	return []corral_plugin_tools.Tool{greet}
}

// Call runs tool `name` with `arguments`, a JSON object the host has
// already checked against the input schema.
func Call(name, arguments string) corral_plugin_tools.CallResult {
	if name != toolName {
		return textResult("unknown tool: "+name, true)
	}
	var args struct {
		Name string `json:"name"`
	}
	if err := json.Unmarshal([]byte(arguments), &args); err != nil {
		return textResult("the arguments are not a JSON object: "+err.Error(), true)
	}
	greeting, err := tool.Greet(args.Name)
	var failure *tool.Failure
	if errors.As(err, &failure) {
		return textResult(failure.Message, true)
	} else if err != nil {
		// Anything else is a bug: panic. The call then fails, and its error
		// carries the panic's message and stack trace.
		panic(err)
	}
	corral_plugin_host.Log(corral_plugin_types.LogLevel_Info, fmt.Sprintf("%s: greeted %q", name, args.Name))
	return textResult(greeting, false)
}

func textResult(text string, isError bool) corral_plugin_tools.CallResult {
	return corral_plugin_tools.CallResult{
		Content: []corral_plugin_types.Content{
			corral_plugin_types.MakeContentText(corral_plugin_types.TextContent{Text: text}),
		},
		IsError: isError,
	}
}
