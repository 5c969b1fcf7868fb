//! The cap holds on every char a reader sees, and a success stays a success, on the registry's
//! path: whatever a batch of tools returns (long text, JSON, errors, images past the limits)
//! and however small the budget, each result's text — markers and media notes counted — is
//! within its allowance, and a result is an error exactly when its tool failed.

use std::sync::Arc;

use proptest::prelude::*;
use serde_json::json;
use toolsmith::artifacts::{ArtifactStore, MemoryStore};
use toolsmith::tokens::{CharsPerToken, TokenCounter};
use toolsmith::tool::{Media, MediaLimits};
use toolsmith::{BudgetPolicy, Registry, ToolCall, ToolError, ToolOutput, tool};

/// Emits `lines` lines (or a JSON list of as many rows), then `images` images of `bytes`
/// bytes each; fails with that much text instead when asked to.
#[tool]
async fn emit(
    /// Lines of output.
    lines: usize,
    /// Whether the output is JSON.
    json: bool,
    /// Images after the text.
    images: u8,
    /// Bytes of each image.
    bytes: usize,
    /// Whether the tool fails (with the lines as its message).
    fail: bool,
) -> Result<ToolOutput, ToolError> {
    let text: String = (0..lines)
        .map(|i| {
            format!(
                "{i:>6} GET /api/orders/{} 200 {}ms\n",
                i * 7919 % 100_003,
                i % 97
            )
        })
        .collect();
    if fail {
        return Err(ToolError::failed(text));
    }
    let mut output = if json {
        let rows: Vec<_> = (0..lines)
            .map(|i| json!({ "id": i, "path": "/api/orders" }))
            .collect();
        if lines % 2 == 1 {
            // The same rows as a text (pretty): cut as JSON by the text fit, within the cap too.
            ToolOutput::text(serde_json::to_string_pretty(&rows).unwrap_or_default())
        } else {
            ToolOutput::json(&rows)?
        }
    } else {
        ToolOutput::text(text)
    };
    for seed in 0..images {
        output = output.with_media(Media::image(vec![seed; bytes], "image/png"));
    }
    Ok(output)
}

#[derive(Debug, Clone)]
struct Call {
    lines: usize,
    json: bool,
    images: u8,
    bytes: usize,
    fail: bool,
}

fn call() -> impl Strategy<Value = Call> {
    (
        prop_oneof![0usize..20, 20usize..3_000],
        any::<bool>(),
        0u8..8,
        prop_oneof![1usize..2_000, 2_000usize..300_000],
        prop::bool::weighted(0.25),
    )
        .prop_map(|(lines, json, images, bytes, fail)| Call {
            lines,
            json,
            images,
            bytes,
            fail,
        })
}

/// The calls of `emit` a batch makes, in order.
fn batch(calls: &[Call]) -> Vec<ToolCall> {
    calls
        .iter()
        .enumerate()
        .map(|(i, c)| {
            ToolCall::new(
                format!("c{i}"),
                "emit",
                json!({
                    "lines": c.lines, "json": c.json, "images": c.images, "bytes": c.bytes,
                    "fail": c.fail,
                }),
            )
        })
        .collect()
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 64, ..ProptestConfig::default() })]

    #[test]
    fn every_result_fits_its_allowance_with_every_notice_counted(
        calls in prop::collection::vec(call(), 1..5),
        // A budget of 0 is refused when the registry is built (tested with the budget itself).
        budget in prop_oneof![1usize..200, 200usize..5_000, 5_000usize..60_000],
        with_store in any::<bool>(),
        max_blocks in 0usize..4,
    ) {
        let runtime = tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap();
        let mut builder = Registry::builder()
            .tool(emit())
            .budget(BudgetPolicy::default().with_batch_budget_chars(budget))
            .media_limits(MediaLimits::default().with_max_blocks(max_blocks).with_max_bytes(100_000));
        if with_store {
            let store: Arc<dyn ArtifactStore> = Arc::new(MemoryStore::new());
            builder = builder.shared_artifacts(store);
        }
        let registry = builder.build().unwrap();
        let results = runtime.block_on(registry.turn().execute(batch(&calls)));
        prop_assert_eq!(results.len(), calls.len());
        for (result, call) in results.iter().zip(&calls) {
            prop_assert!(
                result.content_chars() <= result.meta.allowance,
                "{} chars against an allowance of {} (budget {budget}): {:?}",
                result.content_chars(),
                result.meta.allowance,
                call
            );
            prop_assert!(result.media.len() <= max_blocks);
            prop_assert_eq!(
                result.is_error(),
                call.fail,
                "the result's word is not the tool's: {:?} → {}",
                call,
                result.content
            );
        }
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 48, ..ProptestConfig::default() })]

    /// The same on a registry whose results are capped in tokens: whatever the batch, each
    /// result's content (markers and media notes counted) counts at most the cap, by the
    /// registry's counter, and its figures say so.
    #[test]
    fn every_result_fits_a_cap_in_tokens_with_every_notice_counted(
        calls in prop::collection::vec(call(), 1..4),
        max in prop_oneof![1usize..100, 100usize..4_000],
        per in 1usize..6,
        max_blocks in 0usize..4,
    ) {
        let runtime = tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap();
        let counter = Arc::new(CharsPerToken(per));
        let store: Arc<dyn ArtifactStore> = Arc::new(MemoryStore::new());
        let registry = Registry::builder()
            .tool(emit())
            .max_result_tokens(Some(max))
            .token_counter(counter.clone())
            .media_limits(MediaLimits::default().with_max_blocks(max_blocks).with_max_bytes(100_000))
            .shared_artifacts(store)
            .build()
            .unwrap();
        let results = runtime.block_on(registry.turn().execute(batch(&calls)));
        for (result, call) in results.iter().zip(&calls) {
            let tokens = counter.count(&result.content);
            prop_assert!(tokens <= max, "{tokens} tokens against a cap of {max}: {:?}", call);
            let figures = result.meta.tokens.expect("the figures of a cap in tokens");
            prop_assert_eq!(figures.cap, max);
            prop_assert_eq!(figures.sent, tokens);
            prop_assert!(result.content_chars() <= result.meta.allowance);
            prop_assert_eq!(result.is_error(), call.fail);
        }
    }
}
