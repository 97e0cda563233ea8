//go:build wasip1

// Test fixture: a Go plugin, built by plugins/build-go, that reads its
// secrets through wasi:config/store. Its manifest grants [state] too, so
// that the world it is built against is composed of both grants
// (plugin-with-state-and-secrets). Tool `secret` answers the value of the
// secret `name` (or `none`, for a name it is not granted or that has no
// value); tool `secrets` the names GetAll returns.
package export_corral_plugin_tools

import (
	"encoding/json"
	"sort"
	"strings"

	"wit_component/corral_plugin_tools"
	"wit_component/corral_plugin_types"
	"wit_component/wasi_config_store"
)

// List is the plugin's tool list.
func List() []corral_plugin_tools.Tool {
	return []corral_plugin_tools.Tool{
		{
			Name:        "secret",
			InputSchema: `{"type": "object", "properties": {"name": {"type": "string"}}, "required": ["name"]}`,
		},
		{Name: "secrets", InputSchema: `{"type": "object"}`},
	}
}

// Call runs tool `name` with `arguments`.
func Call(name, arguments string) corral_plugin_tools.CallResult {
	if name == "secret" {
		var args struct {
			Name string `json:"name"`
		}
		if err := json.Unmarshal([]byte(arguments), &args); err != nil {
			return text(err.Error(), true)
		}
		got := wasi_config_store.Get(args.Name)
		if got.IsErr() {
			return text(message(got.Err()), true)
		}
		return text(got.Ok().SomeOr("none"), false)
	}
	all := wasi_config_store.GetAll()
	if all.IsErr() {
		return text(message(all.Err()), true)
	}
	names := []string{}
	for _, pair := range all.Ok() {
		names = append(names, pair.F0)
	}
	sort.Strings(names)
	return text(strings.Join(names, ","), false)
}

// message is a store error's text: upstream(string) or io(string).
func message(err wasi_config_store.Error) string {
	if err.Tag() == wasi_config_store.Error_Upstream {
		return "error: upstream: " + err.Upstream()
	}
	return "error: io: " + err.Io()
}

func text(value string, isError bool) corral_plugin_tools.CallResult {
	return corral_plugin_tools.CallResult{
		Content: []corral_plugin_types.Content{
			corral_plugin_types.MakeContentText(corral_plugin_types.TextContent{Text: value}),
		},
		IsError: isError,
	}
}
