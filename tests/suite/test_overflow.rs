//! Classifying a provider's error three ways — the context overflowed, the output asked for is
//! over a limit (with the number the wording gives), or not ours — on real wordings and their
//! variants (`tests/data/provider-errors.json`): the rules were written against two thirds of
//! them, and the held-out third is reported on its own.

use serde_json::Value;
use toolsmith::history::{ProviderErrorKind, classify_provider_error};

#[derive(Default)]
struct Tally {
    overflows: usize,
    overflows_caught: usize,
    outputs: usize,
    outputs_with_number: usize,
    others: usize,
    wrong: Vec<String>,
}

#[test]
fn errors_are_classified_three_ways_with_their_numbers() {
    let items: Value = serde_json::from_str(include_str!("../data/provider-errors.json")).unwrap();
    let mut report = Vec::new();
    for held_out in [false, true] {
        let mut tally = Tally::default();
        for item in items
            .as_array()
            .unwrap()
            .iter()
            .filter(|i| i["held_out"] == held_out)
        {
            let text = item["text"].as_str().unwrap();
            let verdict = classify_provider_error(Some(400), text);
            match item["kind"].as_str().unwrap() {
                "overflow" => {
                    tally.overflows += 1;
                    if verdict == ProviderErrorKind::ContextOverflow {
                        tally.overflows_caught += 1;
                    } else {
                        tally.wrong.push(format!("{verdict:?}: {text}"));
                    }
                }
                "output" => {
                    tally.outputs += 1;
                    let limit = item["limit"].as_u64();
                    if verdict == (ProviderErrorKind::OutputLimit { limit }) {
                        tally.outputs_with_number += 1;
                    } else {
                        tally
                            .wrong
                            .push(format!("{verdict:?}, not {limit:?}: {text}"));
                    }
                }
                // Rate limits, credit without a number, auth, content policy, parameters:
                // none is taken for either.
                _ => {
                    tally.others += 1;
                    assert_eq!(verdict, ProviderErrorKind::Other, "{text}");
                }
            }
        }
        report.push(format!(
            "{}: {} of {} overflows caught; {} of {} output limits classified with their number; \
             {} others left alone\n  wrong: {:#?}",
            if held_out {
                "held out"
            } else {
                "written against"
            },
            tally.overflows_caught,
            tally.overflows,
            tally.outputs_with_number,
            tally.outputs,
            tally.others,
            tally.wrong
        ));
        assert!(
            tally.overflows_caught * 100 >= tally.overflows * 98,
            "{report:#?}"
        );
        assert!(
            tally.outputs_with_number * 100 >= tally.outputs * 95,
            "{report:#?}"
        );
    }
    println!("{}", report.join("\n"));
}

#[test]
fn a_rate_limit_is_not_ours_whatever_its_status() {
    let rate = "Rate limit reached for gpt-4o on tokens per min (TPM): Limit 30000, Used 29000";
    assert_eq!(
        classify_provider_error(Some(429), rate),
        ProviderErrorKind::Other
    );
    assert_eq!(
        classify_provider_error(None, rate),
        ProviderErrorKind::Other
    );
}

#[test]
fn the_retry_lowers_max_tokens_to_the_stated_number_or_the_models_known_limit() {
    let stated = ProviderErrorKind::OutputLimit {
        limit: Some(16_384),
    };
    assert_eq!(stated.retry_max_tokens(100_000, None), Some(16_384));
    // The error's number comes before the model's table.
    assert_eq!(stated.retry_max_tokens(100_000, Some(8_192)), Some(16_384));
    let unstated = ProviderErrorKind::OutputLimit { limit: None };
    assert_eq!(
        unstated.retry_max_tokens(200_000, Some(128_000)),
        Some(128_000)
    );
    // No number known, or none below what was asked: no retry can help.
    assert_eq!(unstated.retry_max_tokens(200_000, None), None);
    assert_eq!(stated.retry_max_tokens(16_384, None), None);
    assert_eq!(
        ProviderErrorKind::ContextOverflow.retry_max_tokens(100_000, Some(1)),
        None
    );
    assert_eq!(
        ProviderErrorKind::Other.retry_max_tokens(100_000, Some(1)),
        None
    );
}

/// An agent loop's answer to a provider's error, as `examples/agent_loop.rs` writes it: compact
/// on an overflow, lower `max_tokens` once on an output limit, surface anything else.
fn answer_error(
    status: u16,
    error: &str,
    messages: &mut Vec<toolsmith::history::Message>,
    max_tokens: &mut u64,
) -> Result<(), String> {
    use toolsmith::BudgetPolicy;
    use toolsmith::history::{RecoveryLevel, RecoveryPolicy, recover};
    match classify_provider_error(Some(status), error) {
        ProviderErrorKind::ContextOverflow => {
            let mut budget = BudgetPolicy::default();
            recover(
                RecoveryLevel::AggressiveBudget,
                messages,
                &mut budget,
                &RecoveryPolicy::default(),
            );
            Ok(())
        }
        verdict => match verdict.retry_max_tokens(*max_tokens, None) {
            Some(lower) => {
                *max_tokens = lower;
                Ok(())
            }
            None => Err(error.to_owned()),
        },
    }
}

#[test]
fn an_output_limit_recovery_leaves_the_history_byte_for_byte_as_it_was() {
    use toolsmith::history::{Block, Message, Role};
    let mut messages = vec![Message::user("summarise the build log")];
    for turn in 0..6 {
        let id = format!("call_{turn}");
        messages.push(Message::from_blocks(
            Role::Assistant,
            vec![Block::tool_use(
                &id,
                "run_command",
                serde_json::json!({ "command": "make" }),
            )],
        ));
        messages.push(Message::from_blocks(
            Role::User,
            vec![Block::tool_result(
                &id,
                "cc -c main.c\n".repeat(4_000),
                false,
            )],
        ));
    }
    let before = serde_json::to_string(&messages).unwrap();

    let mut max_tokens = 200_000;
    let output = "max_tokens: 200000 > 64000, which is the maximum allowed number of output tokens \
                  for claude-opus-4-20250514";
    answer_error(400, output, &mut messages, &mut max_tokens).unwrap();
    assert_eq!(max_tokens, 64_000);
    assert_eq!(serde_json::to_string(&messages).unwrap(), before);

    // Once: the same error again finds no lower number, and is surfaced.
    assert!(answer_error(400, output, &mut messages, &mut max_tokens).is_err());
    assert_eq!(serde_json::to_string(&messages).unwrap(), before);

    // An overflow is what changes the history.
    let overflow = "prompt is too long: 213462 tokens > 200000 maximum";
    answer_error(400, overflow, &mut messages, &mut max_tokens).unwrap();
    assert_ne!(serde_json::to_string(&messages).unwrap(), before);
}
