//! A `resources/read` result fitted to the cap: text contents share it, blobs follow the media
//! rule; the rest passes as it came.

use serde_json::{Value, json};

use super::blocks::{self, Blocks};
use super::tokens::hold_tokens;
use super::{CutFacts, Fitting};
use crate::trim::TrimStyle;

/// Fits a `resources/read` result to the cap: text contents share it, blobs follow the media
/// rule; the rest passes as it came.
pub(crate) async fn resource_contents(result: Value, fitting: &Fitting) -> Value {
    let Some(cap) = &fitting.tokens else {
        return resource_contents_in_chars(result, fitting).await;
    };
    let sample = result.to_string();
    let fitted = hold_tokens(
        fitting,
        cap,
        &sample,
        |tries| {
            let result = result.clone();
            async move {
                Ok::<_, std::convert::Infallible>(resource_contents_in_chars(result, &tries).await)
            }
        },
        |fitted| {
            let contents = fitted.get("contents").and_then(Value::as_array);
            contents
                .into_iter()
                .flatten()
                .map(
                    |content| match content.get("text").and_then(Value::as_str) {
                        Some(text) => cap.counter().count(text),
                        // A blob is not text: it does not count.
                        None => 0,
                    },
                )
                .sum()
        },
    )
    .await;
    match fitted {
        Ok((fitted, _, _)) => fitted,
        Err(never) => match never {},
    }
}

/// [`resource_contents`] with the cap in chars alone.
async fn resource_contents_in_chars(result: Value, fitting: &Fitting) -> Value {
    let Value::Object(mut result) = result else {
        return result;
    };
    let Some(Value::Array(contents)) = result.remove("contents") else {
        return Value::Object(result);
    };
    // As embedded resources, the contents fit like blocks; then they are unwrapped again.
    let blocks: Vec<Value> = contents
        .into_iter()
        .map(|resource| json!({ "type": "resource", "resource": resource }))
        .collect();
    let fitted = blocks::fit(
        Blocks::only(blocks),
        fitting,
        &TrimStyle::default(),
        &mut CutFacts::default(),
    )
    .await;
    let contents: Vec<Value> = fitted
        .into_iter()
        .map(|block| match block {
            Value::Object(mut block)
                if block.get("type").and_then(Value::as_str) == Some("resource") =>
            {
                block.remove("resource").unwrap_or(Value::Null)
            }
            // A note in place of a blob or of left-out contents: a text content of its own.
            Value::Object(block) => {
                let text = block.get("text").cloned().unwrap_or(Value::Null);
                json!({ "uri": "toolsmith://note", "mimeType": "text/plain", "text": text })
            }
            other => other,
        })
        .collect();
    result.insert("contents".to_owned(), Value::Array(contents));
    Value::Object(result)
}
