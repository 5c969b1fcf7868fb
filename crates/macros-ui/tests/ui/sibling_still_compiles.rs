// Two broken tools beside a correct one, all registered: the only errors are the two broken keys.
// The fallbacks keep `Broken::tool()` and `broken()` defined, so nothing else fails.
use toolsmith::{Registry, Tool, ToolContext, ToolError, tool};

/// A correct tool.
#[derive(serde::Deserialize, schemars::JsonSchema, Tool)]
struct Fine {
    text: String,
}

impl Fine {
    async fn run(self, _cx: &ToolContext) -> Result<String, ToolError> {
        Ok(self.text)
    }
}

/// A broken tool.
#[derive(serde::Deserialize, schemars::JsonSchema, Tool)]
#[tool(paginte)]
struct Broken {
    text: String,
}

impl Broken {
    async fn run(self, _cx: &ToolContext) -> Result<String, ToolError> {
        Ok(self.text)
    }
}

/// A broken fn tool.
#[tool(max_result_chars = 0)]
async fn broken(text: String) -> Result<String, ToolError> {
    Ok(text)
}

fn main() {
    let _registry = Registry::builder()
        .tool(Fine::tool())
        .tool(Broken::tool())
        .tool(broken())
        .build();
}
