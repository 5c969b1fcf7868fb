use toolsmith::Tool;

/// Picks a mode.
#[derive(serde::Deserialize, schemars::JsonSchema, Tool)]
enum Mode {
    Fast,
    Slow,
}

fn main() {}
