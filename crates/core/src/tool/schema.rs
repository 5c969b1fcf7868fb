//! Input schemas and arguments: schemars' schema of a type, closing it to unknown fields, and
//! decoding arguments with the path of what is wrong.

use schemars::JsonSchema;
use serde::de::DeserializeOwned;
use serde_json::Value;

use crate::tool::ToolError;

/// The fields an input schema expects, briefly: `the fields are path (string, required),
/// offset (integer)`.
pub(crate) fn expected_fields(schema: &Value) -> String {
    let Some(properties) = schema.get("properties").and_then(Value::as_object) else {
        return "the tool takes an object".to_owned();
    };
    if properties.is_empty() {
        return "the tool takes no arguments: pass {}".to_owned();
    }
    let required: Vec<&str> = schema
        .get("required")
        .and_then(Value::as_array)
        .map(|names| names.iter().filter_map(Value::as_str).collect())
        .unwrap_or_default();
    let describe = |name: &str, property: &Value, required: bool| {
        let kind = match property.get("type") {
            Some(Value::String(kind)) => kind.clone(),
            Some(Value::Array(kinds)) => kinds
                .iter()
                .filter_map(Value::as_str)
                .filter(|kind| *kind != "null")
                .collect::<Vec<_>>()
                .join(" or "),
            _ => String::new(),
        };
        let kind = if kind.is_empty() { "any" } else { &kind };
        if required {
            format!("{name} ({kind}, required)")
        } else {
            format!("{name} ({kind})")
        }
    };
    // Required fields first, in the schema's order (the declaration order), then the others.
    let mut fields: Vec<String> = required
        .iter()
        .filter_map(|name| Some(describe(name, properties.get(*name)?, true)))
        .collect();
    fields.extend(
        properties
            .iter()
            .filter(|(name, _)| !required.contains(&name.as_str()))
            .map(|(name, property)| describe(name, property, false)),
    );
    format!("the fields are {}", fields.join(", "))
}

/// Deserializes tool arguments, naming the field path in the error.
///
/// # Errors
///
/// [`ToolError::InvalidArguments`] with serde's message, prefixed by the path of the field
/// at fault (`options.limit: invalid type: string "ten", expected usize`).
pub(crate) fn deserialize_args<A: DeserializeOwned>(args: Value) -> Result<A, ToolError> {
    serde_path_to_error::deserialize(args).map_err(|error| {
        let path = error.path().to_string();
        let inner = error.into_inner();
        if path == "." {
            ToolError::invalid_arguments(inner.to_string())
        } else {
            ToolError::invalid_arguments(format!("{path}: {inner}"))
        }
    })
}

/// The JSON schema schemars generates for `A`, as a value.
pub fn schema_of<A: JsonSchema>() -> Value {
    schemars::schema_for!(A).to_value()
}

/// Closes an object schema (`"additionalProperties": false`) so that a call naming a field the
/// schema does not list is refused: what the macros do unless `allow_unknown_fields` is given.
///
/// A schema whose root is not a plain object of `properties` (one that already says what
/// additional properties may be, or composes subschemas with `allOf`, `anyOf`, `oneOf` or
/// `$ref`) is left as it is: its fields are not all listed in one place.
pub fn close_schema(mut schema: Value) -> Value {
    if let Some(object) = schema.as_object_mut()
        && object.get("properties").is_some_and(Value::is_object)
        && ![
            "additionalProperties",
            "patternProperties",
            "unevaluatedProperties",
            "allOf",
            "anyOf",
            "oneOf",
            "$ref",
        ]
        .iter()
        .any(|key| object.contains_key(*key))
    {
        object.insert("additionalProperties".to_owned(), Value::Bool(false));
    }
    schema
}

/// The first field of `args` a closed schema (`"additionalProperties": false`) does not list.
pub(super) fn unknown_field<'a>(schema: &Value, args: &'a Value) -> Option<&'a str> {
    if schema.get("additionalProperties") != Some(&Value::Bool(false)) {
        return None;
    }
    let properties = schema.get("properties")?.as_object()?;
    args.as_object()?
        .keys()
        .find(|key| !properties.contains_key(*key))
        .map(String::as_str)
}
