use toolsmith::Tool;

/// Echoes a value.
#[derive(serde::Deserialize, schemars::JsonSchema, Tool)]
struct Echo<T> {
    value: T,
}

fn main() {}
