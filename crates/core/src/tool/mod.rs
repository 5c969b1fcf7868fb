//! The tool traits: [`Tool`] (typed, what authors and the macros implement) and [`DynTool`]
//! (object-safe, JSON in, what the registry stores).

use std::borrow::Cow;
use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;

use async_trait::async_trait;
use schemars::JsonSchema;
use serde::de::DeserializeOwned;
use serde_json::Value;

use crate::context::{StateNeed, ToolContext};
use crate::output::{ToolError, ToolOutput, ToolResult};

mod args_tool;
mod schema;
mod size_hint;
mod spec;
mod typed;

pub use args_tool::{ArgsTool, ToolArgs};
pub(crate) use schema::expected_fields;
pub use schema::{close_schema, deserialize_args, schema_of};
pub use size_hint::SizeHint;
pub use spec::{ToolAnnotations, ToolLimits, ToolSpec};
pub use typed::into_dyn;

/// A typed tool.
///
/// ```
/// use toolsmith::{Tool, ToolContext, ToolError, ToolLimits, ToolOutput};
///
/// /// The arguments; their doc comments become the schema's descriptions.
/// #[derive(serde::Deserialize, schemars::JsonSchema)]
/// struct ShoutArgs {
///     /// The text to shout.
///     text: String,
/// }
///
/// struct Shout;
///
/// #[async_trait::async_trait]
/// impl Tool for Shout {
///     type Args = ShoutArgs;
///
///     fn name(&self) -> std::borrow::Cow<'static, str> {
///         "shout".into()
///     }
///
///     fn description(&self) -> std::borrow::Cow<'static, str> {
///         "Returns the text in capitals.".into()
///     }
///
///     fn limits(&self) -> ToolLimits {
///         ToolLimits::default().with_max_result_chars(Some(1_000))
///     }
///
///     async fn call(&self, args: ShoutArgs, _cx: &ToolContext) -> Result<ToolOutput, ToolError> {
///         Ok(args.text.to_uppercase().into())
///     }
/// }
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[async_trait]
pub trait Tool: Send + Sync + 'static {
    /// The arguments the model passes, deserialized from the call's JSON input.
    type Args: DeserializeOwned + JsonSchema + Send + 'static;

    /// The tool's name, as the model calls it: `^[a-zA-Z0-9_-]{1,64}$`.
    fn name(&self) -> Cow<'static, str>;

    /// What the tool does, for the model.
    fn description(&self) -> Cow<'static, str>;

    /// The tool's limits. By default: no cap of its own, head ratio 0.3, not paginated, the
    /// registry's timeout, not preserved.
    fn limits(&self) -> ToolLimits {
        ToolLimits::default()
    }

    /// What the tool does to the world. By default nothing is stated, so the registry runs its
    /// calls one at a time: return [`ToolAnnotations::with_read_only`] for a tool that changes
    /// nothing to let its calls run concurrently.
    fn annotations(&self) -> ToolAnnotations {
        ToolAnnotations::default()
    }

    /// The JSON schema of the input. By default, schemars' schema of [`Tool::Args`].
    fn input_schema(&self) -> Value {
        schema_of::<Self::Args>()
    }

    /// What the tool needs in the registry's state ([`ToolContext::state`]): the registry
    /// refuses to build without it. By default nothing.
    fn needs(&self) -> Vec<StateNeed> {
        Vec::new()
    }

    /// Estimates the size of the result before doing the work (a file's length from its
    /// metadata).
    ///
    /// The registry asks every call of a batch for its estimate before any call runs, and
    /// plans the allowances over them ([`BudgetPolicy::planned_allowances`](crate::BudgetPolicy::planned_allowances)):
    /// a call that will produce a lot gets what the small ones leave, before it runs. A call
    /// whose estimate exceeds its planned allowance is refused with [`ToolError::TooLarge`] —
    /// what it would cost and what to ask for instead — before anything is read (unless it
    /// gave a `limit`: a paginated call with a limit asks for a part on purpose, and fits its
    /// page to its allowance).
    ///
    /// Estimate the *output*: what `call` would return, line numbers and all, for the page
    /// asked for ([`ToolContext::page`]). `None` (the default) means the tool never estimates:
    /// the registry then stops asking and costs nothing per call. A tool that does returns
    /// `Some(Box::pin(async move { … }))`, whose `Ok(None)` means no estimate this time. An
    /// error, or no answer within the registry's hint timeout, counts as no estimate: the call
    /// runs and reports its own error. The registry's post-trim still bounds whatever `call`
    /// returns.
    fn size_hint<'a>(
        &'a self,
        _args: &'a Self::Args,
        _cx: &'a ToolContext,
    ) -> Option<BoxFuture<'a, Result<Option<SizeHint>, ToolError>>> {
        None
    }

    /// Runs the call.
    ///
    /// # Errors
    ///
    /// Any [`ToolError`]; the registry turns it into an `is_error` result for the model.
    async fn call(&self, args: Self::Args, cx: &ToolContext) -> Result<ToolOutput, ToolError>;
}

/// The object-safe form of a tool: JSON in, output out. The registry stores these.
///
/// Every [`Tool`] becomes one through [`into_dyn`]; implement it directly for tools whose
/// schema is only known at run time (a proxy to a remote MCP server, say).
#[async_trait]
pub trait DynTool: Send + Sync + 'static {
    /// The tool's spec: name, description, input schema, limits.
    fn spec(&self) -> &ToolSpec;

    /// Runs the call on JSON arguments.
    ///
    /// # Errors
    ///
    /// [`ToolError::InvalidArguments`] when `args` do not match the schema, and whatever the
    /// tool itself fails with.
    async fn call_json(&self, args: Value, cx: &ToolContext) -> Result<ToolOutput, ToolError>;

    /// Estimates the output of a call on `args` before it runs: see [`Tool::size_hint`].
    ///
    /// `None` (the default) means this call gives no estimate.
    fn estimate<'a>(
        &'a self,
        _args: &'a Value,
        _cx: &'a ToolContext,
    ) -> Option<BoxFuture<'a, Result<Option<SizeHint>, ToolError>>> {
        None
    }

    /// Runs the call and renders it as the model would see it, without any budgeting.
    ///
    /// Use a [`Registry`](crate::Registry) to get budgeted results.
    async fn invoke(&self, args: Value, cx: &ToolContext) -> ToolResult {
        let output = match self.call_json(args, cx).await {
            Ok(output) => output.collect(cx.allowance()).await,
            Err(error) => Err(error),
        };
        let (content, error_kind) = match output {
            Ok(text) => (text, None),
            Err(error) => (error.model_text(), Some(error.kind())),
        };
        let original_chars = content.chars().count();
        ToolResult {
            call_id: cx.call_id().to_owned(),
            tool: self.spec().name.clone(),
            meta: crate::output::ResultMeta {
                allowance: cx.allowance(),
                initial_allowance: cx.allowance(),
                original_chars,
                original_lines: crate::trim::line_count(&content),
                error_kind,
                ..Default::default()
            },
            content,
        }
    }
}

/// `tool` under a spec changed by `edit` (a longer description, other limits, a new name),
/// running as before.
///
/// ```
/// use toolsmith::{DynTool, ToolOutput, tool, with_spec};
///
/// /// Says hello.
/// #[tool]
/// async fn hello() -> Result<ToolOutput, toolsmith::ToolError> {
///     Ok(ToolOutput::text("hello"))
/// }
///
/// let tool = with_spec(toolsmith::into_dyn(hello()), |spec| {
///     spec.description.push_str(" Use it to greet.");
/// });
/// assert_eq!(tool.spec().description, "Says hello. Use it to greet.");
/// ```
pub fn with_spec(tool: Arc<dyn DynTool>, edit: impl FnOnce(&mut ToolSpec)) -> Arc<dyn DynTool> {
    let mut spec = tool.spec().clone();
    edit(&mut spec);
    Arc::new(Respecified { tool, spec })
}

/// A tool under a spec of its own.
struct Respecified {
    tool: Arc<dyn DynTool>,
    spec: ToolSpec,
}

#[async_trait]
impl DynTool for Respecified {
    fn spec(&self) -> &ToolSpec {
        &self.spec
    }

    async fn call_json(&self, args: Value, cx: &ToolContext) -> Result<ToolOutput, ToolError> {
        self.tool.call_json(args, cx).await
    }

    fn estimate<'a>(
        &'a self,
        args: &'a Value,
        cx: &'a ToolContext,
    ) -> Option<BoxFuture<'a, Result<Option<SizeHint>, ToolError>>> {
        self.tool.estimate(args, cx)
    }
}

/// A boxed, sendable future, as [`ToolArgs`] returns.
pub type BoxFuture<'a, T> = Pin<Box<dyn Future<Output = T> + Send + 'a>>;
