use toolsmith::{Tool, ToolContext, ToolError};

/// Reads a file.
#[derive(serde::Deserialize, schemars::JsonSchema, Tool)]
#[tool(name = "read", max_result_chars = 10)]
#[tool(name = "read_file")]
struct ReadFile {
    path: String,
}

impl ReadFile {
    async fn run(self, _cx: &ToolContext) -> Result<String, ToolError> {
        Ok(self.path)
    }
}

fn main() {}
