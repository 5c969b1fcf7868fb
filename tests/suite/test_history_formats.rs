//! Histories of OpenAI's Responses API and of Gemini, shaped as their documentation shows them
//! (`tests/data/histories`): converted exactly both ways, repaired, compacted and cleared, each
//! result checked by the format's own pairing rule written here, not by the library.

use proptest::prelude::*;
use serde_json::{Map, Value, json};
use toolsmith::history::{
    self, Block, ClearPolicy, CompactPolicy, Content, Message, from_gemini, from_responses,
    to_gemini, to_responses,
};

fn responses_fixture() -> Vec<Value> {
    serde_json::from_str(include_str!("../data/histories/responses.json")).unwrap()
}

fn gemini_fixture() -> Vec<Value> {
    serde_json::from_str(include_str!("../data/histories/gemini.json")).unwrap()
}

/// The Responses API's rule: every `function_call` has exactly one `function_call_output` with
/// its `call_id` after it, and every output a call before it.
fn responses_violations(items: &[Value]) -> Vec<String> {
    let mut found = Vec::new();
    for (i, item) in items.iter().enumerate() {
        let id = &item["call_id"];
        match item["type"].as_str() {
            Some("function_call") => {
                let outputs = items[i + 1..]
                    .iter()
                    .filter(|later| {
                        later["type"] == "function_call_output" && later["call_id"] == *id
                    })
                    .count();
                if outputs != 1 {
                    found.push(format!("call {id} has {outputs} outputs"));
                }
            }
            Some("function_call_output")
                if !items[..i].iter().any(|earlier| {
                    earlier["type"] == "function_call" && earlier["call_id"] == *id
                }) =>
            {
                found.push(format!("output {id} answers no earlier call"));
            }
            _ => {}
        }
    }
    found
}

/// Gemini's rule: the `functionCall`s of a `model` content are answered by as many
/// `functionResponse`s, name for name (and id for id when they have ids), in the content right
/// after it.
fn gemini_violations(contents: &[Value]) -> Vec<String> {
    let mut found = Vec::new();
    let parts = |c: &Value, key: &str| -> Vec<Value> {
        c["parts"]
            .as_array()
            .unwrap()
            .iter()
            .filter_map(|p| p.get(key).cloned())
            .collect()
    };
    for (i, content) in contents.iter().enumerate() {
        let calls = parts(content, "functionCall");
        if content["role"] == "model" && !calls.is_empty() {
            let Some(next) = contents.get(i + 1) else {
                found.push(format!("content {i}: calls and nothing after"));
                continue;
            };
            let mut answers = parts(next, "functionResponse");
            for call in &calls {
                let position = answers.iter().position(|answer| {
                    answer["name"] == call["name"]
                        && (call.get("id").is_none() || answer.get("id") == call.get("id"))
                });
                match position {
                    Some(at) => {
                        answers.remove(at);
                    }
                    None => found.push(format!("content {i}: {} unanswered", call["name"])),
                }
            }
            if !answers.is_empty() {
                found.push(format!(
                    "content {}: {} responses answer no call",
                    i + 1,
                    answers.len()
                ));
            }
        } else if i > 0
            && contents[i - 1]["role"] != "model"
            && !parts(content, "functionResponse").is_empty()
        {
            found.push(format!("content {i}: responses after no call"));
        }
    }
    found
}

#[test]
fn both_formats_convert_back_exactly() {
    let items = responses_fixture();
    let back = to_responses(&from_responses(&items).unwrap());
    assert_eq!(
        serde_json::to_string(&back).unwrap(),
        serde_json::to_string(&items).unwrap()
    );
    let contents = gemini_fixture();
    let back = to_gemini(&from_gemini(&contents).unwrap());
    assert_eq!(
        serde_json::to_string(&back).unwrap(),
        serde_json::to_string(&contents).unwrap()
    );
    // Valid as they are, and repair leaves them so.
    for messages in [
        from_responses(&items).unwrap(),
        from_gemini(&contents).unwrap(),
    ] {
        assert!(
            history::validate(&messages).is_empty(),
            "{:?}",
            history::validate(&messages)
        );
        let mut repaired = messages.clone();
        assert!(history::repair(&mut repaired).is_empty());
        assert_eq!(repaired, messages);
    }
}

/// Shapes the documentation's examples do not show: an output that is an object, a number or
/// absent; a call without arguments; a response without `response`, of several fields, of one
/// field that is not text; parts and contents with fields of their own, in unusual places.
/// Both ways, borrowed and owned, each gives back the same JSON text, field order included.
#[test]
fn unusual_shapes_convert_back_exactly_borrowed_or_owned() {
    let items = vec![
        json!({ "type": "function_call", "call_id": "c1", "name": "a" }),
        json!({ "output": { "ok": true }, "type": "function_call_output", "call_id": "c1" }),
        json!({ "type": "function_call", "name": "b", "arguments": "not json", "call_id": "c2" }),
        json!({ "type": "function_call_output", "call_id": "c2", "output": 42, "status": "done" }),
        json!({ "type": "function_call", "call_id": "c3", "name": "c", "arguments": "{}" }),
        json!({ "type": "function_call_output", "call_id": "c3" }),
        json!({ "role": "assistant", "content": "done" }),
    ];
    let contents = vec![
        json!({ "parts": [{ "functionCall": { "name": "a" } }], "role": "model" }),
        json!({ "role": "user", "parts": [{ "functionResponse": { "name": "a" } }] }),
        json!({ "role": "model", "parts": [
            { "functionCall": { "args": { "x": 1 }, "name": "b", "id": "i1" }, "thoughtSignature": "s" },
            { "functionCall": { "name": "c", "args": {} } },
            { "functionCall": { "id": "i2", "args": {}, "name": "d" } },
        ], "extra": 1 }),
        json!({ "role": "user", "parts": [
            { "functionResponse": { "id": "i1", "name": "b", "response": { "a": 1, "b": "two" } } },
            { "functionResponse": { "name": "c", "response": { "n": 7 } } },
            { "functionResponse": { "response": { "content": "as the tool said" }, "id": "i2", "name": "d" } },
            { "thought": true, "text": "and" },
            { "inlineData": { "mimeType": "image/png", "data": "AA==" } },
        ] }),
    ];
    let text = |values: &[Value]| serde_json::to_string(values).unwrap();
    // The two fields the Responses API requires and these items lack are written, last.
    let mut expected = items.clone();
    expected[0]["arguments"] = json!("{}");
    expected[5]["output"] = json!("");
    let messages = from_responses(&items).unwrap();
    assert_eq!(
        messages,
        history::from_responses_owned(items.clone()).unwrap()
    );
    assert!(history::validate(&messages).is_empty());
    assert_eq!(text(&to_responses(&messages)), text(&expected));
    assert_eq!(text(&history::into_responses(messages)), text(&expected));
    // A call's missing `args` and a response's missing `response` are written, empty.
    let mut expected = contents.clone();
    expected[0]["parts"][0]["functionCall"]["args"] = json!({});
    expected[1]["parts"][0]["functionResponse"]["response"] = json!({ "output": "" });
    let messages = from_gemini(&contents).unwrap();
    assert_eq!(
        messages,
        history::from_gemini_owned(contents.clone()).unwrap()
    );
    assert!(history::validate(&messages).is_empty());
    assert_eq!(text(&to_gemini(&messages)), text(&expected));
    assert_eq!(text(&history::into_gemini(messages)), text(&expected));
}

/// Messages read from another format and saved as JSON (the Anthropic shape, as an agent
/// persists its session) are read back with what each block was, and written back to the same
/// contents and items; a field the agent added beside it is kept too.
#[test]
fn read_histories_saved_as_json_convert_back_exactly() {
    let text = |values: &[Value]| serde_json::to_string(values).unwrap();
    let saved = |messages: &[Message]| -> Vec<Message> {
        let json = serde_json::to_string(messages).unwrap();
        serde_json::from_str(&json).unwrap()
    };
    let contents = gemini_fixture();
    let messages = from_gemini(&contents).unwrap();
    let json = serde_json::to_value(&messages).unwrap();
    assert!(json[0]["gemini_content"]["role"].is_string(), "{json}");
    assert!(json[0]["content"][0]["gemini_part"].is_object(), "{json}");
    let again = saved(&messages);
    assert_eq!(again, messages);
    assert_eq!(text(&to_gemini(&again)), text(&contents));

    let items = responses_fixture();
    let mut messages = from_responses(&items).unwrap();
    let call = messages
        .iter_mut()
        .flat_map(|message| match &mut message.content {
            Content::Blocks(blocks) => blocks.iter_mut(),
            Content::Text(_) => [].iter_mut(),
        })
        .find_map(|block| match block {
            Block::ToolUse(call) => Some(call),
            _ => None,
        })
        .unwrap();
    call.extra
        .insert("cache_control".to_owned(), json!({ "type": "ephemeral" }));
    let json = serde_json::to_value(&messages).unwrap();
    let call = json
        .as_array()
        .unwrap()
        .iter()
        .flat_map(|message| message["content"].as_array().into_iter().flatten())
        .find(|block| block["type"] == "tool_use")
        .unwrap();
    assert_eq!(call["cache_control"]["type"], "ephemeral");
    assert_eq!(call["responses_item"]["type"], "function_call");
    let again = saved(&messages);
    assert_eq!(again, messages);
    assert_eq!(text(&to_responses(&again)), text(&items));
}

#[test]
fn a_broken_responses_history_is_repaired_without_losing_a_real_output() {
    let mut items = responses_fixture();
    // The Bogotá output comes late, after the assistant's next message; a stray output names
    // no call; a new call has no output.
    let late = items.remove(6);
    items.insert(8, late);
    items.insert(
        3,
        json!({ "type": "function_call_output", "call_id": "call_nobody", "output": "?" }),
    );
    items.push(json!({ "type": "function_call", "call_id": "call_new", "name": "get_weather", "arguments": "{\"location\":\"Oslo\"}" }));
    assert!(!responses_violations(&items).is_empty());
    let mut messages = from_responses(&items).unwrap();
    let report = history::repair(&mut messages);
    let back = to_responses(&messages);
    assert!(
        responses_violations(&back).is_empty(),
        "{:?}\n{report}",
        responses_violations(&back)
    );
    assert_eq!(report.moved, ["call_YpMz7sVuwP4xfG2K9qLmN1cd"], "{report}");
    assert_eq!(report.synthesized, ["call_new"], "{report}");
    assert_eq!(report.orphans_removed, ["call_nobody"], "{report}");
    let bogota = back
        .iter()
        .find(|i| {
            i["call_id"] == "call_YpMz7sVuwP4xfG2K9qLmN1cd" && i["type"] == "function_call_output"
        })
        .unwrap();
    assert_eq!(
        bogota["output"][0]["text"], "14 °C, light rain",
        "the real output, as it was"
    );
    // Every message, reasoning and search item is still there.
    for kept in [
        "rs_6890e972fa7c819ca8bc561526b989170694874912ae0ea6",
        "ws_67c9fa0502748190b7dd390736892e100be649c1a5ff9609",
        "msg_6890e97a",
    ] {
        assert!(back.iter().any(|i| i["id"] == kept), "{kept}");
    }
    let mut again = from_responses(&back).unwrap();
    assert!(history::repair(&mut again).is_empty());
}

#[test]
fn gemini_calls_without_ids_pair_by_name_and_a_missing_response_names_its_function() {
    let mut contents = gemini_fixture();
    // The music's response is lost.
    contents[2]["parts"].as_array_mut().unwrap().remove(1);
    assert!(!gemini_violations(&contents).is_empty());
    let mut messages = from_gemini(&contents).unwrap();
    let report = history::repair(&mut messages);
    let back = to_gemini(&messages);
    assert!(
        gemini_violations(&back).is_empty(),
        "{:?}",
        gemini_violations(&back)
    );
    assert_eq!(report.synthesized.len(), 1, "{report}");
    // In call order: the written one in the music's place.
    let written = &back[2]["parts"][1]["functionResponse"];
    assert_eq!(written["name"], "start_music", "{written}");
    assert!(
        written.get("id").is_none(),
        "no id where the calls had none: {written}"
    );
    assert_eq!(
        back[2]["parts"][0], contents[2]["parts"][0],
        "the real responses as they were"
    );
}

#[test]
fn long_results_are_compacted_and_cleared_in_both_formats() {
    let big = "line of a long log\n".repeat(2_000);
    // Responses: the first output grows long, then four more turns pass.
    let mut items = responses_fixture();
    items[5]["output"] = Value::String(big.clone());
    for turn in 0..4 {
        items.push(json!({ "role": "user", "content": format!("and then {turn}?") }));
        items.push(json!({ "type": "message", "role": "assistant", "content": [{ "type": "output_text", "text": "ok" }] }));
    }
    let mut messages = from_responses(&items).unwrap();
    let report = history::microcompact(&mut messages, &CompactPolicy::default());
    assert_eq!(
        report.summarized,
        ["call_XOnF4B9DvB8EJVB3JvWnGg83"],
        "{report}"
    );
    let back = to_responses(&messages);
    assert!(
        back[5]["output"]
            .as_str()
            .unwrap()
            .starts_with("[Old tool result cleared")
    );
    assert!(responses_violations(&back).is_empty());

    // Gemini: a long response of one text field, cleared by tokens: the placeholder takes the
    // field's place.
    let mut contents = gemini_fixture();
    contents[6]["parts"][0]["functionResponse"]["response"] = json!({ "log": big });
    let mut messages = from_gemini(&contents).unwrap();
    let policy = ClearPolicy::default()
        .with_trigger_tokens(1_000)
        .with_keep_tool_uses(0);
    let report = history::clear_tool_uses(
        &mut messages,
        &policy,
        &toolsmith::tokens::CharsPerToken::default(),
    );
    assert!(report.cleared.contains(&"call-7a3f".to_owned()), "{report}");
    let back = to_gemini(&messages);
    let response = &back[6]["parts"][0]["functionResponse"];
    assert!(
        response["response"]["log"]
            .as_str()
            .unwrap()
            .starts_with("[Tool result cleared"),
        "{response}"
    );
    assert_eq!(response["id"], "call-7a3f");
    assert!(gemini_violations(&back).is_empty());
}

/// A saved block that is not an object is refused with what was wrong, not read as anything.
#[test]
fn a_saved_block_that_is_not_an_object_is_refused_by_name() {
    let error = serde_json::from_str::<Message>(r#"{"role": "user", "content": [3]}"#)
        .unwrap_err()
        .to_string();
    assert!(error.contains("must be a JSON object"), "{error}");
    let error = serde_json::from_str::<Message>(r#"{"role": "user", "content": 3}"#)
        .unwrap_err()
        .to_string();
    assert!(error.contains("a string or a list of blocks"), "{error}");
    let error = serde_json::from_str::<Block>("3").unwrap_err().to_string();
    assert!(error.contains("must be a JSON object"), "{error}");
    let block: Block = serde_json::from_str(r#"{"inlineData": {"data": "AA=="}}"#).unwrap();
    assert!(matches!(block, Block::Other(_)));
}

/// An object of these fields, in this order.
fn object(fields: Vec<(&str, Value)>) -> Value {
    Value::Object(
        fields
            .into_iter()
            .map(|(key, value)| (key.to_owned(), value))
            .collect::<Map<String, Value>>(),
    )
}

/// Fields in any order: what a provider, or an agent's own code, may write.
fn shuffled(fields: Vec<(&'static str, Value)>) -> impl Strategy<Value = Value> {
    Just(fields).prop_shuffle().prop_map(object)
}

fn gemini_part() -> impl Strategy<Value = Value> {
    let text = "[a-z \n]{0,12}";
    let name = prop::sample::select(vec!["ls", "read", "grep"]);
    let id = prop::option::of("[a-z0-9]{1,4}");
    prop_oneof![
        (text, any::<bool>()).prop_flat_map(|(text, thought)| {
            let mut fields = vec![("text", json!(text))];
            if thought {
                fields.push(("thought", json!(true)));
            }
            shuffled(fields)
        }),
        (name.clone(), id.clone(), any::<bool>()).prop_flat_map(|(name, id, signed)| {
            let mut call = vec![("name", json!(name)), ("args", json!({ "path": "src" }))];
            if let Some(id) = id {
                call.push(("id", json!(id)));
            }
            (shuffled(call), Just(signed)).prop_flat_map(|(call, signed)| {
                let mut part = vec![("functionCall", call)];
                if signed {
                    part.push(("thoughtSignature", json!("sig")));
                }
                shuffled(part)
            })
        }),
        (name, id, 0..3usize, "[a-z\n]{0,10}").prop_flat_map(|(name, id, shape, text)| {
            let response = match shape {
                0 => json!({ "output": text }),
                1 => json!({ "a": 1, "b": text }),
                _ => json!({ "result": { "ok": true } }),
            };
            let mut fields = vec![("name", json!(name)), ("response", response)];
            if let Some(id) = id {
                fields.push(("id", json!(id)));
            }
            shuffled(fields).prop_map(|response| json!({ "functionResponse": response }))
        }),
        Just(json!({ "inlineData": { "mimeType": "image/png", "data": "AA==" } })),
    ]
}

fn gemini_content() -> impl Strategy<Value = Value> {
    let role = prop::sample::select(vec!["user", "model"]);
    (
        role,
        prop::collection::vec(gemini_part(), 1..4),
        any::<bool>(),
    )
        .prop_flat_map(|(role, parts, more)| {
            let mut fields = vec![("role", json!(role)), ("parts", Value::Array(parts))];
            if more {
                fields.push(("note", json!("kept")));
            }
            shuffled(fields)
        })
}

fn responses_item() -> impl Strategy<Value = Value> {
    let call_id = "call_[0-9]{1,2}";
    prop_oneof![
        (call_id, any::<bool>()).prop_flat_map(|(call_id, status)| {
            let mut fields = vec![
                ("type", json!("function_call")),
                ("call_id", json!(call_id)),
                ("name", json!("ls")),
                ("arguments", json!("{\"path\":\"src\"}")),
            ];
            if status {
                fields.push(("status", json!("completed")));
            }
            shuffled(fields)
        }),
        (call_id, 0..3usize, "[a-z\n]{0,10}").prop_flat_map(|(call_id, shape, text)| {
            let output = match shape {
                0 => json!(text),
                1 => json!([{ "type": "input_text", "text": text }]),
                _ => json!({ "ok": true }),
            };
            shuffled(vec![
                ("type", json!("function_call_output")),
                ("call_id", json!(call_id)),
                ("output", output),
            ])
        }),
        "[a-z ]{0,10}".prop_map(|text| json!({ "role": "user", "content": text })),
        Just(json!({ "type": "reasoning", "id": "rs_1", "summary": [] })),
    ]
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(512))]

    /// Whatever the order of their fields, contents and items convert back to the same JSON
    /// text: read owned and written back, read borrowed and written back borrowed, and read,
    /// saved as JSON, read back from it and written back.
    #[test]
    fn any_field_order_converts_back_exactly(
        contents in prop::collection::vec(gemini_content(), 1..8),
        items in prop::collection::vec(responses_item(), 1..8),
    ) {
        let text = |values: &[Value]| serde_json::to_string(values).unwrap();
        let saved = |messages: &[Message]| -> Vec<Message> {
            serde_json::from_str(&serde_json::to_string(messages).unwrap()).unwrap()
        };
        let messages = from_gemini(&contents).unwrap();
        prop_assert_eq!(text(&to_gemini(&messages)), text(&contents));
        prop_assert_eq!(text(&to_gemini(&saved(&messages))), text(&contents));
        let owned = history::into_gemini(history::from_gemini_owned(contents.clone()).unwrap());
        prop_assert_eq!(text(&owned), text(&contents));

        let messages = from_responses(&items).unwrap();
        prop_assert_eq!(text(&to_responses(&messages)), text(&items));
        prop_assert_eq!(text(&to_responses(&saved(&messages))), text(&items));
        let owned =
            history::into_responses(history::from_responses_owned(items.clone()).unwrap());
        prop_assert_eq!(text(&owned), text(&items));
    }
}
