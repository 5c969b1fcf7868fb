use toolsmith::{ToolError, tool};

/// Echoes a value.
#[tool]
async fn echo<T: serde::de::DeserializeOwned + ToString>(value: T) -> Result<String, ToolError> {
    Ok(value.to_string())
}

fn main() {}
