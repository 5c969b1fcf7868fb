//! A tool's schema in each provider's dialect: Anthropic, OpenAI (strict), MCP, Gemini.
//!
//! One [`ToolSpec`] is the source; each dialect rewrites its JSON schema into what the provider
//! accepts, or says exactly which keyword of which tool it cannot express.

use std::fmt;

use serde_json::{Map, Value, json};

use crate::tool::ToolSpec;

/// A provider's format for tool definitions.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum Dialect {
    /// Anthropic Messages: `{name, description, input_schema}`.
    Anthropic,
    /// OpenAI Chat Completions function tools with `strict: true`.
    OpenAiStrict,
    /// Model Context Protocol `tools/list` entries: `{name, description, inputSchema}`, the
    /// schema as the tool states it (JSON Schema 2020-12, MCP's own dialect).
    Mcp,
    /// Gemini function declarations: `{name, description, parameters}` (an OpenAPI subset).
    Gemini,
}

impl Dialect {
    /// Every dialect.
    pub const ALL: [Dialect; 4] = [
        Dialect::Anthropic,
        Dialect::OpenAiStrict,
        Dialect::Mcp,
        Dialect::Gemini,
    ];

    /// The dialect's short name: `anthropic`, `openai`, `mcp`, `gemini`.
    pub fn name(self) -> &'static str {
        match self {
            Dialect::Anthropic => "anthropic",
            Dialect::OpenAiStrict => "openai",
            Dialect::Mcp => "mcp",
            Dialect::Gemini => "gemini",
        }
    }

    /// The dialect of a short name.
    pub fn from_name(name: &str) -> Option<Dialect> {
        Dialect::ALL.into_iter().find(|d| d.name() == name)
    }

    /// The tool definition of `spec` in this dialect.
    ///
    /// # Errors
    ///
    /// [`DialectError`] naming the tool, the keyword and where it is, when the schema uses what
    /// the dialect cannot express.
    pub fn render(self, spec: &ToolSpec) -> Result<Value, DialectError> {
        let mut rendered = self.render_whole(spec)?;
        // schemars repeats the tool's description at the schema's root: the model would pay for
        // it twice.
        let root = match self {
            Dialect::Anthropic => rendered.get_mut("input_schema"),
            Dialect::Mcp => rendered.get_mut("inputSchema"),
            Dialect::OpenAiStrict => rendered.pointer_mut("/function/parameters"),
            Dialect::Gemini => rendered.get_mut("parameters"),
        };
        if let Some(Value::Object(root)) = root
            && root.get("description").and_then(Value::as_str) == Some(spec.description.as_str())
        {
            root.remove("description");
        }
        Ok(rendered)
    }

    fn render_whole(self, spec: &ToolSpec) -> Result<Value, DialectError> {
        match self {
            Dialect::Anthropic => Ok(json!({
                "name": spec.name,
                "description": spec.description,
                "input_schema": plain(&spec.input_schema),
            })),
            Dialect::Mcp => {
                // JSON Schema 2020-12 is MCP's own dialect: the schema as the tool states it,
                // `$schema` and `title` kept (a proxied server's schema passes unchanged).
                let mut tool = json!({
                    "name": spec.name,
                    "description": spec.description,
                    "inputSchema": spec.input_schema,
                });
                if let Some(title) = &spec.title {
                    tool["title"] = Value::String(title.clone());
                }
                if let Some(schema) = &spec.output_schema {
                    tool["outputSchema"] = schema.clone();
                }
                let hints = mcp_annotations(&spec.annotations);
                if !hints.is_empty() {
                    tool["annotations"] = Value::Object(hints);
                }
                Ok(tool)
            }
            Dialect::OpenAiStrict => {
                let mut cx = Rewrite::new(spec, self);
                let parameters = cx.strict(&spec.input_schema, "#", true)?;
                let mut parameters = parameters;
                if let Some(defs) = spec.input_schema.get("$defs").and_then(Value::as_object) {
                    let mut strict_defs = Map::new();
                    for (name, def) in defs {
                        strict_defs.insert(
                            name.clone(),
                            cx.strict(def, &format!("#/$defs/{name}"), false)?,
                        );
                    }
                    parameters["$defs"] = Value::Object(strict_defs);
                }
                Ok(json!({
                    "type": "function",
                    "function": {
                        "name": spec.name,
                        "description": spec.description,
                        "parameters": parameters,
                        "strict": true,
                    },
                }))
            }
            Dialect::Gemini => {
                let mut cx = Rewrite::new(spec, self);
                let parameters = cx.gemini(&spec.input_schema, "#", 0)?;
                Ok(json!({
                    "name": spec.name,
                    "description": spec.description,
                    "parameters": parameters,
                }))
            }
        }
    }
}

impl fmt::Display for Dialect {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// A schema keyword a dialect cannot express.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error(
    "tool `{tool}` cannot be expressed in the {dialect} dialect: `{keyword}` at {path} ({why})"
)]
#[non_exhaustive]
pub struct DialectError {
    /// The tool.
    pub tool: String,
    /// The dialect.
    pub dialect: Dialect,
    /// The keyword.
    pub keyword: String,
    /// Where it is, as a JSON pointer from the schema's root (`#/properties/filter`).
    pub path: String,
    /// Why it cannot be expressed.
    pub why: String,
}

/// Keywords that carry no meaning for a model and that no provider needs.
const DROPPED_EVERYWHERE: &[&str] = &["$schema", "title"];

/// Keywords OpenAI's strict mode rejects; they are dropped (constraints the model cannot be held
/// to anyway, or annotations).
const STRICT_DROPPED: &[&str] = &[
    "$schema",
    "title",
    "default",
    "format",
    "examples",
    "minLength",
    "maxLength",
    "pattern",
    "minimum",
    "maximum",
    "exclusiveMinimum",
    "exclusiveMaximum",
    "multipleOf",
    "minItems",
    "maxItems",
    "uniqueItems",
    "minProperties",
    "maxProperties",
    "deprecated",
    "readOnly",
    "writeOnly",
];

/// Keywords strict mode cannot express at all: an error rather than a silent change of meaning.
const STRICT_UNSUPPORTED: &[&str] = &[
    "oneOf",
    "allOf",
    "not",
    "if",
    "then",
    "else",
    "dependentRequired",
    "dependentSchemas",
    "patternProperties",
    "propertyNames",
    "unevaluatedProperties",
    "unevaluatedItems",
    "contains",
    "prefixItems",
];

/// The keywords Gemini's schema subset keeps.
const GEMINI_KEPT: &[&str] = &[
    "type",
    "description",
    "enum",
    "properties",
    "required",
    "items",
    "nullable",
    "anyOf",
    "minItems",
    "maxItems",
    "minimum",
    "maximum",
    "propertyOrdering",
];

/// The schema without `$schema` and the root's `title`.
fn plain(schema: &Value) -> Value {
    let mut schema = schema.clone();
    if let Value::Object(map) = &mut schema {
        for key in DROPPED_EVERYWHERE {
            map.remove(*key);
        }
    }
    schema
}

struct Rewrite<'a> {
    spec: &'a ToolSpec,
    dialect: Dialect,
}

impl<'a> Rewrite<'a> {
    fn new(spec: &'a ToolSpec, dialect: Dialect) -> Self {
        Rewrite { spec, dialect }
    }

    fn error(&self, keyword: &str, path: &str, why: &str) -> DialectError {
        DialectError {
            tool: self.spec.name.clone(),
            dialect: self.dialect,
            keyword: keyword.to_owned(),
            path: path.to_owned(),
            why: why.to_owned(),
        }
    }

    /// OpenAI strict: every object closed (`additionalProperties: false`) with every property
    /// required, optional ones made nullable; rejected keywords dropped or refused.
    fn strict(&mut self, schema: &Value, path: &str, root: bool) -> Result<Value, DialectError> {
        let Value::Object(map) = schema else {
            return Ok(schema.clone());
        };
        for key in STRICT_UNSUPPORTED {
            if map.contains_key(*key) {
                return Err(self.error(key, path, "strict mode does not support it"));
            }
        }
        if root && map.contains_key("anyOf") {
            return Err(self.error("anyOf", path, "strict mode needs an object at the root"));
        }
        let mut out = Map::new();
        for (key, value) in map {
            if STRICT_DROPPED.contains(&key.as_str()) || key == "$defs" || key == "definitions" {
                continue;
            }
            let value = match key.as_str() {
                "properties" => {
                    let Value::Object(props) = value else {
                        return Err(self.error("properties", path, "must be an object"));
                    };
                    let mut strict_props = Map::new();
                    for (name, prop) in props {
                        let prop_path = format!("{path}/properties/{name}");
                        strict_props.insert(name.clone(), self.strict(prop, &prop_path, false)?);
                    }
                    Value::Object(strict_props)
                }
                "items" => self.strict(value, &format!("{path}/items"), false)?,
                "anyOf" => {
                    let Value::Array(options) = value else {
                        return Err(self.error("anyOf", path, "must be an array"));
                    };
                    let options = options
                        .iter()
                        .enumerate()
                        .map(|(i, o)| self.strict(o, &format!("{path}/anyOf/{i}"), false))
                        .collect::<Result<Vec<_>, _>>()?;
                    Value::Array(options)
                }
                "additionalProperties" if value != &Value::Bool(false) => {
                    return Err(self.error(
                        "additionalProperties",
                        path,
                        "strict mode needs closed objects (a map with free keys cannot be expressed)",
                    ));
                }
                _ => value.clone(),
            };
            out.insert(key.clone(), value);
        }
        let is_object = type_names(map).contains(&"object") || map.contains_key("properties");
        if is_object {
            let required: Vec<String> = map
                .get("required")
                .and_then(Value::as_array)
                .map(|r| {
                    r.iter()
                        .filter_map(|v| v.as_str().map(str::to_owned))
                        .collect()
                })
                .unwrap_or_default();
            let props = out
                .entry("properties")
                .or_insert_with(|| Value::Object(Map::new()));
            let mut all = Vec::new();
            if let Value::Object(props) = props {
                for (name, prop) in props.iter_mut() {
                    if !required.contains(name) {
                        make_nullable(prop);
                    }
                    all.push(Value::String(name.clone()));
                }
            }
            out.insert("required".to_owned(), Value::Array(all));
            out.insert("additionalProperties".to_owned(), Value::Bool(false));
        }
        Ok(Value::Object(out))
    }

    /// Gemini: the OpenAPI subset, `$ref`s inlined, type unions turned into `nullable`.
    fn gemini(&mut self, schema: &Value, path: &str, depth: usize) -> Result<Value, DialectError> {
        if depth > 32 {
            return Err(self.error(
                "$ref",
                path,
                "the schema is recursive, which Gemini cannot express",
            ));
        }
        let Value::Object(map) = schema else {
            return Ok(schema.clone());
        };
        if let Some(reference) = map.get("$ref").and_then(Value::as_str) {
            let target = reference
                .strip_prefix("#/$defs/")
                .or_else(|| reference.strip_prefix("#/definitions/"))
                .and_then(|name| {
                    self.spec
                        .input_schema
                        .get("$defs")
                        .or_else(|| self.spec.input_schema.get("definitions"))
                        .and_then(|defs| defs.get(name))
                })
                .ok_or_else(|| self.error("$ref", path, "it points outside the schema's $defs"))?
                .clone();
            let mut inlined = self.gemini(&target, path, depth + 1)?;
            if let (Some(description), Value::Object(out)) = (map.get("description"), &mut inlined)
            {
                out.insert("description".to_owned(), description.clone());
            }
            return Ok(inlined);
        }
        for key in ["oneOf", "allOf", "not", "patternProperties"] {
            if map.contains_key(key) {
                return Err(self.error(key, path, "Gemini's schema subset does not support it"));
            }
        }
        let mut out = Map::new();
        for (key, value) in map {
            match key.as_str() {
                "type" => {
                    let names = type_names(map);
                    let concrete: Vec<&str> =
                        names.iter().copied().filter(|t| *t != "null").collect();
                    match concrete.as_slice() {
                        [one] => {
                            out.insert("type".to_owned(), json!(one.to_uppercase()));
                            if names.contains(&"null") {
                                out.insert("nullable".to_owned(), Value::Bool(true));
                            }
                        }
                        _ => {
                            return Err(self.error(
                                "type",
                                path,
                                "Gemini needs one type per schema",
                            ));
                        }
                    }
                }
                "properties" => {
                    let mut props = Map::new();
                    for (name, prop) in value.as_object().into_iter().flatten() {
                        let prop_path = format!("{path}/properties/{name}");
                        props.insert(name.clone(), self.gemini(prop, &prop_path, depth)?);
                    }
                    out.insert(key.clone(), Value::Object(props));
                }
                "items" => {
                    out.insert(
                        key.clone(),
                        self.gemini(value, &format!("{path}/items"), depth)?,
                    );
                }
                "anyOf" => {
                    // `T | null`, as schemars writes an optional nested type, is `T` nullable.
                    let options: Vec<&Value> = value.as_array().into_iter().flatten().collect();
                    let non_null: Vec<&&Value> = options
                        .iter()
                        .filter(|o| o.get("type").and_then(Value::as_str) != Some("null"))
                        .collect();
                    if let [only] = non_null.as_slice() {
                        let inner = self.gemini(only, path, depth)?;
                        if let Value::Object(inner) = inner {
                            out.extend(inner);
                        }
                        if options.len() > 1 {
                            out.insert("nullable".to_owned(), Value::Bool(true));
                        }
                    } else {
                        let options = options
                            .iter()
                            .enumerate()
                            .map(|(i, o)| self.gemini(o, &format!("{path}/anyOf/{i}"), depth))
                            .collect::<Result<Vec<_>, _>>()?;
                        out.insert(key.clone(), Value::Array(options));
                    }
                }
                key if GEMINI_KEPT.contains(&key) => {
                    out.insert(key.to_owned(), value.clone());
                }
                _ => {}
            }
        }
        Ok(Value::Object(out))
    }
}

/// The `type` of a schema as a list (`"string"` → `["string"]`).
fn type_names(map: &Map<String, Value>) -> Vec<&str> {
    match map.get("type") {
        Some(Value::String(one)) => vec![one.as_str()],
        Some(Value::Array(many)) => many.iter().filter_map(Value::as_str).collect(),
        _ => Vec::new(),
    }
}

/// Adds `null` to what a schema accepts.
fn make_nullable(schema: &mut Value) {
    let Value::Object(map) = schema else { return };
    match map.get_mut("type") {
        Some(Value::String(one)) if one != "null" => {
            let one = one.clone();
            map.insert("type".to_owned(), json!([one, "null"]));
        }
        Some(Value::Array(many)) => {
            if !many.iter().any(|t| t == "null") {
                many.push(json!("null"));
            }
        }
        Some(_) => {}
        None => {
            if let Some(Value::Array(options)) = map.get_mut("anyOf") {
                if !options
                    .iter()
                    .any(|o| o.get("type") == Some(&json!("null")))
                {
                    options.push(json!({ "type": "null" }));
                }
            } else {
                // A `$ref` or an untyped schema: wrap it.
                let inner = Value::Object(std::mem::take(map));
                map.insert("anyOf".to_owned(), json!([inner, { "type": "null" }]));
            }
        }
    }
}

/// The stated annotations as MCP's hints (`readOnlyHint`, …); what is not stated is left out.
pub(crate) fn mcp_annotations(annotations: &crate::tool::ToolAnnotations) -> Map<String, Value> {
    let mut hints = Map::new();
    for (key, value) in [
        ("readOnlyHint", annotations.read_only),
        ("destructiveHint", annotations.destructive),
        ("idempotentHint", annotations.idempotent),
        ("openWorldHint", annotations.open_world),
    ] {
        if let Some(value) = value {
            hints.insert(key.to_owned(), Value::Bool(value));
        }
    }
    hints
}
