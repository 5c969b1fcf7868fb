use toolsmith::{Tool, ToolContext, ToolError};

#[derive(serde::Deserialize, schemars::JsonSchema, Tool)]
#[tool(max_result_chars = 100)]
struct ReadFile {
    path: String,
}

impl ReadFile {
    async fn run(self, _cx: &ToolContext) -> Result<String, ToolError> {
        Ok(self.path)
    }
}

fn main() {}
