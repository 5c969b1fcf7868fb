use toolsmith::{ToolError, tool};

/// Adds two numbers.
#[tool]
fn add(a: i64, b: i64) -> Result<String, ToolError> {
    Ok((a + b).to_string())
}

fn main() {
    let _ = add();
}
