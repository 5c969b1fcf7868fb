//! Admit: which calls of a batch run. An unknown tool, a cancelled turn, a tripped cap,
//! arguments that are not a JSON object or do not decode, a bad page, and a call cut off by the
//! output limit are answered at once; the others get their decoded arguments and a context.

use serde_json::Value;

use super::call::{Arguments, ToolCall};
use super::record::{CallRecord, Stage};
use super::refusal::{Cap, Refusal};
use super::turn::Turn;
use crate::tool::{Event, ToolContext, ToolError, expected_fields, page};

impl Turn {
    /// The records of a batch's calls, in call order: each admitted (counted against the turn's
    /// caps) or answered. With `last_cut_off`, the last call is answered as cut off by the
    /// output limit, and not counted.
    pub(super) fn admit(&mut self, calls: Vec<ToolCall>, last_cut_off: bool) -> Vec<CallRecord> {
        let last = calls.len().wrapping_sub(1);
        calls
            .into_iter()
            .enumerate()
            .map(|(i, call)| {
                if last_cut_off && i == last {
                    let tool = self.registry.get(&call.name).cloned();
                    CallRecord::refused(call.id, call.name, tool, Refusal::CutOff)
                } else {
                    self.admit_one(call)
                }
            })
            .collect()
    }

    /// Decides whether one call runs: the tool exists, the turn is live, no cap is tripped, the
    /// arguments are a JSON object its tool can decode.
    fn admit_one(&mut self, call: ToolCall) -> CallRecord {
        let ToolCall {
            id,
            name,
            arguments,
        } = call;
        let inner = &self.registry.inner;
        let Some((tool, index, tool_name)) = self
            .registry
            .get_named(&name)
            .map(|(tool, index, tool_name)| (tool.clone(), index, tool_name.clone()))
        else {
            let known = inner.tools.iter().map(|t| t.spec().name.clone()).collect();
            let refusal = Refusal::UnknownTool {
                name: name.clone(),
                known,
            };
            return CallRecord::refused(id, name, None, refusal);
        };
        if self.cancel.is_cancelled() {
            return CallRecord::refused(id, name, Some(tool), ToolError::Cancelled);
        }
        let tool_calls = self.calls_per_tool[index];
        let tripped = if self.calls_made >= inner.max_calls_per_turn {
            Some((Cap::CallsPerTurn, inner.max_calls_per_turn))
        } else if tool_calls >= inner.max_calls_per_tool {
            Some((Cap::CallsPerTool(name.clone()), inner.max_calls_per_tool))
        } else {
            None
        };
        if let Some((cap, limit)) = tripped {
            let message = format!("call `{id}` of `{name}` refused: {cap} ({limit}) reached");
            tracing::warn!(call_id = %id, tool = %name, "{message}");
            let _ = inner.events.send(Event::Warning {
                call_id: id.as_str().into(),
                tool: name.as_str().into(),
                message,
            });
            return CallRecord::refused(id, name, Some(tool), Refusal::CapExceeded { cap, limit });
        }
        self.calls_made += 1;
        self.calls_per_tool[index] += 1;

        let cap = tool.spec().limits.max_result_chars;
        let refuse =
            |id, name, tool, error: ToolError| CallRecord::refused(id, name, Some(tool), error);
        let mut args = match arguments {
            Arguments::Json(value) => value,
            Arguments::Raw(text) => match serde_json::from_str(&text) {
                Ok(value) => value,
                Err(error) => {
                    let error = ToolError::invalid_arguments(format!(
                        "the arguments are not valid JSON ({error})"
                    ));
                    return refuse(id, name, tool, error);
                }
            },
        };
        if !args.is_object() {
            let error = ToolError::invalid_arguments(format!(
                "expected a JSON object of named arguments, got {}; {}",
                json_kind(&args),
                expected_fields(&tool.spec().input_schema)
            ));
            return refuse(id, name, tool, error);
        }
        // An approver is shown the arguments as the model wrote them, page fields and all.
        let shown = inner.approval.is_some().then(|| args.clone());
        let spec = tool.spec();
        let page = if spec.limits.paginate {
            match page::read(&mut args, spec.owns_page_fields) {
                Ok(page) => Some(page),
                Err(error) => return refuse(id, name, tool, error),
            }
        } else {
            None
        };
        let args = match tool.decode(args) {
            Ok(args) => args,
            Err(error) => return refuse(id, name, tool, error),
        };
        let cx = ToolContext::for_call(
            id.as_str(),
            tool_name,
            page,
            inner.events.clone(),
            self.cancel.clone(),
            inner.state.clone(),
            inner.artifacts.clone(),
        );
        CallRecord {
            id,
            name,
            tool: Some(tool),
            page,
            cap,
            estimate: None,
            planned: 0,
            allowance: 0,
            stage: Stage::Admitted { args, cx, shown },
            duration: std::time::Duration::ZERO,
            span: tracing::Span::none(),
        }
    }
}

fn json_kind(value: &Value) -> &'static str {
    match value {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "an array",
        Value::Object(_) => "an object",
    }
}
