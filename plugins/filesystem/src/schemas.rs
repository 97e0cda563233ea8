//! The tools' arguments, with the original's input and output schemas
//! written out exactly as its SDK lists them (zod 4's JSON Schema, draft
//! 07), so that a client sees the same tools.

use std::borrow::Cow;

use schemars::{JsonSchema, Schema, SchemaGenerator, json_schema};
use serde::Deserialize;

/// Implements `JsonSchema` for `$ty` as the given schema.
macro_rules! schema {
    ($ty:ident, $json:tt) => {
        impl JsonSchema for $ty {
            fn schema_name() -> Cow<'static, str> {
                stringify!($ty).into()
            }
            fn json_schema(_: &mut SchemaGenerator) -> Schema {
                json_schema!($json)
            }
        }
    };
}

/// One `path`.
#[derive(Deserialize)]
pub struct PathArgs {
    pub path: String,
}
schema!(PathArgs, {
    "$schema": "http://json-schema.org/draft-07/schema#",
    "type": "object",
    "properties": {"path": {"type": "string"}},
    "required": ["path"]
});

#[derive(Deserialize)]
pub struct ReadTextArgs {
    pub path: String,
    pub tail: Option<f64>,
    pub head: Option<f64>,
}
schema!(ReadTextArgs, {
    "$schema": "http://json-schema.org/draft-07/schema#",
    "type": "object",
    "properties": {
        "path": {"type": "string"},
        "tail": {"description": "If provided, returns only the last N lines of the file", "type": "number"},
        "head": {"description": "If provided, returns only the first N lines of the file", "type": "number"}
    },
    "required": ["path"]
});

#[derive(Deserialize)]
pub struct ReadMultipleArgs {
    pub paths: Vec<String>,
}
schema!(ReadMultipleArgs, {
    "$schema": "http://json-schema.org/draft-07/schema#",
    "type": "object",
    "properties": {
        "paths": {
            "minItems": 1,
            "type": "array",
            "items": {"type": "string"},
            "description": "Array of file paths to read. Each path must be a string pointing to a valid file within allowed directories."
        }
    },
    "required": ["paths"]
});

#[derive(Deserialize)]
pub struct WriteArgs {
    pub path: String,
    pub content: String,
}
schema!(WriteArgs, {
    "$schema": "http://json-schema.org/draft-07/schema#",
    "type": "object",
    "properties": {"path": {"type": "string"}, "content": {"type": "string"}},
    "required": ["path", "content"]
});

#[derive(Deserialize)]
pub struct Edit {
    #[serde(rename = "oldText")]
    pub old_text: String,
    #[serde(rename = "newText")]
    pub new_text: String,
}

#[derive(Deserialize)]
pub struct EditArgs {
    pub path: String,
    pub edits: Vec<Edit>,
    #[serde(rename = "dryRun", default)]
    pub dry_run: bool,
}
schema!(EditArgs, {
    "$schema": "http://json-schema.org/draft-07/schema#",
    "type": "object",
    "properties": {
        "path": {"type": "string"},
        "edits": {
            "type": "array",
            "items": {
                "type": "object",
                "properties": {
                    "oldText": {"type": "string", "description": "Text to search for - must match exactly"},
                    "newText": {"type": "string", "description": "Text to replace with"}
                },
                "required": ["oldText", "newText"]
            }
        },
        "dryRun": {"default": false, "description": "Preview changes using git-style diff format", "type": "boolean"}
    },
    "required": ["path", "edits"]
});

#[derive(Deserialize)]
pub struct SizesArgs {
    pub path: String,
    #[serde(rename = "sortBy")]
    pub sort_by: Option<String>,
}
schema!(SizesArgs, {
    "$schema": "http://json-schema.org/draft-07/schema#",
    "type": "object",
    "properties": {
        "path": {"type": "string"},
        "sortBy": {"default": "name", "description": "Sort entries by name or size", "type": "string", "enum": ["name", "size"]}
    },
    "required": ["path"]
});

#[derive(Deserialize)]
pub struct TreeArgs {
    pub path: String,
    #[serde(rename = "excludePatterns", default)]
    pub exclude_patterns: Vec<String>,
}
schema!(TreeArgs, {
    "$schema": "http://json-schema.org/draft-07/schema#",
    "type": "object",
    "properties": {
        "path": {"type": "string"},
        "excludePatterns": {"default": [], "type": "array", "items": {"type": "string"}}
    },
    "required": ["path"]
});

#[derive(Deserialize)]
pub struct MoveArgs {
    pub source: String,
    pub destination: String,
}
schema!(MoveArgs, {
    "$schema": "http://json-schema.org/draft-07/schema#",
    "type": "object",
    "properties": {"source": {"type": "string"}, "destination": {"type": "string"}},
    "required": ["source", "destination"]
});

#[derive(Deserialize)]
pub struct SearchArgs {
    pub path: String,
    pub pattern: String,
    #[serde(rename = "excludePatterns", default)]
    pub exclude_patterns: Vec<String>,
}
schema!(SearchArgs, {
    "$schema": "http://json-schema.org/draft-07/schema#",
    "type": "object",
    "properties": {
        "path": {"type": "string"},
        "pattern": {"type": "string"},
        "excludePatterns": {"default": [], "type": "array", "items": {"type": "string"}}
    },
    "required": ["path", "pattern"]
});

/// No arguments.
#[derive(Deserialize)]
pub struct NoArgs {}
schema!(NoArgs, {
    "$schema": "http://json-schema.org/draft-07/schema#",
    "type": "object",
    "properties": {}
});

/// The structured content of every tool but `read_media_file`: the text.
pub struct TextOutput;
schema!(TextOutput, {
    "$schema": "http://json-schema.org/draft-07/schema#",
    "type": "object",
    "properties": {"content": {"type": "string"}},
    "required": ["content"],
    "additionalProperties": false
});

/// `read_media_file`'s structured content: its content blocks.
pub struct MediaOutput;
schema!(MediaOutput, {
    "$schema": "http://json-schema.org/draft-07/schema#",
    "type": "object",
    "properties": {
        "content": {
            "type": "array",
            "items": {
                "anyOf": [
                    {
                        "type": "object",
                        "properties": {
                            "type": {"type": "string", "enum": ["image", "audio"]},
                            "data": {"type": "string"},
                            "mimeType": {"type": "string"}
                        },
                        "required": ["type", "data", "mimeType"],
                        "additionalProperties": false
                    },
                    {
                        "type": "object",
                        "properties": {
                            "type": {"type": "string", "const": "resource"},
                            "resource": {
                                "type": "object",
                                "properties": {
                                    "uri": {"type": "string"},
                                    "mimeType": {"type": "string"},
                                    "blob": {"type": "string"}
                                },
                                "required": ["uri", "blob"],
                                "additionalProperties": false
                            }
                        },
                        "required": ["type", "resource"],
                        "additionalProperties": false
                    }
                ]
            }
        }
    },
    "required": ["content"],
    "additionalProperties": false
});
