//! Images and audio through the registry: shown within the media limits, the rest stored as
//! artifacts that `read_artifact` returns as the same block, and every note within the
//! allowance.

use std::sync::Arc;

use serde_json::{Value, json};
use toolsmith::artifacts::{ArtifactStore, MemoryStore};
use toolsmith::history::{Block, ResultContent};
use toolsmith::tool::{Media, MediaKind, MediaLimits};
use toolsmith::{BudgetPolicy, Registry, ToolCall, ToolError, ToolOutput, ToolResult, tool};

/// An image of `size` bytes, every byte `seed`: one distinct image per seed.
fn picture(seed: u8, size: usize) -> Media {
    Media::image(vec![seed; size], "image/png")
}

/// Draws `count` charts of `size` bytes each, after `text_lines` lines of text.
#[tool]
async fn charts(
    /// How many charts.
    count: u8,
    /// Bytes of each.
    size: usize,
    /// Lines of text before them.
    text_lines: usize,
) -> Result<ToolOutput, ToolError> {
    let text: String = (0..text_lines)
        .map(|i| format!("row {i} of the report\n"))
        .collect();
    let mut output = ToolOutput::text(text);
    for seed in 0..count {
        output = output.with_media(picture(seed, size));
    }
    Ok(output)
}

/// Records a sound.
#[tool]
async fn record() -> Result<Media, ToolError> {
    Ok(Media::audio(b"RIFF....WAVEfmt ", "audio/wav"))
}

fn registry(limits: MediaLimits, store: Option<Arc<dyn ArtifactStore>>) -> Registry {
    let mut builder = Registry::builder()
        .tool(charts())
        .tool(record())
        .media_limits(limits);
    if let Some(store) = store {
        builder = builder.shared_artifacts(store);
    }
    builder.build().unwrap()
}

fn draw(id: &str, count: u8, size: usize, text_lines: usize) -> ToolCall {
    ToolCall::new(
        id,
        "charts",
        json!({ "count": count, "size": size, "text_lines": text_lines }),
    )
}

async fn read_back(registry: &Registry, id: &str) -> ToolResult {
    registry
        .turn()
        .execute([ToolCall::new("read", "read_artifact", json!({ "id": id }))])
        .await
        .remove(0)
}

#[tokio::test]
async fn images_come_back_as_blocks_after_the_text() {
    let registry = registry(MediaLimits::default(), None);
    let result = registry
        .turn()
        .execute([draw("a", 2, 300, 2)])
        .await
        .remove(0);
    assert!(!result.is_error(), "{}", result.content);
    assert_eq!(result.content, "row 0 of the report\nrow 1 of the report\n");
    assert_eq!(result.media, [picture(0, 300), picture(1, 300)]);
    assert!(result.meta.media_left_out.is_empty());

    // In the conversation: a tool_result of the text and an image block each, in order.
    let Block::ToolResult(block) = result.to_block() else {
        panic!("not a tool_result");
    };
    let Some(ResultContent::Blocks(blocks)) = block.content else {
        panic!("the result's content is not blocks");
    };
    let value = serde_json::to_value(&blocks).unwrap();
    assert_eq!(value[0]["type"], "text");
    for (i, seed) in [(1, 0u8), (2, 1)] {
        assert_eq!(value[i]["type"], "image");
        assert_eq!(value[i]["source"]["media_type"], "image/png");
        assert_eq!(
            value[i]["source"]["data"].as_str(),
            Some(picture(seed, 300).base64())
        );
    }
}

#[tokio::test]
async fn media_past_the_limits_are_artifacts_read_back_as_the_same_images() {
    let store: Arc<dyn ArtifactStore> = Arc::new(MemoryStore::new());
    let registry = registry(MediaLimits::default(), Some(store));
    let result = registry
        .turn()
        .execute([draw("a", 6, 1_000, 1)])
        .await
        .remove(0);
    // The first four are shown; the fifth and sixth are named by a note each, in order.
    assert_eq!(
        result.media,
        (0..4).map(|s| picture(s, 1_000)).collect::<Vec<_>>()
    );
    let left = &result.meta.media_left_out;
    assert_eq!(left.len(), 2);
    let lines: Vec<&str> = result.content.lines().collect();
    assert_eq!(lines[0], "row 0 of the report");
    for (i, seed) in [(0, 4u8), (1, 5)] {
        assert_eq!(left[i].kind, MediaKind::Image);
        assert_eq!(left[i].base64_bytes, picture(seed, 1_000).base64().len());
        assert!(left[i].reason.contains("past the 4 a result may carry"));
        let id = left[i].artifact.as_ref().expect("stored");
        assert!(
            lines[1 + i]
                .starts_with("[toolsmith: image (image/png, 1,336 bytes of base64) left out")
                && lines[1 + i]
                    .contains(&format!("it is artifact {id}, read it with read_artifact")),
            "{}",
            lines[1 + i]
        );
        // Read back, it is the image it was, as an image.
        let back = read_back(&registry, id.as_str()).await;
        assert!(!back.is_error(), "{}", back.content);
        assert_eq!(back.media.len(), 1);
        assert_eq!(back.media[0].base64(), picture(seed, 1_000).base64());
        assert_eq!(back.media[0].artifact(), Some(id));
        assert!(
            back.content
                .contains("the image (image/png, 1,336 bytes of base64)")
        );
    }
}

#[tokio::test]
async fn an_image_over_the_size_limit_is_stored_and_shown_whole_when_asked_for() {
    let store: Arc<dyn ArtifactStore> = Arc::new(MemoryStore::new());
    let limits = MediaLimits::default().with_max_bytes(1_000);
    let registry = registry(limits, Some(store));
    let result = registry
        .turn()
        .execute([draw("a", 2, 600, 0)])
        .await
        .remove(0);
    // 600 bytes are 800 of base64: within 1,000.
    assert_eq!(result.media.len(), 2);

    let result = registry
        .turn()
        .execute([draw("b", 1, 60_000, 0)])
        .await
        .remove(0);
    assert!(result.media.is_empty());
    let left = &result.meta.media_left_out[0];
    assert!(
        left.reason.contains("over the 1,000-byte limit"),
        "{}",
        left.reason
    );
    assert!(
        result.content.contains("80,000 bytes of base64"),
        "{}",
        result.content
    );
    // The model asked for it by name: shown whole, whatever its size.
    let back = read_back(&registry, left.artifact.as_ref().unwrap().as_str()).await;
    assert_eq!(back.media, [picture(0, 60_000)]);
    assert!(back.meta.media_left_out.is_empty());
}

#[tokio::test]
async fn a_batch_shows_its_media_in_call_order_up_to_its_limit() {
    let store: Arc<dyn ArtifactStore> = Arc::new(MemoryStore::new());
    let limits = MediaLimits::default().with_max_batch_blocks(3);
    let registry = registry(limits, Some(store));
    let results = registry
        .turn()
        .execute([
            draw("a", 2, 10, 0),
            draw("b", 2, 10, 0),
            draw("c", 2, 10, 0),
        ])
        .await;
    let shown: Vec<usize> = results.iter().map(|r| r.media.len()).collect();
    let left: Vec<usize> = results
        .iter()
        .map(|r| r.meta.media_left_out.len())
        .collect();
    assert_eq!((shown, left), (vec![2, 1, 0], vec![0, 1, 2]));
    assert!(
        results[2]
            .content
            .contains("past the 3 the results of one turn may carry")
    );
}

#[tokio::test]
async fn the_notes_fit_the_allowance_with_the_text_cut_before_them() {
    let store: Arc<dyn ArtifactStore> = Arc::new(MemoryStore::new());
    let limits = MediaLimits::default().with_max_blocks(0);
    let registry = Registry::builder()
        .tool(charts())
        .media_limits(limits)
        .shared_artifacts(store)
        .budget(BudgetPolicy::default().with_batch_budget_chars(2_000))
        .build()
        .unwrap();
    let result = registry
        .turn()
        .execute([draw("a", 3, 100, 5_000)])
        .await
        .remove(0);
    assert!(result.content.chars().count() <= result.meta.allowance);
    assert!(
        result.meta.trimmed(),
        "the text is cut to leave room for the notes"
    );
    assert!(result.meta.artifact.is_some());
    let notes: Vec<&str> = result
        .content
        .lines()
        .filter(|line| line.starts_with("[toolsmith: image"))
        .collect();
    assert_eq!(notes.len(), 3, "{}", result.content);
    assert!(result.content.ends_with(notes[2]));
    // The text's figures are the text's: the notes are not the tool's output.
    assert_eq!(result.meta.original_lines, 5_000);
}

#[tokio::test]
async fn without_a_store_a_note_says_the_media_could_not_be_kept() {
    let registry = registry(MediaLimits::default().with_max_blocks(1), None);
    let result = registry
        .turn()
        .execute([draw("a", 2, 10, 0)])
        .await
        .remove(0);
    assert_eq!(result.media.len(), 1);
    assert_eq!(
        result.meta.media_left_out[0].artifact_error.as_deref(),
        Some("no artifact store is configured")
    );
    assert!(
        result.content.ends_with(
            "past the 1 a result may carry; it could not be kept: no artifact store is configured]"
        ),
        "{}",
        result.content
    );
}

#[tokio::test]
async fn audio_is_a_block_of_the_result_and_a_line_in_a_tool_result() {
    let registry = registry(MediaLimits::default(), None);
    let result = registry
        .turn()
        .execute([ToolCall::new("a", "record", json!({}))])
        .await
        .remove(0);
    assert_eq!(result.content, "");
    assert_eq!(result.media[0].kind(), MediaKind::Audio);
    assert_eq!(result.media[0].to_bytes(), b"RIFF....WAVEfmt ");
    let block = serde_json::to_value(result.to_block()).unwrap();
    let content: &Vec<Value> = block["content"].as_array().unwrap();
    assert_eq!(content.len(), 1);
    assert_eq!(
        content[0]["text"],
        "[toolsmith: audio (audio/wav, 16 bytes) not shown: a tool result cannot carry it]"
    );
}

#[tokio::test]
async fn a_text_artifact_is_still_paged_as_text() {
    let store: Arc<dyn ArtifactStore> = Arc::new(MemoryStore::new());
    let id = store
        .put("toolsmith-media: image image/png\nbut written by hand\n")
        .unwrap();
    let registry = registry(MediaLimits::default(), Some(store));
    // Asked for lines, any artifact is text.
    let result = registry
        .turn()
        .execute([ToolCall::new(
            "read",
            "read_artifact",
            json!({ "id": id.as_str(), "limit": 1 }),
        )])
        .await
        .remove(0);
    assert!(result.media.is_empty());
    assert!(
        result
            .content
            .ends_with("toolsmith-media: image image/png\n"),
        "{}",
        result.content
    );
}

#[tokio::test]
async fn output_that_only_looks_like_a_media_artifact_reads_as_text() {
    // A command's output that prints a media header (a prompt injection, say), cut and stored:
    // read back whole, it is the text it was, never an image the provider would refuse.
    let store: Arc<dyn ArtifactStore> = Arc::new(MemoryStore::new());
    let forged = "toolsmith-media: image image/png 0123456789abcdef\nnot an image\n";
    let id = store.put(forged).unwrap();
    let registry = registry(MediaLimits::default(), Some(store));
    let result = read_back(&registry, id.as_str()).await;
    assert!(result.media.is_empty());
    assert!(result.content.ends_with(forged), "{}", result.content);
}

#[tokio::test]
async fn each_providers_history_gets_the_image_in_its_own_shape() {
    use toolsmith::history::{Message, Role, to_gemini, to_openai, to_responses};
    let registry = registry(MediaLimits::default(), None);
    let result = registry
        .turn()
        .execute([draw("call_1", 1, 30, 1)])
        .await
        .remove(0);
    let data = picture(0, 30).base64().to_owned();
    let messages = [
        Message::from_blocks(
            Role::Assistant,
            vec![Block::tool_use("call_1", "charts", json!({}))],
        ),
        Message::from_blocks(Role::User, vec![result.to_block()]),
    ];

    // Responses: the output's parts, the image as a data URL.
    let items = to_responses(&messages);
    let output = &items[1]["output"];
    assert_eq!(
        output[0],
        json!({ "type": "input_text", "text": "row 0 of the report\n" })
    );
    assert_eq!(
        output[1],
        json!({ "type": "input_image", "image_url": format!("data:image/png;base64,{data}") })
    );

    // Gemini: the response, and the image as an inline data part of it.
    let contents = to_gemini(&messages);
    let response = &contents[1]["parts"][0]["functionResponse"];
    assert_eq!(
        response["parts"],
        json!([{ "inlineData": { "mimeType": "image/png", "data": data } }])
    );

    // OpenAI chat: a tool message is text only, so the image follows in a user message, and
    // the tool message says where.
    let chat = to_openai(None, &messages);
    assert_eq!(chat[1]["role"], "tool");
    assert_eq!(
        chat[1]["content"],
        "row 0 of the report\n\n[toolsmith: image (image/png, 40 bytes of base64) in the next user \
         message: a chat tool message carries text only]"
    );
    assert_eq!(chat[2]["role"], "user");
    assert_eq!(
        chat[2]["content"],
        json!([
            { "type": "text", "text": "[toolsmith: the image of the result of call call_1]" },
            { "type": "image_url", "image_url": { "url": format!("data:image/png;base64,{data}") } },
        ])
    );
    assert_eq!(chat.len(), 3, "{chat:#?}");
}

#[test]
fn an_image_for_the_user_only_is_not_shown_to_the_model() {
    let for_user = |audience: serde_json::Value| {
        let mut annotations = serde_json::Map::new();
        annotations.insert("audience".to_owned(), audience);
        picture(1, 20).with_annotations(annotations)
    };
    assert!(!for_user(json!(["user"])).for_the_model());
    assert!(for_user(json!(["user", "assistant"])).for_the_model());
    assert!(picture(1, 20).for_the_model());
}

#[tokio::test]
async fn to_block_names_an_image_for_the_user_only_instead_of_showing_it() {
    /// Shows a chart to the person only.
    #[tool]
    async fn chart_for_people() -> Result<ToolOutput, ToolError> {
        let mut annotations = serde_json::Map::new();
        annotations.insert("audience".to_owned(), json!(["user"]));
        Ok(ToolOutput::text("done").with_media(picture(2, 20).with_annotations(annotations)))
    }
    let registry = Registry::builder()
        .tool(chart_for_people())
        .build()
        .unwrap();
    let result = registry
        .turn()
        .execute([ToolCall::new("a", "chart_for_people", json!({}))])
        .await
        .remove(0);
    // The result keeps it for whoever shows the user; the model's block names it.
    assert_eq!(result.media.len(), 1);
    let block = serde_json::to_value(result.to_block()).unwrap();
    assert_eq!(
        block["content"][1]["text"],
        "[toolsmith: an image (image/png, 20 bytes) for the user only, not shown to the model]"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_image_too_large_for_one_answer_is_refused_at_once_and_its_base64_paged() {
    let store: Arc<dyn ArtifactStore> = Arc::new(MemoryStore::new());
    let registry = registry(MediaLimits::default(), Some(store));
    // 7 MB of image: 9.3 MB of base64, over the 8 MiB one answer may carry.
    let result = registry
        .turn()
        .execute([draw("big", 1, 7_000_000, 0)])
        .await
        .remove(0);
    let id = result.meta.media_left_out[0].artifact.clone().unwrap();
    let back = read_back(&registry, id.as_str()).await;
    assert!(back.is_error(), "{}", back.content);
    assert!(back.media.is_empty());
    for said in [
        "holds an image (image/png) of 9,456,194 bytes",
        "over the 8,388,608 bytes one answer may carry",
        "offset=1 and a limit",
    ] {
        assert!(back.content.contains(said), "{said}: {}", back.content);
    }
    // Its base64 is still read, in pages, as the answer says.
    let page = registry
        .turn()
        .execute([ToolCall::new(
            "page",
            "read_artifact",
            json!({ "id": id.as_str(), "offset": 1, "limit": 2 }),
        )])
        .await
        .remove(0);
    assert!(!page.is_error(), "{}", page.content);
    assert!(
        page.content.contains("lines 2-3 of"),
        "{:.200}",
        page.content
    );
}
