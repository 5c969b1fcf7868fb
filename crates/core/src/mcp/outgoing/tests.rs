use super::*;
use crate::artifacts::MemoryStore;
use proptest::prelude::*;

/// The chars a reader sees of a fitted result's content, and of its structure's JSON.
fn seen_and_structure(fitted: &Value) -> (usize, usize) {
    let seen = fitted["content"]
        .as_array()
        .unwrap()
        .iter()
        .map(visible_chars)
        .sum();
    let structure = fitted
        .get("structuredContent")
        .map_or(0, |value| value.to_string().chars().count());
    (seen, structure)
}

/// One content block of a result, as a server may write it.
fn block() -> impl Strategy<Value = Value> {
    let text = (0usize..30_000, any::<u8>()).prop_map(|(chars, seed)| {
        let line = format!("line {seed} of the output, with an id {chars}\n");
        json!({ "type": "text", "text": line.repeat(chars / line.len() + 1) })
    });
    let image = (1usize..400_000).prop_map(
        |bytes| json!({ "type": "image", "mimeType": "image/png", "data": "A".repeat(bytes) }),
    );
    let link = (0usize..2_000).prop_map(|chars| {
        json!({ "type": "resource_link", "uri": format!("file:///{}", "d/".repeat(chars / 2)),
                "name": "a file" })
    });
    let resource = (0usize..20_000).prop_map(|chars| {
        json!({ "type": "resource",
                "resource": { "uri": "file:///log", "mimeType": "text/plain",
                              "text": "x".repeat(chars) } })
    });
    // A JSON document as one text block, compact or pretty: cut as JSON, within the cap too.
    let json_text = (0usize..3_000, any::<bool>()).prop_map(|(rows, pretty)| {
        let rows: Vec<Value> = (0..rows)
            .map(|i| json!({ "id": i, "name": format!("row {i}") }))
            .collect();
        let text = if pretty {
            serde_json::to_string_pretty(&rows).unwrap()
        } else {
            serde_json::to_string(&rows).unwrap()
        };
        json!({ "type": "text", "text": text })
    });
    prop_oneof![4 => text, 2 => json_text, 2 => image, 1 => link, 1 => resource]
}

fn result() -> impl Strategy<Value = (Value, bool)> {
    (
        prop::collection::vec(block(), 0..6),
        any::<bool>(),
        // No rows at times: a structure its schema (`minItems: 1`) does not accept, as a
        // server may send.
        prop::option::of(prop_oneof![1 => Just(0usize), 9 => 0usize..40_000]),
    )
        .prop_map(|(content, is_error, structure)| {
            let mut result = json!({ "content": content });
            if is_error {
                result["isError"] = json!(true);
            }
            if let Some(rows) = structure {
                let rows: Vec<Value> = (0..rows / 40)
                    .map(|i| json!({ "row": i, "text": "a row of the table" }))
                    .collect();
                result["structuredContent"] = json!({ "rows": rows });
            }
            (result, is_error)
        })
}

fn call(schema: Option<&OutputSchema>) -> Call<'_> {
    Call {
        tool: "a_tool",
        schema,
        send: Copies::Both,
    }
}

/// What most servers send: `JSON.stringify` of a large array as one text block. Cut, it is
/// still JSON, its first and last elements whole and the marker inside naming the artifact.
#[test]
fn a_json_text_block_is_cut_to_json() {
    let runtime = tokio::runtime::Builder::new_current_thread()
        .build()
        .unwrap();
    let store = Arc::new(MemoryStore::new());
    let fitting = Fitting::new(20_000, store.clone(), MediaLimits::default());
    let rows: Vec<Value> = (0..10_000)
        .map(|i| json!({ "id": i, "name": format!("item {i}"), "tags": ["a", "b"] }))
        .collect();
    for text in [
        serde_json::to_string(&rows).unwrap(),
        serde_json::to_string_pretty(&rows).unwrap(),
    ] {
        let result = json!({ "content": [{ "type": "text", "text": text }] });
        let raw = RawValue::from_string(result.to_string()).unwrap();
        let (fitted, report) = runtime
            .block_on(tool_result(&raw, &call(None), &fitting))
            .unwrap();
        let cut = fitted["content"][0]["text"].as_str().unwrap();
        assert!(cut.chars().count() <= 20_000);
        let value: Value = serde_json::from_str(cut).expect("the cut text is JSON");
        let kept = value.as_array().unwrap();
        assert_eq!(kept[0], rows[0]);
        assert_eq!(kept.last().unwrap(), rows.last().unwrap());
        let marker = crate::trim::find_marker(cut).expect("a marker");
        let id = report.artifacts[0].as_str();
        assert!(cut.contains(id), "the marker names artifact {id}");
        assert_eq!(marker.unit, "items");
    }
}

/// The memory server's `read_graph`: the graph as pretty JSON text, and as the structure
/// its schema describes.
fn graph(entities: usize) -> (Value, Value) {
    let entity = json!({ "type": "object", "properties": {
        "name": { "type": "string" }, "entityType": { "type": "string" },
        "observations": { "type": "array", "items": { "type": "string" } } },
        "required": ["name", "entityType", "observations"], "additionalProperties": false });
    let relation = json!({ "type": "object", "properties": {
        "from": { "type": "string" }, "to": { "type": "string" },
        "relationType": { "type": "string" } },
        "required": ["from", "to", "relationType"], "additionalProperties": false });
    let schema = json!({ "type": "object", "properties": {
        "entities": { "type": "array", "items": entity },
        "relations": { "type": "array", "items": relation } },
        "required": ["entities", "relations"], "additionalProperties": false,
        "$schema": "http://json-schema.org/draft-07/schema#" });
    let graph = json!({
        "entities": (0..entities).map(|i| json!({ "name": format!("entity {i}"),
            "entityType": "person", "observations": [format!("observation of {i}")] }))
            .collect::<Vec<_>>(),
        "relations": (1..entities).map(|i| json!({ "from": format!("entity {}", i - 1),
            "to": format!("entity {i}"), "relationType": "knows" })).collect::<Vec<_>>(),
    });
    let result = json!({
        "content": [{ "type": "text", "text": serde_json::to_string_pretty(&graph).unwrap() }],
        "structuredContent": graph,
    });
    (schema, result)
}

fn fit_typed_result(
    result: &Value,
    schema: &Value,
    cap: usize,
    send: Copies,
) -> (Value, CutFacts, usize) {
    let runtime = tokio::runtime::Builder::new_current_thread()
        .build()
        .unwrap();
    let store = Arc::new(MemoryStore::new());
    let fitting = Fitting::new(cap, store.clone(), MediaLimits::default());
    let raw_schema = schema.clone();
    let schema = OutputSchema::new(schema);
    let raw = RawValue::from_string(result.to_string()).unwrap();
    let call = Call {
        tool: "read_graph",
        schema: Some(&schema),
        send,
    };
    let (fitted, report) = runtime
        .block_on(tool_result(&raw, &call, &fitting))
        .unwrap();
    let (seen, structure) = seen_and_structure(&fitted);
    assert!(seen + structure <= cap, "{seen} + {structure} over {cap}");
    assert_eq!(report.sent_chars as usize, seen + structure);
    if let Some(structure) = fitted.get("structuredContent") {
        // Valid against the schema the client is listed (the note's member added to it).
        let listed = OutputSchema::new(&crate::structure::listed_schema(&raw_schema));
        assert!(
            listed.accepts(structure),
            "the structure matches its listed schema"
        );
    }
    (fitted, report, store.len())
}

#[test]
fn a_typed_structure_and_its_json_text_are_cut_as_one_selection() {
    let (schema, result) = graph(400);
    let (fitted, report, stored) = fit_typed_result(&result, &schema, 4_000, Copies::Auto);
    let structure = &fitted["structuredContent"];
    let entities = structure["entities"].as_array().unwrap();
    assert!(entities.len() > 3 && entities.len() < 400);
    assert_eq!(entities[0]["name"], "entity 0");
    assert_eq!(entities.last().unwrap()["name"], "entity 399");
    // The text is the same cut, as the server laid it out; the structure says in it that it
    // was cut, as the note after the text does.
    let text = fitted["content"][0]["text"].as_str().unwrap();
    let mut data = structure.clone();
    let inside = data
        .as_object_mut()
        .unwrap()
        .remove(crate::structure::NOTE_MEMBER)
        .expect("the cut says so inside it");
    assert_eq!(text, serde_json::to_string_pretty(&data).unwrap());
    // A note after it names the artifact that holds the whole; `_meta` states the places.
    let note = fitted["content"][1]["text"].as_str().unwrap();
    let id = report.artifacts[0].as_str();
    assert!(note.contains("/entities") && note.contains(id), "{note}");
    assert!(inside.as_str().unwrap().contains(id), "{inside}");
    assert_eq!(stored, 1, "the whole structure, kept once");
    let facts = &fitted["_meta"][CUT_META_KEY]["structure"];
    assert_eq!(facts["artifact"], id);
    assert_eq!(facts["cuts"][0]["pointer"], "/entities");
    assert_eq!(facts["cuts"][0]["total"], 400);
    assert_eq!(facts["cuts"][0]["kept"], entities.len());
}

#[test]
fn a_python_list_is_cut_once_its_texts_the_items_kept() {
    // A tool returning `list[Row]`: a text per row, and `{"result": rows}`.
    let schema = json!({ "$defs": { "Row": { "type": "object", "properties": {
        "id": { "type": "integer" }, "name": { "type": "string" }, "ok": { "type": "boolean" } },
        "required": ["id", "name", "ok"] } },
        "type": "object", "properties": { "result": { "type": "array",
        "items": { "$ref": "#/$defs/Row" } } }, "required": ["result"] });
    let rows: Vec<Value> = (0..2_000)
        .map(|i| json!({ "id": i, "name": format!("row {i}"), "ok": i != 777 }))
        .collect();
    let texts: Vec<Value> = rows
        .iter()
        .map(|row| json!({ "type": "text", "text": serde_json::to_string_pretty(row).unwrap() }))
        .collect();
    let result = json!({ "content": texts, "structuredContent": { "result": rows } });
    for send in [Copies::Auto, Copies::StructuredOnly] {
        let (fitted, _, stored) = fit_typed_result(&result, &schema, 8_000, send);
        assert_eq!(stored, 1, "one artifact for one result");
        let kept = fitted["structuredContent"]["result"].as_array().unwrap();
        assert!(kept.contains(&rows[777]), "the failing row is kept");
        let content = fitted["content"].as_array().unwrap();
        assert!(
            content.iter().all(|block| visible_chars(block) > 0),
            "no empty block"
        );
        if send == Copies::Auto {
            // A text per kept row, then the note.
            assert_eq!(content.len(), kept.len() + 1);
            for (block, row) in content.iter().zip(kept) {
                assert_eq!(block["text"], serde_json::to_string_pretty(row).unwrap());
            }
        } else {
            assert!(content.is_empty(), "{content:?}");
        }
    }
}

#[test]
fn a_structure_no_cut_of_which_fits_is_the_over_cap_error_never_the_whole() {
    let schema = json!({ "type": "object", "properties": {
        "rows": { "type": "array", "minItems": 3_000 } }, "required": ["rows"] });
    let result =
        json!({ "content": [], "structuredContent": { "rows": (0..3_000).collect::<Vec<_>>() } });
    let (fitted, report, _) = fit_typed_result(&result, &schema, 4_000, Copies::Auto);
    assert_eq!(fitted["isError"], true);
    assert!(fitted.get("structuredContent").is_none());
    let text = fitted["content"][0]["text"].as_str().unwrap();
    assert!(
        text.contains("output schema") && text.contains(report.artifacts[0].as_str()),
        "{text}"
    );
}

#[test]
fn a_structure_that_only_wraps_its_text_is_not_sent_by_default() {
    let schema = json!({ "properties": { "result": { "title": "Result", "type": "string" } },
                         "required": ["result"], "title": "readOutput", "type": "object" });
    let text = "a line of the log\n".repeat(300);
    let result = json!({ "content": [{ "type": "text", "text": text }],
                         "structuredContent": { "result": text } });
    let (fitted, _, _) = fit_typed_result(&result, &schema, 10_000, Copies::Auto);
    assert!(fitted.get("structuredContent").is_none());
    assert_eq!(
        fitted["content"][0]["text"], text,
        "the text whole, within the cap"
    );
    let (both, _, _) = fit_typed_result(&result, &schema, 10_000, Copies::Both);
    assert!(both.get("structuredContent").is_some());
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 96, ..ProptestConfig::default() })]

    /// A cap in tokens holds on every token a reader sees (text, notes, markers, other
    /// blocks and the structure), for any cap; the facts state the tokens sent; a result
    /// fitted again, smaller, stores each of its texts once.
    #[test]
    fn a_cap_in_tokens_holds_on_what_a_reader_sees_and_each_text_is_stored_once(
        (result, _) in result(),
        max in prop_oneof![0usize..64, 64usize..3_000],
        per in 1usize..6,
    ) {
        let runtime = tokio::runtime::Builder::new_current_thread().build().unwrap();
        let store = Arc::new(MemoryStore::new());
        let counter = Arc::new(crate::tokens::CharsPerToken(per));
        let fitting = Fitting {
            tokens: Some(TokenCap::new(max, counter.clone())),
            ..Fitting::new(40_000, store.clone(), MediaLimits::default())
        };
        let raw = RawValue::from_string(result.to_string()).unwrap();
        let (fitted, report) = runtime
            .block_on(tool_result(&raw, &call(None), &fitting))
            .unwrap();
        let seen = tokens_seen(&fitted, counter.as_ref());
        prop_assert!(seen <= max, "{seen} tokens seen against a cap of {max}");
        if report.cut {
            prop_assert_eq!(report.tokens, Some((max, seen)));
            let facts = &fitted["_meta"][CUT_META_KEY]["tokens"];
            prop_assert_eq!(facts["sent"].as_u64(), Some(seen as u64));
        }
        // However many times it was fitted, each text was stored once.
        let named: std::collections::HashSet<_> = report.artifacts.iter().collect();
        prop_assert_eq!(store.len(), named.len());
    }

    /// The cap holds on every char a reader sees of the content, notes and markers counted,
    /// for any cap (tiny ones too); `isError` is the server's, and so is the structure of a
    /// tool with an output schema.
    #[test]
    fn the_cap_holds_with_every_notice_counted_and_is_error_is_the_servers(
        (result, is_error) in result(),
        cap in prop_oneof![0usize..64, 64usize..2_000, 2_000usize..40_000],
        with_schema in any::<bool>(),
    ) {
        let runtime = tokio::runtime::Builder::new_current_thread().build().unwrap();
        let fitting = Fitting::new(cap, Arc::new(MemoryStore::new()), MediaLimits::default());
        let schema = with_schema.then(|| {
            OutputSchema::new(&json!({
                "type": "object",
                "properties": { "rows": { "type": "array", "minItems": 1 } },
                "required": ["rows"],
            }))
        });
        let raw = RawValue::from_string(result.to_string()).unwrap();
        let (fitted, report) = runtime
            .block_on(tool_result(&raw, &call(schema.as_ref()), &fitting))
            .unwrap();
        // The report's figures are what happened: the chars sent are the chars a reader
        // sees, the structure's JSON included, and each artifact it names was written.
        let (seen, structure_chars) = seen_and_structure(&fitted);
        prop_assert!(
            seen + structure_chars <= cap,
            "{seen} chars seen and a structure of {structure_chars} against a cap of {cap}"
        );
        let sent = report.sent_chars as usize;
        prop_assert_eq!(sent, seen + structure_chars);
        let given: usize = result["content"]
            .as_array()
            .unwrap()
            .iter()
            .map(visible_chars)
            .sum();
        if report.compacted && !report.cut {
            // A JSON text that fits once written compactly lost nothing: fewer chars sent, the
            // change stated, nothing stored.
            prop_assert!(report.sent_chars < report.received_chars);
            let facts = &fitted["_meta"][CUT_META_KEY];
            let cuts = facts["cuts"].as_array().map_or(&[][..], Vec::as_slice);
            prop_assert!(cuts.iter().any(|cut| cut["compacted"] == json!(true)), "{facts}");
            prop_assert!(report.artifacts.is_empty());
        } else if !report.cut {
            prop_assert_eq!(report.received_chars, report.sent_chars);
            prop_assert_eq!(seen, given);
        }
        for id in &report.artifacts {
            let first_line = crate::artifacts::PageRequest {
                offset: 0,
                char_offset: 0,
                limit: Some(1),
                max_bytes: 64,
            };
            prop_assert!(
                fitting.store.read_page(id, first_line).is_ok(),
                "artifact {id} not written"
            );
        }
        // A tool with an output schema keeps its structure, cut by the schema (a client
        // checks it is there), or answers the over-cap error when no valid cut fits;
        // without one, a structure over the cap may be left out, the content saying so.
        // `isError` is the server's but for that error.
        let had = result.get("structuredContent").is_some();
        let kept = fitted.get("structuredContent").is_some();
        let over = !is_error && fitted.get("isError") == Some(&json!(true));
        prop_assert!(!kept || had, "a structure made up");
        prop_assert!(!over || (with_schema && had && !kept), "an error made up");
        if over && cap > 300 {
            let text = fitted["content"][0]["text"].as_str().unwrap();
            prop_assert!(text.contains("matches the tool's output schema"), "{text}");
        }
        if with_schema && !is_error && !over {
            prop_assert_eq!(kept, had);
        }
        // A structure sent as the server sent it is the server's, valid or not; one that was
        // cut is valid.
        if let (Some(schema), true) = (&schema, kept) {
            let structure = &fitted["structuredContent"];
            prop_assert!(
                structure == &result["structuredContent"] || schema.accepts(structure),
                "a cut structure the schema does not accept: {structure}"
            );
        }
    }
}
