//! A typed result — a tool's `Json<T>` with its output schema — within its allowance on the
//! registry's path: over it, cut by its schema (its text the cut's JSON and a note, its
//! structure the same cut, valid against the schema), or the over-cap error when no valid cut
//! fits; never the whole.

use proptest::prelude::*;
use schemars::JsonSchema;
use serde::Serialize;
use serde_json::Value;
use toolsmith::artifacts::MemoryStore;
use toolsmith::tokens::CharsPerToken;
use toolsmith::tool::ErrorKind;
use toolsmith::{BudgetPolicy, Json, Registry, ToolCall, ToolError, tool};

/// One row of a listing.
#[derive(Serialize, JsonSchema)]
struct Row {
    id: u64,
    name: String,
    status: String,
}

/// A listing, as a typed tool returns it.
#[derive(Serialize, JsonSchema)]
struct Listing {
    rows: Vec<Row>,
    /// Where the next page starts, if there is one.
    next: Option<String>,
}

/// Lists `count` rows; the row `failing` has failed.
#[tool(read_only)]
async fn list_rows(
    /// How many rows.
    count: u64,
    /// The row that failed.
    failing: u64,
) -> Result<Json<Listing>, ToolError> {
    let rows = (0..count)
        .map(|id| Row {
            id,
            name: format!("row number {id}"),
            status: if id == failing { "failed" } else { "ok" }.to_owned(),
        })
        .collect();
    Ok(Json(Listing {
        rows,
        next: (count > 10).then(|| "cursor-2".to_owned()),
    }))
}

fn registry(budget: usize, tokens: Option<usize>) -> Registry {
    let mut builder = Registry::builder()
        .tool(list_rows())
        .budget(BudgetPolicy::new().with_batch_budget_chars(budget))
        .artifacts(MemoryStore::new());
    if let Some(tokens) = tokens {
        builder = builder
            .max_result_tokens(Some(tokens))
            .token_counter(std::sync::Arc::new(CharsPerToken(4)));
    }
    builder.build().unwrap()
}

fn call(count: u64, failing: u64) -> ToolCall {
    ToolCall::new(
        "c1",
        "list_rows",
        serde_json::json!({ "count": count, "failing": failing }),
    )
}

fn validator() -> jsonschema::Validator {
    let registry = Registry::builder().tool(list_rows()).build().unwrap();
    let spec = registry.get("list_rows").unwrap().spec().clone();
    let schema = spec.output_schema.expect("a typed tool states one");
    jsonschema::validator_for(&schema).unwrap()
}

#[tokio::test]
async fn a_typed_result_over_its_allowance_is_cut_by_its_schema() {
    let registry = registry(6_000, None);
    let result = registry
        .turn()
        .execute([call(2_000, 1_234)])
        .await
        .remove(0);
    assert!(!result.is_error(), "{}", result.content);
    assert!(result.content_chars() <= 6_000);
    let structure = result.structure.clone().expect("the cut is the structure");
    assert!(validator().is_valid(&structure), "{structure}");
    assert!(structure.to_string().chars().count() <= 6_000);
    let rows = structure["rows"].as_array().unwrap();
    assert_eq!(rows[0]["id"], 0);
    assert_eq!(rows.last().unwrap()["id"], 1_999);
    assert!(
        rows.iter().any(|row| row["status"] == "failed"),
        "the failing row is kept"
    );
    // The text is the same cut, then a note naming the artifact.
    let (json, note) = result.content.rsplit_once('\n').unwrap();
    assert_eq!(serde_json::from_str::<Value>(json).unwrap(), structure);
    let id = result.meta.artifact.as_ref().expect("kept whole");
    assert!(
        note.contains(id.as_str()) && note.contains("/rows"),
        "{note}"
    );
    let facts = result.cut_facts().unwrap();
    assert_eq!(facts["structure"]["cuts"][0]["pointer"], "/rows");
    assert_eq!(facts["structure"]["cuts"][0]["total"], 2_000);
}

#[tokio::test]
async fn a_result_no_valid_cut_of_which_fits_is_an_error_never_the_whole() {
    // Ten rows do not fit 120 chars: `rows` cannot lose its items' required members.
    let registry = registry(120, None);
    let result = registry.turn().execute([call(10, 99)]).await.remove(0);
    assert_eq!(result.meta.error_kind, Some(ErrorKind::TooLarge));
    assert!(result.structure.is_none());
    assert!(result.content_chars() <= 120, "{}", result.content);
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 48, ..ProptestConfig::default() })]

    /// Whatever the listing and the budget, in chars or in tokens: the text within the
    /// allowance, the structure within it and valid, or the over-cap error.
    #[test]
    fn every_typed_result_fits_and_matches_its_schema(
        count in 0u64..3_000,
        failing in 0u64..3_000,
        budget in prop_oneof![50usize..400, 400usize..20_000],
        tokens in prop::option::of(20usize..3_000),
    ) {
        let runtime = tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap();
        let registry = registry(budget, tokens);
        let result = runtime.block_on(registry.turn().execute([call(count, failing)])).remove(0);
        prop_assert!(result.content_chars() <= result.meta.allowance);
        if let Some(cap) = tokens {
            prop_assert!(result.content_chars().div_ceil(4) <= cap, "{} chars: {}", result.content_chars(), result.content);
        }
        match (&result.structure, result.meta.error_kind) {
            (_, Some(kind)) => prop_assert_eq!(kind, ErrorKind::TooLarge),
            (Some(structure), None) => {
                prop_assert!(validator().is_valid(structure), "{}", structure);
                prop_assert!(structure.to_string().chars().count() <= result.meta.allowance);
            }
            (None, None) => {
                // Whole: the text is the tool's JSON, valid.
                prop_assert!(result.meta.structured, "{}", result.content);
                let whole: Value = serde_json::from_str(&result.content).unwrap();
                prop_assert!(validator().is_valid(&whole));
            }
        }
    }
}
