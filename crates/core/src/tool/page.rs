//! Pagination, in one place: the `offset` and `limit` a paginated tool takes, added to its input
//! schema, read strictly from a call's arguments and taken out of them before the tool decodes
//! the rest.

use serde_json::Value;

use super::error::ToolError;

/// A page request: the lines `offset..offset + limit` (0-based), or all from `offset` on.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Page {
    /// The first line to return, counting from 0.
    pub offset: usize,
    /// How many lines to return; `None` means as many as fit the budget.
    pub limit: Option<usize>,
}

/// Whether an input schema lists `offset` or `limit` itself: then they are the tool's own
/// fields, read by the page too but left in its arguments.
pub(crate) fn declares_fields(schema: &Value) -> bool {
    schema
        .get("properties")
        .and_then(Value::as_object)
        .is_some_and(|props| props.contains_key("offset") || props.contains_key("limit"))
}

/// Adds `offset` and `limit` to an object schema's properties.
pub(crate) fn add_fields(schema: &mut Value) {
    let Some(object) = schema.as_object_mut() else {
        return; // not an object schema: the registry refuses it with a clear error
    };
    let properties = object
        .entry("properties")
        .or_insert_with(|| Value::Object(serde_json::Map::new()));
    if let Value::Object(properties) = properties {
        properties.insert(
            "offset".into(),
            serde_json::json!({
                "type": "integer",
                "minimum": 0,
                "description": "The first line to return, counting from 0. Defaults to 0."
            }),
        );
        properties.insert(
            "limit".into(),
            serde_json::json!({
                "type": "integer",
                "minimum": 1,
                "description": "How many lines to return. Without it the whole result is \
                                returned when it fits the budget; when it does not, the reply \
                                says which offset and limit to use."
            }),
        );
    }
}

/// Reads the page a call asks for from its arguments (`offset`, `limit`; both optional), and
/// takes the two fields out of them when `take` (they are the framework's, not the tool's).
///
/// # Errors
///
/// [`ToolError::InvalidArguments`] for an `offset` or `limit` that is not a non-negative
/// integer, and for `limit: 0`.
pub(crate) fn read(args: &mut Value, take: bool) -> Result<Page, ToolError> {
    let number = |key: &str, args: &Value| match args.get(key) {
        None | Some(Value::Null) => Ok(None),
        Some(value) => value
            .as_u64()
            .map(|n| Some(usize::try_from(n).unwrap_or(usize::MAX)))
            .ok_or_else(|| {
                let shown: String = value.to_string().chars().take(40).collect();
                ToolError::invalid_arguments(format!(
                    "{key}: expected a non-negative integer, got {shown}"
                ))
            }),
    };
    let offset = number("offset", args)?.unwrap_or(0);
    let limit = number("limit", args)?;
    if limit == Some(0) {
        return Err(ToolError::invalid_arguments("limit: must be at least 1"));
    }
    if take && let Value::Object(map) = args {
        map.remove("offset");
        map.remove("limit");
    }
    Ok(Page { offset, limit })
}
