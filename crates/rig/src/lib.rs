//! toolsmith for [rig](https://docs.rs/rig-core) agents: every batch of tool calls a model makes
//! runs as one toolsmith [`Turn`](toolsmith::Turn), so every result fits the turn's budget,
//! exactly one per call, in call order — the budget split among the calls, read-only calls run
//! concurrently and changing ones in order, the cut output kept as an artifact the model pages
//! through with `read_artifact`.
//!
//! rig-agent's [`AgentRun`] is a step driver: [`next_step`](AgentRun::next_step) asks for a
//! model call, for the whole batch of tool calls of one assistant message, or says the run is
//! done. A [`Driver`] answers both: the model call with the registry's tools advertised, and each
//! batch with one turn of the registry ([`Driver::answer`]).
//!
//! ```no_run
//! use rig_agent::run::AgentRun;
//! use rig_core::providers::openai::OpenAIConfig;
//! use toolsmith::Registry;
//! use toolsmith_rig::Driver;
//!
//! # async fn run(registry: Registry) -> Result<(), Box<dyn std::error::Error>> {
//! let model = OpenAIConfig::from_env()?.client().chat("gpt-4o-mini");
//! let driver = Driver::new(registry);
//! let response = driver
//!     .run(model, AgentRun::new("Why does the build fail?").max_turns(10))
//!     .await?;
//! println!("{}", response.output());
//! # Ok(())
//! # }
//! ```
//!
//! For agents built with `AgentBuilder` and `Agent::prompt`, [`dynamic_tools`] offers each
//! toolsmith tool as a rig [`DynamicTool`], cut to its own cap. That is the weaker form: each
//! call is a turn of its own, so there is no budget shared by the batch and no ordering of
//! changing calls; prefer the [`Driver`] where you own the loop.

#![forbid(unsafe_code)]
#![cfg_attr(docsrs, feature(doc_cfg))]

use rig_agent::run::{
    AgentRun, AgentRunStep, InvalidToolCallAction, ModelTurn, ModelTurnOutcome, PendingToolCall,
    PrepareError, PromptError, PromptResponse, RunSpec, ToolAnswer, TurnPolicy, prepare_request,
};
use rig_core::completion::{CompletionRequest, ToolDefinition};
use rig_core::message::{ImageMediaType, MimeType, ToolName, ToolResultContent};
use rig_core::operation::Completion;
use rig_core::tool::{
    DynamicTool, ToolExecutionError, ToolOutput as RigToolOutput, ToolResult as RigToolResult,
};
use rig_core::{DynModel, ProviderError};
use std::sync::Arc;

use toolsmith::history::{Block, ResultContent};
use toolsmith::{Registry, ToolCall, ToolResult};

/// Why a run driven by a [`Driver`] ended without an answer.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// The run refused a step or ended in error (too many turns, a protocol violation, a
    /// cancelled run): rig's own error, with the history so far.
    #[error(transparent)]
    Run(#[from] Box<PromptError>),
    /// The model call could not be prepared from the run's settings and the registry's tools.
    #[error("the model request could not be prepared: {0}")]
    Prepare(#[from] PrepareError),
    /// The provider failed the model call.
    #[error("the model call failed: {0}")]
    Provider(#[from] ProviderError),
}

impl From<PromptError> for Error {
    fn from(error: PromptError) -> Self {
        Error::Run(Box::new(error))
    }
}

/// Drives rig-agent's [`AgentRun`] with a toolsmith [`Registry`]: the registry's tools are the
/// model's, and each [`AgentRunStep::CallTools`] is one [`Turn`](toolsmith::Turn).
#[derive(Debug, Clone)]
pub struct Driver {
    registry: Registry,
    spec: RunSpec,
    unknown_tools: UnknownTools,
}

/// Who answers a call the model makes to a tool it was not offered.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
#[non_exhaustive]
pub enum UnknownTools {
    /// The registry, as on every other path: an error result naming the tool and the tools
    /// there are, in its place among the batch's results; the run goes on (the default).
    #[default]
    Registry,
    /// rig's run, by its own policy
    /// ([`AgentRun::with_unhandled_invalid_tool_call`]): by default it ends the run with
    /// `PromptError::UnknownToolCall`.
    Rig,
}

impl Driver {
    /// A driver of `registry`'s tools, with rig's default run settings.
    pub fn new(registry: Registry) -> Self {
        Driver {
            registry,
            spec: RunSpec::new(),
            unknown_tools: UnknownTools::Registry,
        }
    }

    /// Who answers a call to a tool the model was not offered ([`UnknownTools`]). By default,
    /// the registry: an error result the model reads, as every adapter answers it.
    #[must_use]
    pub fn with_unknown_tools(mut self, unknown_tools: UnknownTools) -> Self {
        self.unknown_tools = unknown_tools;
        self
    }

    /// The run settings each model call is prepared with (preamble, temperature, `max_tokens`,
    /// tool choice, provider options).
    #[must_use]
    pub fn with_spec(mut self, spec: RunSpec) -> Self {
        self.spec = spec;
        self
    }

    /// The registry whose tools the driver runs.
    pub fn registry(&self) -> &Registry {
        &self.registry
    }

    /// The registry's tools as rig's tool definitions, in the registry's order
    /// (`read_artifact` among them when the registry keeps artifacts).
    pub fn tool_definitions(&self) -> Vec<ToolDefinition> {
        tool_definitions(&self.registry)
    }

    /// Answers one [`AgentRunStep::CallTools`]: every pending call exactly once, in the order
    /// given, each answer made by its call ([`ExecCall::answer`](rig_agent::run::ExecCall::answer),
    /// so it carries the call's [`CallId`](rig_core::message::CallId) as rig made it), for
    /// [`AgentRun::answer_all`]. The calls are one turn of the registry, a call whose arguments
    /// were not a JSON object among them: the registry's error result names the problem, which
    /// the model can act on (rig's run tells the model to call again, with those words).
    pub async fn answer(&self, calls: Vec<PendingToolCall>) -> Vec<ToolAnswer> {
        let runs: Vec<ToolCall> = calls
            .iter()
            .filter_map(|pending| match pending {
                // The registry's id is the wire's: unique enough for its artifacts and events;
                // the answer takes rig's own `CallId` back, never one rebuilt from this string.
                PendingToolCall::Execute(call) => Some(ToolCall::new(
                    call.id().wire().into_owned(),
                    call.name().to_string(),
                    call.arguments(),
                )),
                // Read as the model sent them: the registry's error names what is wrong.
                PendingToolCall::Malformed(call) => Some(ToolCall::from_raw(
                    call.id().wire().into_owned(),
                    call.name().to_string(),
                    call.raw_arguments().to_owned(),
                )),
                _ => None,
            })
            .collect();
        let mut results = if runs.is_empty() {
            Vec::new()
        } else {
            self.registry.turn().execute(runs).await
        }
        .into_iter();
        calls
            .into_iter()
            .filter_map(|pending| match pending {
                PendingToolCall::Execute(call) => {
                    let result = results.next()?;
                    Some(call.answer(rig_result(&result)))
                }
                PendingToolCall::Malformed(call) => {
                    let result = results.next()?;
                    Some(call.answer(Some(InvalidToolCallAction::retry(result.content))))
                }
                _ => None,
            })
            .collect()
    }

    /// Runs `run` to its end: each model call goes to `model` with the registry's tools, each
    /// batch of tool calls is one turn of the registry. A call to a tool the model was not
    /// offered is answered by the registry with an error result the model reads, unless the
    /// driver is set to leave it to the run's own policy ([`Driver::with_unknown_tools`]).
    ///
    /// # Errors
    ///
    /// [`Error`]: the run's own error (too many turns, …), a request that cannot be prepared,
    /// or the provider's failure.
    pub async fn run(
        &self,
        model: impl Into<DynModel<Completion>>,
        mut run: AgentRun,
    ) -> Result<PromptResponse, Error> {
        let model = model.into();
        let capabilities = model.capabilities().completion;
        loop {
            match run.next_step()? {
                AgentRunStep::CallModel {
                    prompt,
                    history,
                    turn,
                } => {
                    let tools = self.tool_definitions().into_iter().map(Arc::new).collect();
                    let prepared = prepare_request(
                        &self.spec,
                        &capabilities,
                        &history,
                        tools,
                        run.output_tool_name(),
                        None,
                    )?;
                    run.advertise_tools(turn, prepared.tools.clone());
                    let policy = prepared.policy.clone();
                    let request = prepared.apply(CompletionRequest::new(prompt));
                    let response = model.call(request).await?;
                    let policy = match self.unknown_tools {
                        // Every tool the model named is run by the registry, which answers one
                        // it does not have with an error result, in its place: one policy for
                        // the turn, its choice and output tool as prepared.
                        UnknownTools::Registry => with_called_tools(policy, &response.choice),
                        UnknownTools::Rig => policy,
                    };
                    let mut outcome =
                        run.model_response(ModelTurn::from_policy(&response, policy))?;
                    while let ModelTurnOutcome::NeedsResolution(_) = outcome {
                        outcome = run.resolve_unhandled_invalid_tool_call()?;
                    }
                }
                AgentRunStep::CallTools { calls } => {
                    let answers = self.answer(calls).await;
                    run.answer_all(answers)?;
                }
                AgentRunStep::Done(response) => return Ok(response),
            }
        }
    }
}

/// `policy` with every tool `choice` calls executable too (the registry answers a tool it does
/// not have). A choice that cannot take them keeps the policy as prepared.
fn with_called_tools(
    policy: TurnPolicy,
    choice: &[rig_core::message::AssistantContent],
) -> TurnPolicy {
    let mut executable = policy.executable().clone();
    executable.extend(choice.iter().filter_map(|content| match content {
        rig_core::message::AssistantContent::ToolCall(call) => Some(call.function.name.to_string()),
        _ => None,
    }));
    TurnPolicy::new(
        executable,
        policy.tool_choice().cloned(),
        policy.output_tool().map(str::to_owned),
    )
    .unwrap_or(policy)
}

/// The registry's tools as rig's tool definitions, in the registry's order.
pub fn tool_definitions(registry: &Registry) -> Vec<ToolDefinition> {
    registry
        .tools()
        .filter_map(|tool| {
            let spec = tool.spec();
            let name = ToolName::new(spec.name.clone()).ok()?;
            Some(ToolDefinition::new(
                name,
                spec.description.clone(),
                spec.input_schema.clone(),
            ))
        })
        .collect()
}

/// A toolsmith result as rig's: its text and images as the registry's `tool_result` block
/// shows them ([`ToolResult::to_block`]), a success or, with the same words shown, a failure.
fn rig_result(result: &ToolResult) -> RigToolResult {
    let output = RigToolOutput::content(result_content(result))
        .unwrap_or_else(|_| RigToolOutput::text(result.content.clone()));
    if result.is_error() {
        RigToolResult::failed(
            ToolExecutionError::other(result.content.clone()).with_model_output(output),
        )
    } else {
        RigToolResult::success(output)
    }
}

/// What a result shows, as rig's tool result content: a text, then each image (an audio clip,
/// or an image for the user only, is a line of text saying so).
fn result_content(result: &ToolResult) -> Vec<ToolResultContent> {
    let Block::ToolResult(block) = result.to_block() else {
        return vec![ToolResultContent::text(result.content.clone())];
    };
    match block.content {
        Some(ResultContent::Blocks(blocks)) => blocks
            .into_iter()
            .filter_map(|block| match block {
                Block::Text(text) => Some(ToolResultContent::text(text.text)),
                Block::Other(image) => {
                    let source = image.get("source")?;
                    let data = source.get("data")?.as_str()?;
                    let mime = source.get("media_type")?.as_str()?;
                    Some(ToolResultContent::image_base64(
                        data,
                        ImageMediaType::from_mime_type(mime),
                        None,
                    ))
                }
                _ => None,
            })
            .collect(),
        _ => vec![ToolResultContent::text(result.content.clone())],
    }
}

/// Each of the registry's tools as a rig [`DynamicTool`], for an `AgentBuilder`
/// (`.dynamic_tools(...)`) and `Agent::prompt`: each call runs as a turn of its own, its result
/// cut to the tool's cap (the registry's per-result budget), its full output kept as an
/// artifact `read_artifact` (offered too, when the registry keeps artifacts) pages through.
///
/// The weaker form: rig runs the calls, so a batch shares no budget and changing calls are not
/// ordered; a [`Driver`] does both.
pub fn dynamic_tools(registry: &Registry) -> Vec<DynamicTool> {
    registry
        .tools()
        .filter_map(|tool| {
            let spec = tool.spec();
            let name = ToolName::new(spec.name.clone()).ok()?;
            let registry = registry.clone();
            let tool_name = spec.name.clone();
            Some(DynamicTool::new(
                name,
                spec.description.clone(),
                spec.input_schema.clone(),
                move |arguments| {
                    let registry = registry.clone();
                    let tool_name = tool_name.clone();
                    Box::pin(async move {
                        let call = ToolCall::new("rig-call", tool_name, arguments);
                        let mut results = registry.turn().execute([call]).await;
                        let Some(result) = results.pop() else {
                            return Err(ToolExecutionError::other(
                                "the registry returned no result for the call",
                            ));
                        };
                        let output = RigToolOutput::content(result_content(&result))
                            .unwrap_or_else(|_| RigToolOutput::text(result.content.clone()));
                        if result.is_error() {
                            Err(ToolExecutionError::other(result.content.clone())
                                .with_model_output(output))
                        } else {
                            Ok(output)
                        }
                    })
                },
            ))
        })
        .collect()
}
