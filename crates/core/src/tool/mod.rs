//! Writing tools: the traits ([`Tool`], typed, what authors and the macros implement;
//! [`DynTool`], object-safe, JSON in, what the registry stores), what a call sees
//! ([`ToolContext`]), and what it returns ([`ToolOutput`], [`ToolError`]).

use std::any::Any;
use std::borrow::Cow;
use std::fmt;
use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;

use async_trait::async_trait;
use schemars::JsonSchema;
use serde::de::DeserializeOwned;
use serde_json::Value;

mod args_tool;
mod context;
mod error;
mod media;
mod output;
pub(crate) mod page;
mod schema;
mod size_hint;
mod spec;
mod typed;

pub use crate::names::is_valid_tool_name;
pub use args_tool::{ArgsTool, ToolArgs};
pub use context::{Audience, CallSummary, Event, LogLevel, State, StateNeed, ToolContext};
pub use error::{ErrorKind, ToolError};
pub(crate) use media::left_out_note;
#[cfg(feature = "mcp")]
pub(crate) use media::problem_of;
pub use media::{Media, MediaKind, MediaLimits};
pub(crate) use output::{Body, OutputParts};
pub use output::{Json, OutputStream, ToolOutput};
pub use page::Page;
pub(crate) use schema::expected_fields;
pub use schema::{close_schema, schema_of};
pub use size_hint::SizeHint;
pub use spec::{OverCap, ToolAnnotations, ToolLimits, ToolSpec};
pub use typed::into_dyn;

/// `#[derive(Tool)]`: a struct of arguments as a tool (see the crate docs), beside the trait.
#[cfg(feature = "macros")]
pub use toolsmith_macros::Tool;

/// A typed tool.
///
/// ```
/// use toolsmith::{Tool, ToolContext, ToolError, ToolOutput};
/// use toolsmith::tool::ToolLimits;
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
    type Args: DeserializeOwned + JsonSchema + Send + Sync + 'static;

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

    /// The JSON schema of the tool's structured result, when it returns JSON of one shape
    /// (`#[tool]` states it for a function that returns `Json<T>`). Only an object schema is
    /// kept (MCP's `outputSchema` describes an object); an MCP server lists it, and sends the
    /// result whole as `structuredContent`. By default none.
    fn output_schema(&self) -> Option<Value> {
        None
    }

    /// Estimates the size of the result before doing the work (a file's length from its
    /// metadata).
    ///
    /// The registry asks every call of a batch for its estimate before any call runs, and
    /// plans the allowances over them ([`BudgetPolicy::plan`](crate::BudgetPolicy::plan)):
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
/// schema is only known at run time (a proxy to a remote MCP server, say). A call goes through
/// it in up to three steps, each given what the one before produced, so arguments are checked
/// and decoded once: [`decode`](Self::decode) the JSON arguments, [`estimate`](Self::estimate)
/// the output before any call of the batch runs, [`call`](Self::call).
///
/// ```
/// use toolsmith::tool::{CallArgs, DynTool, ToolSpec};
/// use toolsmith::{ToolContext, ToolError, ToolOutput};
///
/// /// Echoes its arguments back, whatever they are.
/// struct Echo(ToolSpec);
///
/// #[async_trait::async_trait]
/// impl DynTool for Echo {
///     fn spec(&self) -> &ToolSpec {
///         &self.0
///     }
///
///     async fn call(&self, args: CallArgs, _cx: &ToolContext) -> Result<ToolOutput, ToolError> {
///         ToolOutput::json(&args.into_json()?)
///     }
/// }
///
/// let echo = Echo(ToolSpec::new("echo", "Echoes.", serde_json::json!({ "type": "object" })));
/// let registry = toolsmith::Registry::builder().dyn_tool(std::sync::Arc::new(echo)).build()?;
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[async_trait]
pub trait DynTool: Send + Sync + 'static {
    /// The tool's spec: name, description, input schema, limits.
    fn spec(&self) -> &ToolSpec;

    /// Checks a call's arguments (a JSON object, without the page fields the framework added)
    /// and decodes them, once: what [`estimate`](Self::estimate) and [`call`](Self::call) are
    /// given. By default the JSON as it is.
    ///
    /// # Errors
    ///
    /// [`ToolError::InvalidArguments`] when `args` do not match the schema, naming the field.
    fn decode(&self, args: Value) -> Result<CallArgs, ToolError> {
        Ok(CallArgs::json(args))
    }

    /// Estimates the output of a call before it runs: see [`Tool::size_hint`].
    ///
    /// `None` (the default) means this call gives no estimate.
    fn estimate<'a>(
        &'a self,
        _args: &'a CallArgs,
        _cx: &'a ToolContext,
    ) -> Option<BoxFuture<'a, Result<Option<SizeHint>, ToolError>>> {
        None
    }

    /// Runs the call on the arguments [`decode`](Self::decode) gave.
    ///
    /// # Errors
    ///
    /// Whatever the tool fails with.
    async fn call(&self, args: CallArgs, cx: &ToolContext) -> Result<ToolOutput, ToolError>;
}

/// A call's arguments as its tool decoded them ([`DynTool::decode`]): the JSON object as it came,
/// or a typed tool's `Args` value.
pub struct CallArgs(Decoded);

enum Decoded {
    Json(Value),
    Typed(Box<dyn Any + Send + Sync>),
}

impl fmt::Debug for CallArgs {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match &self.0 {
            Decoded::Json(value) => f.debug_tuple("CallArgs").field(value).finish(),
            Decoded::Typed(_) => f.write_str("CallArgs(..)"),
        }
    }
}

impl CallArgs {
    /// Arguments as JSON.
    pub fn json(args: Value) -> Self {
        CallArgs(Decoded::Json(args))
    }

    /// Arguments decoded into a value of a tool's own type.
    pub fn typed<T: Any + Send + Sync>(args: T) -> Self {
        CallArgs(Decoded::Typed(Box::new(args)))
    }

    /// The JSON arguments, when they were not decoded into a type.
    pub fn as_json(&self) -> Option<&Value> {
        match &self.0 {
            Decoded::Json(value) => Some(value),
            Decoded::Typed(_) => None,
        }
    }

    /// The JSON arguments.
    ///
    /// # Errors
    ///
    /// [`ToolError::InvalidArguments`] when they were decoded into a type: they were decoded by
    /// another tool's [`decode`](DynTool::decode).
    pub fn into_json(self) -> Result<Value, ToolError> {
        match self.0 {
            Decoded::Json(value) => Ok(value),
            Decoded::Typed(_) => Err(misdecoded()),
        }
    }

    /// The arguments as the `T` a typed tool decoded them into.
    pub fn downcast_ref<T: Any>(&self) -> Option<&T> {
        match &self.0 {
            Decoded::Typed(args) => args.downcast_ref(),
            Decoded::Json(_) => None,
        }
    }

    /// Takes the arguments as the `T` a typed tool decoded them into.
    ///
    /// # Errors
    ///
    /// [`ToolError::InvalidArguments`] when they are JSON or another type: they were not
    /// decoded by this tool's [`decode`](DynTool::decode).
    pub fn downcast<T: Any>(self) -> Result<T, ToolError> {
        match self.0 {
            Decoded::Typed(args) => args.downcast().map(|args| *args).map_err(|_| misdecoded()),
            Decoded::Json(_) => Err(misdecoded()),
        }
    }
}

fn misdecoded() -> ToolError {
    ToolError::invalid_arguments(
        "the arguments were decoded for another tool; pass a call's arguments to the `decode` of \
         the tool that runs it",
    )
}

/// `tool` under a spec changed by `edit` (a longer description, other limits, a new name),
/// running as before.
///
/// ```
/// use toolsmith::{ToolOutput, tool};
/// use toolsmith::tool::{DynTool, with_spec};
///
/// /// Says hello.
/// #[tool]
/// async fn hello() -> Result<ToolOutput, toolsmith::ToolError> {
///     Ok(ToolOutput::text("hello"))
/// }
///
/// let tool = with_spec(toolsmith::tool::into_dyn(hello()), |spec| {
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

    fn decode(&self, args: Value) -> Result<CallArgs, ToolError> {
        self.tool.decode(args)
    }

    fn estimate<'a>(
        &'a self,
        args: &'a CallArgs,
        cx: &'a ToolContext,
    ) -> Option<BoxFuture<'a, Result<Option<SizeHint>, ToolError>>> {
        self.tool.estimate(args, cx)
    }

    async fn call(&self, args: CallArgs, cx: &ToolContext) -> Result<ToolOutput, ToolError> {
        self.tool.call(args, cx).await
    }
}

/// A boxed, sendable future, as [`ToolArgs`] returns.
pub type BoxFuture<'a, T> = Pin<Box<dyn Future<Output = T> + Send + 'a>>;
