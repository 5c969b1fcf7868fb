//! A typed [`Tool`] as a [`DynTool`]: its spec computed once, its JSON arguments checked and
//! decoded, the framework's page fields added and stripped.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

use async_trait::async_trait;
use serde_json::Value;

use super::schema::{deserialize_args, expected_fields, unknown_field};
use super::size_hint::SizeHint;
use super::spec::ToolSpec;
use super::{BoxFuture, DynTool, Tool};
use crate::context::ToolContext;
use crate::output::{ToolError, ToolOutput};

/// Wraps a typed tool as a [`DynTool`], computing its spec (and schema) once.
///
/// A tool whose limits set `paginate` gets `offset` and `limit` added to its input schema
/// (unless its arguments declare them themselves); the registry hands them to the tool as
/// [`ToolContext::page`] and strips them from the arguments it deserializes.
pub fn into_dyn<T: Tool>(tool: T) -> Arc<dyn DynTool> {
    let limits = tool.limits();
    let mut input_schema = tool.input_schema();
    let declares_page = declares_page_fields(&input_schema);
    if limits.paginate && !declares_page {
        add_page_properties(&mut input_schema);
    }
    let spec = ToolSpec {
        name: tool.name().into_owned(),
        description: tool.description().into_owned(),
        input_schema,
        limits,
        annotations: tool.annotations(),
        type_name: Some(std::any::type_name::<T>()),
        needs: tool.needs(),
    };
    Arc::new(Typed {
        tool,
        spec,
        strip_page: limits.paginate && !declares_page,
        estimates: AtomicBool::new(true),
    })
}

struct Typed<T> {
    tool: T,
    spec: ToolSpec,
    /// Whether `offset` and `limit` belong to the framework, not to `T::Args`.
    strip_page: bool,
    /// Cleared the first time [`Tool::size_hint`] says the tool never estimates: from then on
    /// no call pays for asking.
    estimates: AtomicBool,
}

impl<T: Tool> Typed<T> {
    /// The typed arguments of `args`, without the framework's page fields.
    fn args_of(&self, mut args: Value) -> Result<T::Args, ToolError> {
        if let Some(unknown) = unknown_field(&self.spec.input_schema, &args) {
            return Err(ToolError::invalid_arguments(format!(
                "unknown field `{unknown}`; {}",
                expected_fields(&self.spec.input_schema)
            )));
        }
        if self.strip_page
            && let Value::Object(map) = &mut args
        {
            map.remove("offset");
            map.remove("limit");
        }
        deserialize_args::<T::Args>(args).map_err(|error| match error {
            // The model gets the fields it should have sent, so it can retry in one step.
            ToolError::InvalidArguments { message } => ToolError::InvalidArguments {
                message: format!("{message}; {}", expected_fields(&self.spec.input_schema)),
            },
            other => other,
        })
    }
}

#[async_trait]
impl<T: Tool> DynTool for Typed<T> {
    fn spec(&self) -> &ToolSpec {
        &self.spec
    }

    async fn call_json(&self, args: Value, cx: &ToolContext) -> Result<ToolOutput, ToolError> {
        let args = self.args_of(args)?;
        self.tool.call(args, cx).await
    }

    fn estimate<'a>(
        &'a self,
        args: &'a Value,
        cx: &'a ToolContext,
    ) -> Option<BoxFuture<'a, Result<Option<SizeHint>, ToolError>>> {
        if !self.estimates.load(Ordering::Relaxed) {
            return None;
        }
        // Arguments that do not deserialize give no estimate; the call reports them.
        let args = self.args_of(args.clone()).ok()?;
        Some(Box::pin(async move {
            match self.tool.size_hint(&args, cx) {
                Some(estimate) => estimate.await,
                None => {
                    self.estimates.store(false, Ordering::Relaxed);
                    Ok(None)
                }
            }
        }))
    }
}

fn declares_page_fields(schema: &Value) -> bool {
    schema
        .get("properties")
        .and_then(Value::as_object)
        .is_some_and(|props| props.contains_key("offset") || props.contains_key("limit"))
}

fn add_page_properties(schema: &mut Value) {
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
