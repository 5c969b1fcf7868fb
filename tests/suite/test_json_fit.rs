//! `trim::fit_json`: JSON cut to an allowance stays JSON, keeps what it says it keeps, and
//! states every cut with the marker.

use proptest::prelude::*;
use serde_json::{Value, json};
use toolsmith::trim::{FullOutput, fit_json};

const OPENING: &str = "[toolsmith: output truncated, kept ";

fn is_marker(value: &Value) -> bool {
    value.as_str().is_some_and(|s| s.starts_with(OPENING))
}

/// `kept K of N unit`, read back from a marker.
fn marker_counts(marker: &str) -> (usize, usize, String) {
    let rest = marker.strip_prefix(OPENING).expect("a marker");
    let (kept, rest) = rest.split_once(" of ").unwrap();
    let (total, rest) = rest.split_once(' ').unwrap();
    let unit = rest.split_once(' ').unwrap().0.to_owned();
    let number = |s: &str| s.replace(',', "").parse::<usize>().unwrap();
    (number(kept), number(total), unit)
}

/// Checks that every kept part of `out` is the input's at the same place, and that every
/// marker's figures are exact.
fn check_kept(original: &Value, out: &Value) {
    match (original, out) {
        (_, Value::String(cut)) if cut.contains(OPENING) && original != out => {
            if let Value::String(whole) = original {
                let at = cut.find(OPENING).unwrap();
                let head = cut[..at].strip_suffix(' ').unwrap_or(&cut[..at]);
                let after = &cut[at..];
                let end = after.find("] ").map_or(after.len(), |i| i + 2);
                let tail = &after[end..];
                assert!(whole.starts_with(head), "head {head:?} of {whole:?}");
                assert!(whole.ends_with(tail), "tail {tail:?} of {whole:?}");
            }
            // A container replaced by its marker keeps nothing to compare.
        }
        (Value::Array(items), Value::Array(kept)) => match kept.iter().position(|v| {
            // The array's own marker: it counts this array's items (an element replaced by a
            // marker counts its own).
            is_marker(v) && kept.len() != items.len() && {
                let (k, n, unit) = marker_counts(v.as_str().unwrap());
                (k + 1, n, unit.as_str()) == (kept.len(), items.len(), "items")
            }
        }) {
            Some(m) => {
                let (n, tail) = (items.len(), kept.len() - m - 1);
                for i in 0..m {
                    check_kept(&items[i], &kept[i]);
                }
                for j in 0..tail {
                    check_kept(&items[n - tail + j], &kept[m + 1 + j]);
                }
            }
            _ => {
                assert_eq!(items.len(), kept.len());
                for (a, b) in items.iter().zip(kept) {
                    check_kept(a, b);
                }
            }
        },
        (Value::Object(members), Value::Object(kept)) => {
            if let Some(marker) = kept.get("…").filter(|_| !members.contains_key("…")) {
                let (k, n, unit) = marker_counts(marker.as_str().unwrap());
                assert_eq!((n, unit.as_str()), (members.len(), "keys"));
                assert_eq!(k, kept.len() - 1);
            } else {
                assert_eq!(members.len(), kept.len());
            }
            // Keys in input order.
            let order: Vec<&String> = members.keys().collect();
            let mut last = None;
            for (key, value) in kept {
                if key == "…" && !members.contains_key("…") {
                    continue;
                }
                let at = order
                    .iter()
                    .position(|k| *k == key)
                    .expect("a key of the input");
                assert!(last.is_none_or(|last| at > last), "keys keep their order");
                last = Some(at);
                check_kept(&members[key], value);
            }
        }
        _ => assert_eq!(original, out),
    }
}

fn fitted(value: &Value, pretty: bool, allowance: usize) -> Option<String> {
    let text = if pretty {
        serde_json::to_string_pretty(value).unwrap()
    } else {
        serde_json::to_string(value).unwrap()
    };
    let fit = fit_json(&text, allowance, 0.5, &FullOutput::NotKept)?;
    let out: Value = serde_json::from_str(&fit.text).expect("the fitted text parses");
    assert!(fit.text.chars().count() <= allowance);
    // Both sides read by the same parser, so a float reads back the same from identical bytes.
    let original: Value = serde_json::from_str(&text).unwrap();
    check_kept(&original, &out);
    // Idempotent: the fitted text fits, so fitting it again changes nothing.
    let again = fit_json(&fit.text, allowance, 0.5, &FullOutput::NotKept).unwrap();
    assert_eq!(again.text, fit.text);
    Some(fit.text)
}

fn arb_json() -> impl Strategy<Value = Value> {
    let leaf = prop_oneof![
        Just(Value::Null),
        any::<bool>().prop_map(Value::from),
        any::<i64>().prop_map(Value::from),
        (-1e6f64..1e6).prop_map(Value::from),
        "[a-zé😀\"\\\\\n\t ]{0,300}".prop_map(Value::from),
    ];
    leaf.prop_recursive(6, 400, 30, |inner| {
        prop_oneof![
            prop::collection::vec(inner.clone(), 0..40).prop_map(Value::from),
            prop::collection::btree_map("[a-zñ_]{1,8}", inner, 0..12)
                .prop_map(|map| Value::Object(map.into_iter().collect())),
        ]
    })
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(300))]

    #[test]
    fn fitted_json_parses_fits_and_keeps_what_it_says(
        value in arb_json(),
        pretty in any::<bool>(),
        allowance in 0usize..3_000,
    ) {
        let out = fitted(&value, pretty, allowance);
        let compact = serde_json::to_string(&value).unwrap();
        if compact.chars().count() <= allowance {
            // What fits compactly comes back compact and whole.
            prop_assert_eq!(out, Some(compact));
        }
    }
}

/// `value` pretty-printed with `indent` (serde_json's printer with another indentation).
fn indented(value: &Value, indent: &str) -> String {
    use serde::Serialize as _;
    let mut out = Vec::new();
    let formatter = serde_json::ser::PrettyFormatter::with_indent(indent.as_bytes());
    let mut serializer = serde_json::Serializer::with_formatter(&mut out, formatter);
    value.serialize(&mut serializer).unwrap();
    String::from_utf8(out).unwrap()
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(200))]

    /// Pretty-printed as people and tools write it (two, four or eight spaces, tabs): the fit is
    /// the same as of the compact text, and it says how much whitespace went.
    #[test]
    fn pretty_printed_json_fits_as_its_compact_form_does(
        value in arb_json(),
        indent in prop::sample::select(vec!["  ", "    ", "        ", "\t"]),
        allowance in 0usize..3_000,
    ) {
        let pretty = indented(&value, indent);
        let compact = serde_json::to_string(&value).unwrap();
        let from_pretty = fit_json(&pretty, allowance, 0.5, &FullOutput::NotKept);
        let from_compact = fit_json(&compact, allowance, 0.5, &FullOutput::NotKept);
        match (from_pretty, from_compact) {
            (Some(p), Some(c)) => {
                prop_assert!(p.text.chars().count() <= allowance);
                let whitespace = pretty.chars().count() - compact.chars().count();
                prop_assert_eq!(p.whitespace_removed, whitespace);
                if !c.is_cut() {
                    prop_assert_eq!(&p.text, &c.text);
                } else {
                    // Both sides read by the same parser (a float reads back as its text).
                    let out: Value = serde_json::from_str(&p.text).unwrap();
                    check_kept(&serde_json::from_str(&compact).unwrap(), &out);
                }
            }
            (None, None) => {}
            // The marker says `JSON compacted` for the pretty text: it may need a little more.
            (None, Some(c)) => prop_assert!(c.is_cut()),
            (Some(p), None) => prop_assert!(false, "only the pretty text fit: {}", p.text),
        }
    }
}

#[test]
fn an_array_of_ten_thousand_objects_keeps_its_ends() {
    let rows: Vec<Value> = (0..10_000)
        .map(|i| json!({ "id": i, "name": format!("row {i}"), "tags": ["a", "b"] }))
        .collect();
    let value = Value::from(rows);
    let text = fitted(&value, true, 20_000).unwrap();
    let out: Value = serde_json::from_str(&text).unwrap();
    let items = out.as_array().unwrap();
    assert_eq!(items[0]["id"], 0);
    assert_eq!(items.last().unwrap()["id"], 9_999);
    let marker = items
        .iter()
        .find(|v| is_marker(v))
        .unwrap()
        .as_str()
        .unwrap();
    assert!(marker.contains("of 10,000 items"), "{marker}");
    assert!(marker.contains("JSON compacted"), "{marker}");
    // Whole elements around one marker, not every element cut.
    assert_eq!(text.matches(OPENING).count(), 1, "{text}");
    assert!(
        text.chars().count() > 19_000,
        "the allowance is used: {}",
        text.len()
    );
}

#[test]
fn a_five_megabyte_string_keeps_head_and_tail() {
    let long: String = "abcdefghij".repeat(500_000);
    let value = json!({ "log": long, "status": "failed" });
    let text = fitted(&value, false, 2_000).unwrap();
    let out: Value = serde_json::from_str(&text).unwrap();
    assert_eq!(out["status"], "failed");
    let log = out["log"].as_str().unwrap();
    assert!(log.starts_with("abcdefghij"));
    assert!(log.contains("of 5,000,000 chars"), "{log}");
}

/// Large enough (over 8 MiB) that its chars are counted on another core while it is scanned:
/// the figures are the same as a small document's.
#[test]
fn a_document_counted_on_another_core_reports_what_a_small_one_does() {
    let rows: Vec<Value> = (0..60_000)
        .map(|i| json!({ "id": i, "title": format!("Größe {i} — 日本語のテキスト ✓ 🙂"), "tags": ["ä", "b"] }))
        .collect();
    let value = Value::from(rows);
    let pretty = indented(&value, "    ");
    assert!(pretty.len() > 9 << 20, "{} bytes", pretty.len());
    let compact = serde_json::to_string(&value).unwrap();
    let fit = fit_json(&pretty, 20_000, 0.5, &FullOutput::NotKept).unwrap();
    assert_eq!(
        fit.whitespace_removed,
        pretty.chars().count() - compact.chars().count()
    );
    assert!(fit.text.chars().count() <= 20_000);
    let out: Value = serde_json::from_str(&fit.text).unwrap();
    check_kept(&value, &out);
    assert!(fit.text.contains("of 60,000 items"), "{}", fit.text);
    assert!(fit.text.contains("JSON compacted"));

    // A root that is no container: a long string between spaces.
    let long = format!(
        "  {}  ",
        serde_json::to_string(&"ünïcode ".repeat(1_200_000)).unwrap()
    );
    let fit = fit_json(&long, 2_000, 0.5, &FullOutput::NotKept).unwrap();
    assert_eq!(fit.whitespace_removed, 4);
    assert!(fit.text.contains("of 9,600,000 chars"), "{}", fit.text);
}

#[test]
fn the_biggest_parts_shrink_first() {
    let value = json!({
        "small": "kept whole",
        "first_big": "x".repeat(50_000),
        "second_big": (0..10_000).collect::<Vec<_>>(),
        "count": 3,
    });
    let text = fitted(&value, false, 4_000).unwrap();
    let out: Value = serde_json::from_str(&text).unwrap();
    assert_eq!(out["small"], "kept whole");
    assert_eq!(out["count"], 3);
    // Both big members got a fair part, not the first one all of it.
    let first = out["first_big"].as_str().unwrap().len();
    let second = serde_json::to_string(&out["second_big"]).unwrap().len();
    assert!(first > 1_000 && second > 1_000, "{first} and {second}");
}

#[test]
fn deep_nesting_does_not_overflow_the_stack() {
    let depth = 10_000;
    let text = format!("{}{}", "[".repeat(depth), "]".repeat(depth));
    let fit = fit_json(&text, 500, 0.5, &FullOutput::NotKept).expect("valid JSON");
    let out: Value = serde_json::from_str(&fit.text).unwrap_or(Value::Null);
    assert!(fit.text.chars().count() <= 500);
    assert!(out.is_array(), "{}", fit.text);
    // Deeper than anything serde_json parses: still valid, still bounded.
    let text = format!("{{\"a\":{}1{}}}", "[".repeat(depth), "]".repeat(depth));
    let fit = fit_json(&text, 300, 0.5, &FullOutput::NotKept).expect("valid JSON");
    assert!(fit.text.chars().count() <= 300);
    assert!(fit.text.starts_with("{\"a\":"));
}

#[test]
fn non_ascii_keys_and_mixed_arrays() {
    let value = json!({
        "名前": ["一", 2, null, true, {"ключ": "значение".repeat(200)}, [1.5, -3e10]],
        "émoji": "😀".repeat(3_000),
    });
    fitted(&value, true, 700).unwrap();
}

#[test]
fn invalid_json_and_tiny_allowances_are_left_to_the_text_fit() {
    for text in [
        "{",
        "[1,]",
        "{\"a\" 1}",
        "nul",
        "[1] [2]",
        "\"\u{1}\"",
        "01",
        "[1e]",
    ] {
        assert!(
            fit_json(text, 10, 0.5, &FullOutput::NotKept).is_none(),
            "{text:?}"
        );
    }
    let big = serde_json::to_string(&(0..1_000).collect::<Vec<_>>()).unwrap();
    assert!(fit_json(&big, 20, 0.5, &FullOutput::NotKept).is_none());
    // A bracket that closes the wrong kind of container, deeper than 64 levels and shallower.
    for depth in [10, 100] {
        let wrong = format!(
            "{{\"a\":{}{{}}}}{}",
            "[".repeat(depth),
            "]".repeat(depth - 1)
        );
        assert!(
            fit_json(&wrong, 10, 0.5, &FullOutput::NotKept).is_none(),
            "{wrong}"
        );
    }
}

#[test]
fn markers_name_the_artifact() {
    let big = serde_json::to_string(&(0..1_000).collect::<Vec<_>>()).unwrap();
    let full = FullOutput::Stored {
        id: "0123456789abcdef0123456789abcdef",
        reader: "read_artifact",
    };
    let fit = fit_json(&big, 400, 0.3, &full).unwrap();
    assert!(fit.is_cut());
    assert!(
        fit.text.contains(
            "full output: artifact 0123456789abcdef0123456789abcdef, read it with read_artifact"
        ),
        "{}",
        fit.text
    );
}

fn issues(count: usize) -> Vec<Value> {
    (0..count)
        .map(|i| json!({ "number": i + 1, "title": format!("Issue {}", i + 1), "state": "open" }))
        .collect()
}

/// A tool that returns a JSON list of issues, as many as asked for: as JSON (what it states
/// it is) or as pretty-printed text.
#[toolsmith::tool(read_only)]
async fn list_issues(
    /// How many issues.
    count: usize,
    /// Return them as indented text instead of JSON.
    #[serde(default)]
    as_text: bool,
) -> Result<toolsmith::ToolOutput, toolsmith::ToolError> {
    if as_text {
        Ok(toolsmith::ToolOutput::text(
            serde_json::to_string_pretty(&issues(count)).unwrap(),
        ))
    } else {
        toolsmith::ToolOutput::json(&issues(count))
    }
}

fn issue_registry(store: &toolsmith::artifacts::MemoryStore) -> toolsmith::Registry {
    toolsmith::Registry::builder()
        .tool(list_issues())
        .artifacts(store.clone())
        .budget(toolsmith::BudgetPolicy::default().with_batch_budget_chars(5_000))
        .build()
        .unwrap()
}

#[tokio::test]
async fn a_text_that_is_a_json_document_is_cut_as_json() {
    let store = toolsmith::artifacts::MemoryStore::new();
    let registry = issue_registry(&store);
    let args = json!({ "count": 2_000, "as_text": true });
    let result = registry
        .turn()
        .execute([toolsmith::ToolCall::new("c", "list_issues", args)])
        .await
        .remove(0);
    let whole = serde_json::to_string_pretty(&issues(2_000)).unwrap();
    assert!(result.content_chars() <= 5_000);
    // Valid JSON, its first and last elements whole, the marker one element between them.
    let value: Value = serde_json::from_str(&result.content).expect("valid JSON");
    let rows = value.as_array().unwrap();
    assert_eq!(rows[0]["number"], 1);
    assert_eq!(rows.last().unwrap()["number"], 2_000);
    let marker = toolsmith::trim::find_marker(&result.content).expect("a marker");
    assert!(marker.json_compacted, "{}", &result.content[..300]);
    // The figures are the text's as the tool wrote it, and the artifact keeps it byte for byte.
    assert_eq!(result.meta.original_lines, whole.lines().count());
    assert_eq!(result.meta.original_chars, whole.chars().count());
    let id = result.meta.artifact.clone().expect("stored");
    assert_eq!(store.get(&id).unwrap(), whole);
    // A text is still not the tool's structure: only a JSON output is.
    assert!(!result.meta.structured);
}

/// A pretty result over its allowance that fits once written compactly: the same value,
/// compact; nothing stored (nothing was left out); the cut says it was compacted, in its
/// figures and in its facts. (The tool's JSON output is compact already.)
#[tokio::test]
async fn a_json_result_that_fits_once_compacted_is_compacted_and_stores_nothing() {
    let store = toolsmith::artifacts::MemoryStore::new();
    let registry = issue_registry(&store);
    // 85 issues: 4,063 chars compact, 6,104 pretty.
    let args = json!({ "count": 85, "as_text": true });
    let compact = serde_json::to_string(&issues(85)).unwrap();
    let pretty = serde_json::to_string_pretty(&issues(85)).unwrap();
    assert!(compact.len() < 5_000 && pretty.len() > 5_000);
    let result = registry
        .turn()
        .execute([toolsmith::ToolCall::new("c", "list_issues", args)])
        .await
        .remove(0);
    assert_eq!(result.content, compact);
    assert!(store.is_empty(), "nothing to keep");
    assert!(result.meta.artifact.is_none());
    let cut = result.meta.cut.as_ref().expect("the change is stated");
    assert!(cut.compacted);
    let facts = result.cut_facts().expect("facts");
    assert_eq!(facts["cuts"][0]["compacted"], true, "{facts}");
    assert_eq!(facts["artifacts"], json!([]), "{facts}");
}

#[tokio::test]
async fn json_lines_and_text_that_only_looks_like_json_are_cut_by_their_lines() {
    use toolsmith::trim::{TrimStyle, fit};
    let records: String = (0..2_000)
        .map(|i| format!("{{\"level\":\"info\",\"n\":{}}}\n", i * 7_919 % 10_007))
        .collect();
    let log: String = (0..2_000)
        .map(|i| format!("[INFO] request {} served]\n", i * 7_919 % 10_007))
        .collect();
    for text in [records.as_str(), log.as_str()] {
        let trimmed = fit(text, 2_000, &TrimStyle::default());
        assert!(trimmed.text().chars().count() <= 2_000);
        // Whole lines (records) at both ends: a line cut, not a JSON one.
        assert!(
            !trimmed.cut().unwrap().spans.is_empty(),
            "{}",
            trimmed.text()
        );
        let first = trimmed.text().lines().next().unwrap();
        assert!(text.lines().any(|line| line == first));
        assert!(
            text.trim_end()
                .ends_with(trimmed.text().lines().last().unwrap())
        );
    }
    // And a style that turns the JSON cut off cuts a document by its lines too.
    let document = serde_json::to_string_pretty(&issues(500)).unwrap();
    let by_lines = fit(&document, 2_000, &TrimStyle::default().with_json(false));
    assert!(serde_json::from_str::<Value>(by_lines.text()).is_err());
    let as_json = fit(&document, 2_000, &TrimStyle::default());
    assert!(serde_json::from_str::<Value>(as_json.text()).is_ok());
}

#[tokio::test]
async fn the_registry_cuts_an_oversized_json_result_as_json() {
    use toolsmith::ToolCall;
    use toolsmith::artifacts::MemoryStore;
    let store = MemoryStore::new();
    let registry = issue_registry(&store);
    let result = registry
        .turn()
        .execute([ToolCall::new("c", "list_issues", json!({ "count": 2_000 }))])
        .await
        .remove(0);
    let whole = serde_json::to_string(&issues(2_000)).unwrap();
    let out: Value = serde_json::from_str(&result.content).expect("still JSON");
    let items = out.as_array().unwrap();
    assert_eq!(items[0]["number"], 1);
    assert_eq!(items.last().unwrap()["number"], 2_000);
    assert!(result.content_chars() <= 5_000);
    // Exact figures, and the artifact holds the tool's text as it was.
    assert!(result.meta.trimmed());
    assert_eq!(result.meta.original_chars, whole.chars().count());
    assert_eq!(result.meta.original_lines, whole.lines().count());
    let id = result.meta.artifact.clone().expect("stored");
    assert_eq!(store.get(&id).unwrap(), whole);
    let marker = items
        .iter()
        .find(|v| is_marker(v))
        .unwrap()
        .as_str()
        .unwrap();
    assert!(marker.contains(id.as_str()), "{marker}");
    let cut = result.meta.cut.as_ref().unwrap();
    assert_eq!(
        cut.kept_chars,
        result.content_chars() - marker.chars().count() - 2,
        "all but the marker and its quotes is the input's"
    );
}

#[test]
fn json_markers_read_back_through_the_one_parser() {
    let rows: Vec<u32> = (0..10_000).collect();
    let text = serde_json::to_string(&rows).unwrap();
    let full = FullOutput::Stored {
        id: "0123456789abcdef0123456789abcdef",
        reader: "read_artifact",
    };
    let fitted = fit_json(&text, 400, 0.5, &full).unwrap();
    let marker = toolsmith::trim::find_marker(&fitted.text).expect("a marker in the JSON");
    assert_eq!(marker.unit, "items");
    assert_eq!(marker.total, 10_000);
    assert_eq!(marker.lines, None);
    let value: Value = serde_json::from_str(&fitted.text).unwrap();
    let shown = value.as_array().unwrap().len() - 1; // the marker element
    assert_eq!(marker.kept, shown);
    let head = marker.head().expect("the head of the array");
    let tail = marker.tail().expect("the tail of the array");
    assert_eq!(head.first, 1);
    assert_eq!(tail.last, 10_000);
    assert_eq!(head.last + (tail.last - tail.first + 1), shown);
    assert!(matches!(
        marker.full,
        toolsmith::trim::MarkedFull::Stored { ref id, .. } if id == "0123456789abcdef0123456789abcdef"
    ));
}
