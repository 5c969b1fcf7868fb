use toolsmith::{Tool, ToolContext, ToolError};

/// Reads a file.
#[derive(serde::Deserialize, schemars::JsonSchema, Tool)]
#[tool(over_cap = "refuse")]
struct ReadFile {
    path: String,
}

impl ReadFile {
    async fn run(self, _cx: &ToolContext) -> Result<String, ToolError> {
        Ok(self.path)
    }
}

fn main() {}
