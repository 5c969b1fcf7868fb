use toolsmith::{ToolError, tool};

struct Calculator;

impl Calculator {
    /// Adds two numbers.
    #[tool]
    async fn add(&self, a: i64, b: i64) -> Result<String, ToolError> {
        Ok((a + b).to_string())
    }
}

fn main() {}
