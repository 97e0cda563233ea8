//go:build wasip1

// The plugin contract (wit/plugin.wit, world `plugin`) for go-semver: the
// tool list and the call, which parse the arguments and hand them to
// package semver (../semver.go), then turn its answer into a call result.
//
// The package name is the one the generated bindings call: plugins/build-go
// copies this folder into the bindings that `corral bindings go` writes,
// where `export_corral_plugin_tools` is the package whose List and Call
// implement the exported interface. It builds only for wasip1 (the build
// constraint above), so that `go test ./...` natively skips it: the host
// functions it calls exist only inside the component.
//
// Nothing here starts a goroutine: between calls of the exports the Go
// runtime does not run, so work left to a goroutine would never finish.
// Nothing writes to stdout either: it is not the protocol, and Corral
// discards it; messages go through corral_plugin_host.Log.
package export_corral_plugin_tools

import (
	"encoding/json"
	"fmt"

	semver "corral.plugin/go-semver"
	witTypes "go.bytecodealliance.org/pkg/wit/types"
	"wit_component/corral_plugin_host"
	"wit_component/corral_plugin_tools"
	"wit_component/corral_plugin_types"
)

const matchInput = `{
  "type": "object",
  "properties": {
    "versions": {
      "type": "array",
      "items": {"type": "string"},
      "description": "Version strings to check, e.g. [\"1.2.0\", \"v1.10.3\", \"2.0.0-rc.1\"]. SemVer 2.0.0 (MAJOR.MINOR.PATCH[-PRERELEASE][+BUILD]); a leading v is accepted. Strings that are not SemVer are reported, not rejected."
    },
    "constraint": {
      "type": "string",
      "minLength": 1,
      "description": "Which versions to keep, e.g. \">=1.2.0, <2\", \"^1.4 || ~2.0.3\" or \"1.x\". Comparators separated by commas or spaces must all hold; || separates alternatives. Operators: =, !=, >, >=, <, <=, ~ (same minor), ^ (same major); a version may leave out trailing parts or write them as x."
    }
  },
  "required": ["versions", "constraint"],
  "additionalProperties": false
}`

const matchOutput = `{
  "type": "object",
  "properties": {
    "constraint": {"type": "string", "description": "The constraint as given."},
    "means": {"type": "string", "description": "The bounds the constraint stands for, e.g. \">=1.2.0 <2.0.0-0\"."},
    "matching": {"type": "array", "items": {"type": "string"}, "description": "The versions that satisfy the constraint, lowest first, as written."},
    "highest": {"type": ["string", "null"], "description": "The highest matching version, or null when none matches."},
    "invalid": {
      "type": "array",
      "items": {
        "type": "object",
        "properties": {"version": {"type": "string"}, "reason": {"type": "string"}},
        "required": ["version", "reason"],
        "additionalProperties": false
      },
      "description": "The strings that are not SemVer versions, and why."
    },
    "checked": {"type": "integer", "minimum": 0, "description": "How many versions were given."}
  },
  "required": ["constraint", "means", "matching", "highest", "invalid", "checked"],
  "additionalProperties": false
}`

// At most this many progress reports per call (the host accepts 1,000):
// a longer list reports every n-th version.
const maxProgressReports = 100

// At most this many invalid versions are logged one by one.
const maxInvalidLogged = 10

// List is the plugin's tool list, which Corral checks and caches at load.
func List() []corral_plugin_tools.Tool {
	return []corral_plugin_tools.Tool{{
		Name:         "semver_match",
		Title:        witTypes.Some("Match versions against a constraint"),
		Description:  witTypes.Some("Check a list of Semantic Versioning 2.0.0 version strings against a constraint such as \">=1.2.0, <2\": returns the versions that match (lowest first), the highest match, and the strings that are not valid versions with the reason. Use it to pick a release or dependency version that satisfies a requirement."),
		InputSchema:  matchInput,
		OutputSchema: witTypes.Some(matchOutput),
		Annotations: witTypes.Some(corral_plugin_tools.ToolAnnotations{
			ReadOnlyHint:    witTypes.Some(true),
			DestructiveHint: witTypes.Some(false),
			IdempotentHint:  witTypes.Some(true),
			OpenWorldHint:   witTypes.Some(false),
		}),
	}}
}

// Call runs tool `name` with its arguments, which the host has already
// checked against the input schema.
func Call(name, arguments string) corral_plugin_tools.CallResult {
	if name != "semver_match" {
		return failure(fmt.Sprintf("unknown tool %q; this plugin offers semver_match", name))
	}
	var args struct {
		Versions   []string `json:"versions"`
		Constraint string   `json:"constraint"`
	}
	if err := json.Unmarshal([]byte(arguments), &args); err != nil {
		return failure("the arguments are not a JSON object of versions and constraint: " + err.Error())
	}
	corral_plugin_host.Log(corral_plugin_types.LogLevel_Info,
		fmt.Sprintf("semver_match: %d version(s) against %q", len(args.Versions), args.Constraint))

	every := max(1, (len(args.Versions)+maxProgressReports-1)/maxProgressReports)
	result, err := semver.Match(args.Versions, args.Constraint, func(done, total int, version string) {
		if done%every == 0 || done == total {
			corral_plugin_host.Progress(float64(done), witTypes.Some(float64(total)),
				witTypes.Some("checked "+version))
		}
	})
	if err != nil {
		// The one mistake the schema cannot catch: a tool execution error
		// whose message says how to write the constraint.
		corral_plugin_host.Log(corral_plugin_types.LogLevel_Warning, "semver_match: "+err.Error())
		return failure(err.Error())
	}
	for i, invalid := range result.Invalid {
		if i == maxInvalidLogged {
			corral_plugin_host.Log(corral_plugin_types.LogLevel_Notice,
				fmt.Sprintf("semver_match: %d more invalid version(s) not logged", len(result.Invalid)-i))
			break
		}
		corral_plugin_host.Log(corral_plugin_types.LogLevel_Notice,
			fmt.Sprintf("semver_match: %q is not SemVer: %s", invalid.Version, invalid.Reason))
	}
	structured, err := json.Marshal(result)
	if err != nil {
		return failure("could not encode the result: " + err.Error())
	}
	return corral_plugin_tools.CallResult{
		Content:           []corral_plugin_types.Content{text(result.Summary())},
		StructuredContent: witTypes.Some(string(structured)),
	}
}

func text(s string) corral_plugin_types.Content {
	return corral_plugin_types.MakeContentText(corral_plugin_types.TextContent{Text: s})
}

// failure is a tool execution error: the model reads the message and can
// correct its call.
func failure(message string) corral_plugin_tools.CallResult {
	return corral_plugin_tools.CallResult{
		Content: []corral_plugin_types.Content{text(message)},
		IsError: true,
	}
}
