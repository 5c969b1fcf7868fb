use toolsmith::{ToolError, tool};

/// Waits.
#[tool(timeout = "soon")]
async fn wait() -> Result<String, ToolError> {
    Ok("done".into())
}

fn main() {}
