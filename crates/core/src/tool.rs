//! The tool traits: [`Tool`] (typed, what authors and the macros implement) and [`DynTool`]
//! (object-safe, JSON in, what the registry stores).

use std::borrow::Cow;
use std::fmt;
use std::future::Future;
use std::marker::PhantomData;
use std::pin::Pin;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use async_trait::async_trait;
use schemars::JsonSchema;
use serde::de::DeserializeOwned;
use serde_json::Value;

use crate::context::ToolContext;
use crate::output::{ToolError, ToolOutput, ToolResult};
use crate::tokens::{CharsPerToken, TokenCounter};
use crate::trim::grouped;

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
        needs: Vec::new(),
    };
    Arc::new(Typed {
        tool,
        spec,
        strip_page: limits.paginate && !declares_page,
        estimates: AtomicBool::new(true),
    })
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

/// An estimate of a result's size, made before the work is done.
///
/// ```
/// use toolsmith::SizeHint;
///
/// // A 299,316-byte file of 4,000 lines, 80,000 chars allowed.
/// let hint = SizeHint::new("File content", 299_316)
///     .with_lines(4_000)
///     .with_alternative("use grep to search it");
/// let refusal = hint.refusal(80_000, true).expect("too large");
/// assert_eq!(
///     refusal.model_text(),
///     "Error: File content (~74,829 tokens) exceeds maximum allowed tokens (20,000). Use \
///      offset and limit to read part of it: offset=0 limit=1066 reads about the first 20,000 \
///      tokens; or use grep to search it."
/// );
/// assert!(hint.refusal(400_000, true).is_none());
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct SizeHint {
    /// What would be returned, capitalised, for the error: `File content`, `Directory listing`.
    pub what: Cow<'static, str>,
    /// The estimated chars of the full result (bytes are a fine estimate).
    pub chars: u64,
    /// The estimated lines, when known; used to suggest a `limit` that fits.
    pub lines: Option<u64>,
    /// Another way to get at the content, in lower case: `use grep to search it`.
    pub alternative: Option<Cow<'static, str>>,
}

impl SizeHint {
    /// Lines assumed per char when the line count is unknown: 80 chars a line.
    const ASSUMED_LINE_CHARS: u64 = 80;

    /// `what` is estimated at `chars` chars.
    pub fn new(what: impl Into<Cow<'static, str>>, chars: u64) -> Self {
        SizeHint {
            what: what.into(),
            chars,
            lines: None,
            alternative: None,
        }
    }

    /// Sets the estimated line count.
    #[must_use]
    pub fn with_lines(mut self, lines: u64) -> Self {
        self.lines = Some(lines);
        self
    }

    /// Sets another way to get at the content (`use grep to search it`).
    #[must_use]
    pub fn with_alternative(mut self, alternative: impl Into<Cow<'static, str>>) -> Self {
        self.alternative = Some(alternative.into());
        self
    }

    /// The error to refuse the call with, when the estimate exceeds `allowance` chars; `None`
    /// when it fits. Tokens are estimated at 4 chars each. For a paginated tool the error
    /// names an `offset` and `limit` that fit.
    pub fn refusal(&self, allowance: usize, paginate: bool) -> Option<ToolError> {
        if self.chars <= allowance as u64 {
            return None;
        }
        let counter = CharsPerToken::default();
        let estimated = counter.count_chars(usize::try_from(self.chars).unwrap_or(usize::MAX));
        let cap = counter.count_chars(allowance);
        let line_chars = match self.lines {
            Some(lines) if lines > 0 => self.chars.div_ceil(lines).max(1),
            _ => Self::ASSUMED_LINE_CHARS,
        };
        let alternative = self.alternative.as_deref();
        let suggestion = if paginate {
            let limit = (allowance as u64 / line_chars).max(1);
            let or = alternative
                .map(|alt| format!("; or {alt}"))
                .unwrap_or_default();
            format!(
                "Use offset and limit to read part of it: offset=0 limit={limit} reads about the \
                 first {} tokens{or}.",
                grouped(cap)
            )
        } else {
            match alternative {
                Some(alt) => format!("Instead, {alt}."),
                None => "Ask for less in one call.".to_owned(),
            }
        };
        Some(ToolError::too_large(
            self.what.clone(),
            estimated,
            cap,
            suggestion,
        ))
    }
}

/// A boxed, sendable future, as [`ToolArgs`] returns.
pub type BoxFuture<'a, T> = Pin<Box<dyn Future<Output = T> + Send + 'a>>;

/// A tool defined by its arguments type: what `#[derive(Tool)]` and `#[tool]` implement.
///
/// The arguments *are* the tool: [`ArgsTool<A>`] turns such a type into a [`Tool`] whose `Args`
/// is `A`. Implement it through the macros; by hand, [`Tool`] is simpler.
pub trait ToolArgs: DeserializeOwned + JsonSchema + Send + Sync + 'static {
    /// The tool's name.
    fn tool_name() -> Cow<'static, str>;

    /// The tool's description.
    fn tool_description() -> Cow<'static, str>;

    /// The tool's limits.
    fn tool_limits() -> ToolLimits {
        ToolLimits::default()
    }

    /// The tool's annotations. By default none is stated.
    fn tool_annotations() -> ToolAnnotations {
        ToolAnnotations::default()
    }

    /// The input schema. By default, schemars' schema of `Self`.
    fn tool_input_schema() -> Value {
        schema_of::<Self>()
    }

    /// See [`Tool::size_hint`]. By default `None`: the tool never estimates.
    fn size_hint<'a>(
        &'a self,
        _cx: &'a ToolContext,
    ) -> Option<BoxFuture<'a, Result<Option<SizeHint>, ToolError>>> {
        None
    }

    /// Runs the call with these arguments.
    fn run_tool(self, cx: &ToolContext) -> BoxFuture<'_, Result<ToolOutput, ToolError>>;
}

/// The [`Tool`] of a [`ToolArgs`] type: register it with `.tool(ArgsTool::<MyArgs>::new())`, or
/// with the `MyArgs::tool()` the derive generates.
pub struct ArgsTool<A>(PhantomData<fn() -> A>);

impl<A> ArgsTool<A> {
    /// The tool of `A`.
    pub const fn new() -> Self {
        ArgsTool(PhantomData)
    }
}

impl<A> Default for ArgsTool<A> {
    fn default() -> Self {
        Self::new()
    }
}

impl<A> Clone for ArgsTool<A> {
    fn clone(&self) -> Self {
        *self
    }
}

impl<A> Copy for ArgsTool<A> {}

impl<A> fmt::Debug for ArgsTool<A> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "ArgsTool<{}>", std::any::type_name::<A>())
    }
}

#[async_trait]
impl<A: ToolArgs> Tool for ArgsTool<A> {
    type Args = A;

    fn name(&self) -> Cow<'static, str> {
        A::tool_name()
    }

    fn description(&self) -> Cow<'static, str> {
        A::tool_description()
    }

    fn limits(&self) -> ToolLimits {
        A::tool_limits()
    }

    fn annotations(&self) -> ToolAnnotations {
        A::tool_annotations()
    }

    fn input_schema(&self) -> Value {
        A::tool_input_schema()
    }

    fn size_hint<'a>(
        &'a self,
        args: &'a A,
        cx: &'a ToolContext,
    ) -> Option<BoxFuture<'a, Result<Option<SizeHint>, ToolError>>> {
        args.size_hint(cx)
    }

    async fn call(&self, args: A, cx: &ToolContext) -> Result<ToolOutput, ToolError> {
        args.run_tool(cx).await
    }
}

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
fn unknown_field<'a>(schema: &Value, args: &'a Value) -> Option<&'a str> {
    if schema.get("additionalProperties") != Some(&Value::Bool(false)) {
        return None;
    }
    let properties = schema.get("properties")?.as_object()?;
    args.as_object()?
        .keys()
        .find(|key| !properties.contains_key(*key))
        .map(String::as_str)
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
    /// What it does to the world (the MCP tool annotations).
    pub annotations: ToolAnnotations,
    /// The Rust type behind it, when known (named in duplicate-name errors).
    pub type_name: Option<&'static str>,
    /// What it needs in the registry's state; the registry refuses to build without it.
    pub needs: Vec<crate::StateNeed>,
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
            annotations: ToolAnnotations::default(),
            type_name: None,
            needs: Vec::new(),
        }
    }

    /// Adds a value the tool needs in the registry's state.
    #[must_use]
    pub fn with_need(mut self, need: crate::StateNeed) -> Self {
        self.needs.push(need);
        self
    }

    /// Sets the limits.
    #[must_use]
    pub fn with_limits(mut self, limits: ToolLimits) -> Self {
        self.limits = limits;
        self
    }

    /// Sets the annotations.
    #[must_use]
    pub fn with_annotations(mut self, annotations: ToolAnnotations) -> Self {
        self.annotations = annotations;
        self
    }
}

/// What a tool does to the world: the MCP tool annotations, as hints for the registry's
/// scheduler, approval policies and clients. Each is `None` when the tool does not say.
///
/// The registry runs calls of read-only tools concurrently and the calls of every other tool
/// one at a time, in call order: a tool that does not say it is read-only is taken to change
/// something. Mark side-effect-free tools `read_only` (`#[tool(read_only)]`) to let them run
/// in parallel.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
#[non_exhaustive]
pub struct ToolAnnotations {
    /// The tool changes nothing (MCP `readOnlyHint`; not stated means it may).
    pub read_only: Option<bool>,
    /// A change it makes may destroy or overwrite data (MCP `destructiveHint`).
    pub destructive: Option<bool>,
    /// Calling it again with the same arguments changes nothing more (MCP `idempotentHint`).
    pub idempotent: Option<bool>,
    /// It reaches outside a closed domain, such as the network (MCP `openWorldHint`).
    pub open_world: Option<bool>,
}

impl ToolAnnotations {
    /// No annotation stated.
    pub fn new() -> Self {
        Self::default()
    }

    /// Sets [`read_only`](Self::read_only).
    #[must_use]
    pub fn with_read_only(mut self, read_only: bool) -> Self {
        self.read_only = Some(read_only);
        self
    }

    /// Sets [`destructive`](Self::destructive).
    #[must_use]
    pub fn with_destructive(mut self, destructive: bool) -> Self {
        self.destructive = Some(destructive);
        self
    }

    /// Sets [`idempotent`](Self::idempotent).
    #[must_use]
    pub fn with_idempotent(mut self, idempotent: bool) -> Self {
        self.idempotent = Some(idempotent);
        self
    }

    /// Sets [`open_world`](Self::open_world).
    #[must_use]
    pub fn with_open_world(mut self, open_world: bool) -> Self {
        self.open_world = Some(open_world);
        self
    }

    /// Whether the tool says it changes nothing, so its calls may run beside any other.
    pub fn is_read_only(&self) -> bool {
        self.read_only == Some(true)
    }

    /// Whether nothing is stated.
    pub fn is_empty(&self) -> bool {
        *self == Self::default()
    }
}

impl fmt::Debug for ToolSpec {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ToolSpec")
            .field("name", &self.name)
            .field("description", &self.description)
            .field("limits", &self.limits)
            .field("annotations", &self.annotations)
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
    /// The share of a trimmed result kept from the top, in `0.0..=1.0`. By default 0.3, and
    /// 1.0 for a paginated tool (a page keeps its beginning); `run_command` favours the tail.
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

    /// Sets [`paginate`](Self::paginate). A paginated tool's result is cut keeping its head, next
    /// to the `next page: offset=N` the marker names: a head ratio still at its default becomes
    /// 1.0 (set one after this call to keep a tail too).
    #[must_use]
    pub fn with_paginate(mut self, paginate: bool) -> Self {
        self.paginate = paginate;
        if paginate && self.head_ratio == crate::trim::TrimStyle::DEFAULT_HEAD_RATIO {
            self.head_ratio = 1.0;
        }
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
