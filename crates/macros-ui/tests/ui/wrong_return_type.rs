use toolsmith::tool;

/// Counts.
#[tool]
async fn count(n: u32) -> u32 {
    n
}

fn main() {}
