//! Recognising a context overflow in a provider's error, on real wordings and their variants
//! (`tests/data/provider-errors.json`): the rules were written against two thirds of them, and
//! the held-out third is reported on its own.

use serde_json::Value;
use toolsmith::history::{ProviderErrorKind, classify_provider_error};

#[test]
fn overflows_are_caught_and_nothing_else_is_taken_for_one() {
    let items: Value = serde_json::from_str(include_str!("data/provider-errors.json")).unwrap();
    let mut report = Vec::new();
    for held_out in [false, true] {
        let (mut caught, mut overflows, mut flagged, mut others) = (0, 0, Vec::new(), 0);
        let mut missed = Vec::new();
        for item in items
            .as_array()
            .unwrap()
            .iter()
            .filter(|i| i["held_out"] == held_out)
        {
            let text = item["text"].as_str().unwrap();
            let kind = classify_provider_error(Some(400), text);
            if item["kind"] == "overflow" {
                overflows += 1;
                if kind == ProviderErrorKind::ContextOverflow {
                    caught += 1;
                } else {
                    missed.push(text.to_owned());
                }
            } else {
                others += 1;
                if kind == ProviderErrorKind::ContextOverflow {
                    flagged.push(text.to_owned());
                }
                let want = match item["kind"].as_str().unwrap() {
                    "rate" => ProviderErrorKind::RateLimit,
                    "output" => ProviderErrorKind::OutputLimit,
                    _ => ProviderErrorKind::Other,
                };
                assert_eq!(kind, want, "{text}");
            }
        }
        report.push(format!(
            "{}: {caught} of {overflows} overflows caught; {} of {others} near-misses taken for one\n  missed: {missed:?}\n  flagged: {flagged:?}",
            if held_out { "held out" } else { "written against" },
            flagged.len()
        ));
        assert!(flagged.is_empty(), "{report:?}");
        assert!(caught * 100 >= overflows * 98, "{report:?}");
    }
    println!("{}", report.join("\n"));
}
