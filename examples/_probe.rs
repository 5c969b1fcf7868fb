//! probe
use toolsmith::trim::{TrimStyle, fit};
fn main() {
    let records: String = (0..2_000)
        .map(|i| format!("{{\"level\":\"info\",\"n\":{}}}\n", i * 7919 % 10007))
        .collect();
    let t = fit(&records, 2_000, &TrimStyle::default());
    println!("{}", t.text());
}
