use toolsmith::{ToolError, tool};

/// Reads a file.
#[tool]
async fn lire_fiché(path: String) -> Result<String, ToolError> {
    Ok(path)
}

fn main() {}
