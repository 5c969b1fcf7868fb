//! The tool traits: [`Tool`] (typed, what authors and the macros implement) and [`DynTool`]
//! (object-safe, JSON in, what the registry stores).

use std::borrow::Cow;
use std::fmt;
use std::sync::Arc;
use std::time::Duration;

use async_trait::async_trait;
use schemars::JsonSchema;
use serde::de::DeserializeOwned;
use serde_json::Value;

use crate::context::ToolContext;
use crate::output::{ToolError, ToolOutput, ToolResult};

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

    /// The JSON schema of the input. By default, schemars' schema of [`Tool::Args`].
    fn input_schema(&self) -> Value {
        schema_of::<Self::Args>()
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

    /// Runs the call and renders it as the model would see it, without any budgeting.
    ///
    /// Use a [`Registry`](crate::Registry) to get budgeted results.
    async fn invoke(&self, args: Value, cx: &ToolContext) -> ToolResult {
        let (content, is_error, error_kind) = match self.call_json(args, cx).await {
            Ok(output) => (output.text, false, None),
            Err(error) => (error.model_text(), true, Some(error.kind())),
        };
        let original_chars = content.chars().count();
        ToolResult {
            call_id: cx.call_id().to_owned(),
            tool: self.spec().name.clone(),
            meta: crate::output::ResultMeta {
                allowance: cx.budget(),
                initial_allowance: cx.budget(),
                original_chars,
                original_lines: crate::trim::line_count(&content),
                error_kind,
                ..Default::default()
            },
            content,
            is_error,
        }
    }
}

/// Wraps a typed tool as a [`DynTool`], computing its spec (and schema) once.
pub fn into_dyn<T: Tool>(tool: T) -> Arc<dyn DynTool> {
    let spec = ToolSpec {
        name: tool.name().into_owned(),
        description: tool.description().into_owned(),
        input_schema: tool.input_schema(),
        limits: tool.limits(),
        type_name: Some(std::any::type_name::<T>()),
    };
    Arc::new(Typed { tool, spec })
}

struct Typed<T> {
    tool: T,
    spec: ToolSpec,
}

#[async_trait]
impl<T: Tool> DynTool for Typed<T> {
    fn spec(&self) -> &ToolSpec {
        &self.spec
    }

    async fn call_json(&self, args: Value, cx: &ToolContext) -> Result<ToolOutput, ToolError> {
        let args = deserialize_args::<T::Args>(args)?;
        self.tool.call(args, cx).await
    }
}

/// Deserializes tool arguments, naming the field path in the error.
///
/// # Errors
///
/// [`ToolError::InvalidArguments`] with serde's message, prefixed by the path of the field
/// at fault (`options.limit: invalid type: string "ten", expected usize`).
pub fn deserialize_args<A: DeserializeOwned>(args: Value) -> Result<A, ToolError> {
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

/// What the registry and the model know of a tool.
#[derive(Clone, PartialEq)]
#[non_exhaustive]
pub struct ToolSpec {
    /// The name the model calls it by.
    pub name: String,
    /// What it does.
    pub description: String,
    /// The JSON schema of its input; its root is an object.
    pub input_schema: Value,
    /// Its limits.
    pub limits: ToolLimits,
    /// The Rust type behind it, when known (named in duplicate-name errors).
    pub type_name: Option<&'static str>,
}

impl ToolSpec {
    /// A spec for a [`DynTool`] implemented by hand.
    pub fn new(
        name: impl Into<String>,
        description: impl Into<String>,
        input_schema: Value,
    ) -> Self {
        ToolSpec {
            name: name.into(),
            description: description.into(),
            input_schema,
            limits: ToolLimits::default(),
            type_name: None,
        }
    }

    /// Sets the limits.
    #[must_use]
    pub fn with_limits(mut self, limits: ToolLimits) -> Self {
        self.limits = limits;
        self
    }
}

impl fmt::Debug for ToolSpec {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ToolSpec")
            .field("name", &self.name)
            .field("description", &self.description)
            .field("limits", &self.limits)
            .finish_non_exhaustive()
    }
}

/// A tool's own limits. Each applies on top of the registry's budget, never instead of it.
#[derive(Debug, Clone, Copy, PartialEq)]
#[non_exhaustive]
pub struct ToolLimits {
    /// The most chars one result of this tool may have, whatever the batch budget.
    /// `None` (the default) means the tool has no cap of its own.
    pub max_result_chars: Option<usize>,
    /// The most lines one result may have; longer results are cut by the lines stage.
    /// `None` (the default) means no line limit.
    pub max_result_lines: Option<usize>,
    /// The share of a trimmed result kept from the top, in `0.0..=1.0`. By default 0.3;
    /// `read_file` keeps the head (1.0), `run_command` favours the tail.
    pub head_ratio: f64,
    /// Whether the tool takes `offset` and `limit` and receives a [`Page`](crate::Page).
    pub paginate: bool,
    /// How long one call may run. `None` (the default) means the registry's default timeout.
    pub timeout: Option<Duration>,
    /// Whether history microcompaction must keep this tool's results (write and exec tools).
    pub preserve: bool,
}

impl Default for ToolLimits {
    fn default() -> Self {
        ToolLimits {
            max_result_chars: None,
            max_result_lines: None,
            head_ratio: crate::trim::TrimStyle::DEFAULT_HEAD_RATIO,
            paginate: false,
            timeout: None,
            preserve: false,
        }
    }
}

impl ToolLimits {
    /// Sets [`max_result_chars`](Self::max_result_chars).
    #[must_use]
    pub fn with_max_result_chars(mut self, max: Option<usize>) -> Self {
        self.max_result_chars = max;
        self
    }

    /// Sets [`max_result_lines`](Self::max_result_lines).
    #[must_use]
    pub fn with_max_result_lines(mut self, max: Option<usize>) -> Self {
        self.max_result_lines = max;
        self
    }

    /// Sets [`head_ratio`](Self::head_ratio).
    #[must_use]
    pub fn with_head_ratio(mut self, ratio: f64) -> Self {
        self.head_ratio = ratio;
        self
    }

    /// Sets [`paginate`](Self::paginate).
    #[must_use]
    pub fn with_paginate(mut self, paginate: bool) -> Self {
        self.paginate = paginate;
        self
    }

    /// Sets [`timeout`](Self::timeout).
    #[must_use]
    pub fn with_timeout(mut self, timeout: Option<Duration>) -> Self {
        self.timeout = timeout;
        self
    }

    /// Sets [`preserve`](Self::preserve).
    #[must_use]
    pub fn with_preserve(mut self, preserve: bool) -> Self {
        self.preserve = preserve;
        self
    }

    /// The trim style these limits ask for.
    pub fn trim_style(&self) -> crate::trim::TrimStyle {
        crate::trim::TrimStyle::head_tail(self.head_ratio).with_max_lines(self.max_result_lines)
    }
}
