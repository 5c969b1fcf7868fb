//! Provider dialects of the standard tools' schemas: golden files, and OpenAI strict mode's
//! rules checked property by property.
//!
//! After an intended change, regenerate the golden files with
//! `TOOLSMITH_BLESS=1 cargo test --test suite test_schema::` and review their diff.

use std::path::Path;

use serde_json::{Value, json};
use toolsmith::Registry;
use toolsmith::schema::{Dialect, DialectError};
use toolsmith::tool::ToolSpec;
use toolsmith_std::Sandbox;

fn registry() -> Registry {
    toolsmith_std::register(Registry::builder())
        .state(Sandbox::new(".").unwrap())
        .build()
        .unwrap()
}

#[test]
fn each_dialect_matches_its_golden_file() {
    let registry = registry();
    for dialect in Dialect::ALL {
        let rendered = Value::Array(registry.schemas(dialect).unwrap());
        let path = Path::new("tests/golden").join(format!("{}.json", dialect.name()));
        let text = serde_json::to_string_pretty(&rendered).unwrap() + "\n";
        if std::env::var_os("TOOLSMITH_BLESS").is_some() {
            std::fs::write(&path, &text).unwrap();
            continue;
        }
        let golden = std::fs::read_to_string(&path).unwrap_or_else(|_| {
            panic!("{} is missing; run with TOOLSMITH_BLESS=1", path.display())
        });
        assert_eq!(
            text,
            golden,
            "{} differs from the golden file",
            dialect.name()
        );
    }
}

/// Keywords strict mode rejects anywhere.
const FORBIDDEN: &[&str] = &[
    "$schema",
    "default",
    "format",
    "minLength",
    "maxLength",
    "pattern",
    "minimum",
    "maximum",
    "multipleOf",
    "minItems",
    "maxItems",
    "uniqueItems",
    "oneOf",
    "allOf",
    "not",
    "patternProperties",
];

/// Checks one schema node and everything under it; `optional` says whether the source schema
/// had this property as optional (then it must accept null).
fn check_strict(node: &Value, path: &str, optional: bool, problems: &mut Vec<String>) {
    let Value::Object(map) = node else { return };
    for key in FORBIDDEN {
        if map.contains_key(*key) {
            problems.push(format!("{path}: forbidden keyword `{key}`"));
        }
    }
    if optional {
        let nullable = match map.get("type") {
            Some(Value::Array(types)) => types.contains(&json!("null")),
            _ => map
                .get("anyOf")
                .and_then(Value::as_array)
                .is_some_and(|options| options.iter().any(|o| o["type"] == "null")),
        };
        if !nullable {
            problems.push(format!("{path}: an optional property must accept null"));
        }
    }
    let is_object = map.contains_key("properties")
        || map.get("type") == Some(&json!("object"))
        || map
            .get("type")
            .and_then(Value::as_array)
            .is_some_and(|t| t.contains(&json!("object")));
    if is_object {
        if map.get("additionalProperties") != Some(&Value::Bool(false)) {
            problems.push(format!("{path}: additionalProperties must be false"));
        }
        let properties = map.get("properties").and_then(Value::as_object);
        let required: Vec<&str> = map
            .get("required")
            .and_then(Value::as_array)
            .map(|r| r.iter().filter_map(Value::as_str).collect())
            .unwrap_or_default();
        for name in properties.into_iter().flat_map(|p| p.keys()) {
            if !required.contains(&name.as_str()) {
                problems.push(format!("{path}: property `{name}` is not in required"));
            }
        }
    }
    for (key, value) in map {
        match key.as_str() {
            "properties" => {
                for (name, prop) in value.as_object().into_iter().flatten() {
                    check_strict(prop, &format!("{path}/properties/{name}"), false, problems);
                }
            }
            "items" => check_strict(value, &format!("{path}/items"), false, problems),
            "anyOf" => {
                for (i, option) in value.as_array().into_iter().flatten().enumerate() {
                    check_strict(option, &format!("{path}/anyOf/{i}"), false, problems);
                }
            }
            "$defs" => {
                for (name, def) in value.as_object().into_iter().flatten() {
                    check_strict(def, &format!("{path}/$defs/{name}"), false, problems);
                }
            }
            _ => {}
        }
    }
}

/// The optional properties of each object of the source schema, by path.
fn optional_paths(node: &Value, path: &str, out: &mut Vec<String>) {
    let Value::Object(map) = node else { return };
    if let Some(properties) = map.get("properties").and_then(Value::as_object) {
        let required: Vec<&str> = map
            .get("required")
            .and_then(Value::as_array)
            .map(|r| r.iter().filter_map(Value::as_str).collect())
            .unwrap_or_default();
        for (name, prop) in properties {
            let prop_path = format!("{path}/properties/{name}");
            if !required.contains(&name.as_str()) {
                out.push(prop_path.clone());
            }
            optional_paths(prop, &prop_path, out);
        }
    }
}

fn pointer<'a>(root: &'a Value, path: &str) -> Option<&'a Value> {
    root.pointer(path.trim_start_matches('#'))
}

#[test]
fn every_openai_schema_satisfies_strict_mode() {
    let registry = registry();
    for tool in registry.tools() {
        let spec = tool.spec();
        let rendered = Dialect::OpenAiStrict.render(spec).unwrap();
        assert_eq!(rendered["function"]["strict"], true);
        assert_eq!(rendered["function"]["name"], spec.name.as_str());
        let parameters = &rendered["function"]["parameters"];
        let mut problems = Vec::new();
        check_strict(parameters, "#", false, &mut problems);
        let mut optional = Vec::new();
        optional_paths(&spec.input_schema, "#", &mut optional);
        for path in optional {
            let node = pointer(parameters, &path).expect("every property is kept");
            check_strict(node, &path, true, &mut problems);
        }
        assert!(problems.is_empty(), "{}: {problems:#?}", spec.name);
    }
}

#[test]
fn inexpressible_schemas_are_errors_naming_tool_and_keyword() {
    let one_of = ToolSpec::new(
        "pick",
        "Picks.",
        json!({ "type": "object", "properties": { "x": { "oneOf": [{ "type": "string" }, { "type": "integer" }] } } }),
    );
    let error: DialectError = Dialect::OpenAiStrict.render(&one_of).unwrap_err();
    assert_eq!(
        error.to_string(),
        "tool `pick` cannot be expressed in the openai dialect: `oneOf` at #/properties/x (strict \
         mode does not support it)"
    );
    let map = ToolSpec::new(
        "tags",
        "Sets tags.",
        json!({ "type": "object", "properties": { "tags": { "type": "object", "additionalProperties": { "type": "string" } } } }),
    );
    let error = Dialect::OpenAiStrict.render(&map).unwrap_err();
    assert_eq!(
        (error.keyword.as_str(), error.path.as_str()),
        ("additionalProperties", "#/properties/tags")
    );
    let recursive = ToolSpec::new(
        "tree",
        "A tree.",
        json!({ "type": "object", "properties": { "root": { "$ref": "#/$defs/Node" } },
                "$defs": { "Node": { "type": "object", "properties": { "child": { "$ref": "#/$defs/Node" } } } } }),
    );
    let error = Dialect::Gemini.render(&recursive).unwrap_err();
    assert_eq!(error.keyword, "$ref");
    assert!(error.to_string().contains("recursive"));
    // The same schemas are fine where the dialect can express them.
    assert!(Dialect::Anthropic.render(&map).is_ok() && Dialect::Mcp.render(&recursive).is_ok());
}

#[test]
fn gemini_inlines_definitions_and_uses_nullable() {
    let spec = ToolSpec::new(
        "find",
        "Finds.",
        json!({ "type": "object", "required": ["query"], "properties": {
            "query": { "type": "string", "format": "regex" },
            "limit": { "type": ["integer", "null"], "format": "uint", "minimum": 0 },
            "filter": { "anyOf": [{ "$ref": "#/$defs/Filter" }, { "type": "null" }] }
        }, "$defs": { "Filter": { "type": "object", "properties": { "ext": { "type": "string" } } } } }),
    );
    let rendered = Dialect::Gemini.render(&spec).unwrap();
    assert_eq!(
        rendered["parameters"],
        json!({ "type": "OBJECT", "required": ["query"], "properties": {
            "query": { "type": "STRING" },
            "limit": { "type": "INTEGER", "nullable": true, "minimum": 0 },
            "filter": { "type": "OBJECT", "nullable": true, "properties": { "ext": { "type": "STRING" } } }
        } })
    );
}
