//! A typed [`Tool`] as a [`DynTool`]: its spec computed once (the page fields added when it
//! paginates), its JSON arguments checked and decoded once for both its estimate and its run.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

use async_trait::async_trait;
use serde_json::Value;

use super::schema::{deserialize_args, expected_fields, unknown_field};
use super::size_hint::SizeHint;
use super::spec::ToolSpec;
use super::{BoxFuture, CallArgs, DynTool, Tool, page};
use crate::tool::{ToolContext, ToolError, ToolOutput};

/// Wraps a typed tool as a [`DynTool`], computing its spec (and schema) once.
///
/// A tool whose limits set `paginate` gets `offset` and `limit` added to its input schema
/// (unless its arguments declare them themselves); the registry hands them to the tool as
/// [`ToolContext::page`] and takes them out of the arguments the tool decodes.
pub fn into_dyn<T: Tool>(tool: T) -> Arc<dyn DynTool> {
    let limits = tool.limits();
    let mut input_schema = tool.input_schema();
    let owns_page_fields = limits.paginate && !page::declares_fields(&input_schema);
    if owns_page_fields {
        page::add_fields(&mut input_schema);
    }
    let spec = ToolSpec {
        name: tool.name().into_owned(),
        description: tool.description().into_owned(),
        input_schema,
        limits,
        annotations: tool.annotations(),
        type_name: Some(std::any::type_name::<T>()),
        origin: None,
        needs: tool.needs(),
        title: None,
        // MCP's `outputSchema` describes an object: a schema of anything else is not stated.
        output_schema: tool
            .output_schema()
            .filter(|schema| schema.get("type").and_then(Value::as_str) == Some("object")),
        owns_page_fields,
    };
    Arc::new(Typed {
        tool,
        spec,
        estimates: AtomicBool::new(true),
    })
}

struct Typed<T> {
    tool: T,
    spec: ToolSpec,
    /// Cleared the first time [`Tool::size_hint`] says the tool never estimates: from then on
    /// no call pays for asking.
    estimates: AtomicBool,
}

#[async_trait]
impl<T: Tool> DynTool for Typed<T> {
    fn spec(&self) -> &ToolSpec {
        &self.spec
    }

    fn decode(&self, args: Value) -> Result<CallArgs, ToolError> {
        if let Some(unknown) = unknown_field(&self.spec.input_schema, &args) {
            return Err(ToolError::invalid_arguments(format!(
                "unknown field `{unknown}`; {}",
                expected_fields(&self.spec.input_schema)
            )));
        }
        match deserialize_args::<T::Args>(args) {
            Ok(args) => Ok(CallArgs::typed(args)),
            // The model gets the fields it should have sent, so it can retry in one step.
            Err(ToolError::InvalidArguments { message }) => Err(ToolError::InvalidArguments {
                message: format!("{message}; {}", expected_fields(&self.spec.input_schema)),
            }),
            Err(other) => Err(other),
        }
    }

    fn estimate<'a>(
        &'a self,
        args: &'a CallArgs,
        cx: &'a ToolContext,
    ) -> Option<BoxFuture<'a, Result<Option<SizeHint>, ToolError>>> {
        if !self.estimates.load(Ordering::Relaxed) {
            return None;
        }
        let args = args.downcast_ref::<T::Args>()?;
        match self.tool.size_hint(args, cx) {
            Some(estimate) => Some(estimate),
            None => {
                self.estimates.store(false, Ordering::Relaxed);
                None
            }
        }
    }

    async fn call(&self, args: CallArgs, cx: &ToolContext) -> Result<ToolOutput, ToolError> {
        let args = match args.as_json() {
            // Arguments that skipped `decode` (a caller of this trait by hand) are decoded here.
            Some(_) => self.decode(args.into_json()?)?,
            None => args,
        };
        self.tool.call(args.downcast::<T::Args>()?, cx).await
    }
}
