//go:build wasip1

// Test fixture: a Go plugin, built by plugins/build-go, whose tool `visit`
// keeps what it was called with in package-level state (a counter, a
// slice, the last mark) and answers with all of it. Each call runs in an
// instance no call ran in before, so every answer holds its own call
// alone: {"calls": 1, "marks": [MARK], "last": null}. It also logs its
// mark, which must reach the call that made it.
package export_corral_plugin_tools

import (
	"encoding/json"

	"wit_component/corral_plugin_host"
	"wit_component/corral_plugin_tools"
	"wit_component/corral_plugin_types"
)

var (
	calls int
	marks []string
	last  *string
)

// List is the plugin's tool list.
func List() []corral_plugin_tools.Tool {
	return []corral_plugin_tools.Tool{{
		Name:        "visit",
		InputSchema: `{"type": "object", "properties": {"mark": {"type": "string"}}, "required": ["mark"]}`,
	}}
}

// Call runs tool `name` with `arguments`.
func Call(name, arguments string) corral_plugin_tools.CallResult {
	var args struct {
		Mark string `json:"mark"`
	}
	if err := json.Unmarshal([]byte(arguments), &args); err != nil {
		return text(err.Error(), true)
	}
	calls++
	marks = append(marks, args.Mark)
	seen, _ := json.Marshal(map[string]any{"calls": calls, "marks": marks, "last": last})
	mark := args.Mark
	last = &mark
	corral_plugin_host.Log(corral_plugin_types.LogLevel_Info, "visited by "+mark)
	return text(string(seen), false)
}

func text(value string, isError bool) corral_plugin_tools.CallResult {
	return corral_plugin_tools.CallResult{
		Content: []corral_plugin_types.Content{
			corral_plugin_types.MakeContentText(corral_plugin_types.TextContent{Text: value}),
		},
		IsError: isError,
	}
}
