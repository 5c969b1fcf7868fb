//! [`ToolArgs`] (what the macros implement on an arguments type) and [`ArgsTool`], the
//! [`Tool`] such a type is.

use std::borrow::Cow;
use std::fmt;
use std::marker::PhantomData;

use async_trait::async_trait;
use schemars::JsonSchema;
use serde::de::DeserializeOwned;
use serde_json::Value;

use super::schema::schema_of;
use super::size_hint::SizeHint;
use super::spec::{ToolAnnotations, ToolLimits};
use super::{BoxFuture, Tool};
use crate::tool::{StateNeed, ToolContext};
use crate::tool::{ToolError, ToolOutput};

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

    /// What the tool needs in the registry's state (the `state = T` key). By default nothing.
    fn tool_needs() -> Vec<StateNeed> {
        Vec::new()
    }

    /// The JSON schema of the tool's structured result, when the function returns `Json<T>`.
    fn tool_output_schema() -> Option<Value> {
        None
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

    fn needs(&self) -> Vec<StateNeed> {
        A::tool_needs()
    }

    fn output_schema(&self) -> Option<Value> {
        A::tool_output_schema()
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
