use toolsmith::Tool;

/// Reads a file.
#[derive(serde::Deserialize, schemars::JsonSchema, Tool)]
struct ReadFile {
    path: String,
}

fn main() {}
