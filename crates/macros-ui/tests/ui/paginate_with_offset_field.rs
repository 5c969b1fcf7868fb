use toolsmith::{Tool, ToolContext, ToolError};

/// Reads a file.
#[derive(serde::Deserialize, schemars::JsonSchema, Tool)]
#[tool(paginate)]
struct ReadFile {
    path: String,
    offset: usize,
}

impl ReadFile {
    async fn run(self, _cx: &ToolContext) -> Result<String, ToolError> {
        Ok(self.path)
    }
}

fn main() {}
