//! Writing tools: the `#[tool]` fn form and the `#[derive(Tool)]` struct form, with their
//! generated specs, and each run once through a registry.
//!
//! Run: `cargo run --example custom_tool`

use serde_json::json;
use toolsmith::tool::SizeHint;
use toolsmith::{Registry, Tool, ToolCall, ToolContext, ToolError, tool};

/// Converts a temperature between Celsius and Fahrenheit.
#[tool(max_result_chars = 200)]
async fn convert_temperature(
    /// The temperature to convert.
    value: f64,
    /// The unit it is in: "C" or "F".
    unit: String,
) -> Result<String, ToolError> {
    match unit.as_str() {
        "C" => Ok(format!("{value} °C = {:.1} °F", value * 9.0 / 5.0 + 32.0)),
        "F" => Ok(format!("{value} °F = {:.1} °C", (value - 32.0) * 5.0 / 9.0)),
        other => Err(ToolError::invalid_arguments(format!(
            "unit: `{other}` is not a unit; use \"C\" or \"F\""
        ))),
    }
}

/// Lists the multiples of a number, a page at a time.
///
/// Without `limit`, asks for at most as many lines as fit the budget.
#[derive(serde::Deserialize, schemars::JsonSchema, Tool)]
#[tool(paginate, head_ratio = 1.0, size_hint = Self::estimate)]
struct Multiples {
    /// The number whose multiples to list.
    of: u64,
    /// How many multiples there are in all.
    count: u64,
}

impl Multiples {
    /// About 12 chars a line: known before any work is done.
    async fn estimate(&self, _cx: &ToolContext) -> Result<Option<SizeHint>, ToolError> {
        Ok(Some(
            SizeHint::new("The list", self.count * 12).with_lines(self.count),
        ))
    }

    async fn run(self, cx: &ToolContext) -> Result<String, ToolError> {
        let page = cx.page().unwrap_or_default();
        let limit = page.limit.map_or(self.count, |limit| limit as u64);
        let first = page.offset as u64;
        let last = (first + limit).min(self.count);
        Ok((first..last)
            .map(|i| format!("{:>11}\n", i * self.of))
            .collect())
    }
}

#[tokio::main]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let registry = Registry::builder()
        .tool(convert_temperature())
        .tool(Multiples::tool())
        .build()?;
    for tool in registry.tools() {
        let spec = tool.spec();
        println!("── {} ──\n{}\n", spec.name, spec.description);
        println!("{}\n", serde_json::to_string_pretty(&spec.input_schema)?);
    }
    let results = registry
        .turn()
        .execute([
            ToolCall::new(
                "1",
                "convert_temperature",
                json!({ "value": 21.5, "unit": "C" }),
            ),
            ToolCall::new(
                "2",
                "convert_temperature",
                json!({ "value": 3, "unit": "K" }),
            ),
            ToolCall::new("3", "multiples", json!({ "of": 7, "count": 1_000_000 })),
            ToolCall::new(
                "4",
                "multiples",
                json!({ "of": 7, "count": 1_000_000, "offset": 10, "limit": 3 }),
            ),
        ])
        .await;
    for result in results {
        println!(
            "call {} (error: {}):\n{}\n",
            result.call_id,
            result.is_error(),
            result.content
        );
    }
    Ok(())
}
