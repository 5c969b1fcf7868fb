use toolsmith::{Tool, ToolContext, ToolError};

/// Reads a file.
#[derive(serde::Deserialize, schemars::JsonSchema, Tool)]
#[tool(max_result_chars = 0, head_ratio = -0.5, colour = "blue")]
struct ReadFile {
    path: String,
}

impl ReadFile {
    async fn run(self, _cx: &ToolContext) -> Result<String, ToolError> {
        Ok(self.path)
    }
}

fn main() {}
