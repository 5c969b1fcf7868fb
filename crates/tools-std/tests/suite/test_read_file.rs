//! read_file through a registry: size-hint pre-validation, pagination, binary and invalid UTF-8.

use crate::common;

use std::fs;

use serde_json::json;

use common::*;

#[tokio::test]
async fn read_file_rejects_a_200_kb_file_with_its_estimate() {
    let w = workspace();
    fs::write(w.root.join("large.txt"), "x".repeat(200_000)).unwrap();
    let result = w.call("read_file", json!({ "path": "large.txt" })).await;
    assert!(result.is_error());
    assert!(result.content.contains("Error:") && result.content.contains("exceeds maximum"));
    // 200,000 bytes in one line, plus 7 chars of line number: ~50,002 tokens, over 20,000
    // (the batch budget of 80,000 chars).
    assert!(
        result.content.starts_with(
            "Error: File content (~50,002 tokens) exceeds maximum allowed tokens (20,000). Use \
             offset and limit to read part of it: offset=0 limit=1 reads about the first 20,000 \
             tokens; or use grep to search it."
        ),
        "{}",
        result.content
    );
}

#[tokio::test]
async fn read_file_pagination_returns_lines_10_to_14() {
    let w = workspace();
    let text: String = (0..1_000).map(|i| format!("Line {i}\n")).collect();
    fs::write(w.root.join("lines.txt"), text).unwrap();
    let result = w
        .call(
            "read_file",
            json!({ "path": "lines.txt", "offset": 10, "limit": 5 }),
        )
        .await;
    assert!(result.content.contains("Line 10"));
    assert!(result.content.contains("Line 14"));
    assert!(!result.content.contains("Line 15"));
    assert!(
        result.content.starts_with("    11\tLine 10\n"),
        "{}",
        result.content
    );
    assert!(
        result
            .content
            .ends_with("the file goes on. Next page: offset=15]\n")
    );
}

#[tokio::test]
async fn read_file_refuses_binary_and_reports_invalid_utf8() {
    let w = workspace();
    fs::write(w.root.join("blob.bin"), [0x7f, b'E', b'L', b'F', 0, 0, 1]).unwrap();
    let binary = w.call("read_file", json!({ "path": "blob.bin" })).await;
    assert!(
        binary.content.contains("is a binary file"),
        "{}",
        binary.content
    );
    fs::write(w.root.join("latin1.txt"), b"caf\xe9\nok\n").unwrap();
    let latin = w.call("read_file", json!({ "path": "latin1.txt" })).await;
    assert!(!latin.is_error());
    assert!(
        latin
            .content
            .starts_with("     1\tcaf\u{fffd}\n     2\tok\n"),
        "{}",
        latin.content
    );
    assert!(
        latin.content.contains("line 1 is not valid UTF-8"),
        "{}",
        latin.content
    );
    let past = w
        .call(
            "read_file",
            json!({ "path": "latin1.txt", "offset": 5, "limit": 1 }),
        )
        .await;
    assert!(
        past.content.contains("offset: 5 is past the end"),
        "{}",
        past.content
    );
}

/// The numbered lines `from..from + count` (0-based) of `text`, as read_file shows them.
fn expected_page(text: &str, from: usize, count: usize) -> String {
    text.lines()
        .enumerate()
        .skip(from)
        .take(count)
        .map(|(i, line)| format!("{:>6}\t{line}\n", i + 1))
        .collect()
}

#[tokio::test]
async fn deep_pages_start_from_the_line_index_and_a_changed_file_is_read_anew() {
    let w = workspace();
    let path = w.root.join("deep.log");
    // Lines of varied lengths, so that a line start noted for one layout is wrong for another.
    let first: String = (0..37 * 8_108)
        .map(|i| format!("line {i} {}\n", "x".repeat(i % 37)))
        .collect();
    fs::write(&path, &first).unwrap();
    let page = |offset: usize| {
        let w = &w;
        async move {
            w.call(
                "read_file",
                json!({ "path": "deep.log", "offset": offset, "limit": 3 }),
            )
            .await
            .content
        }
    };
    // The first deep page notes line starts; the later ones start from them.
    for offset in [250_000, 299_990, 120_000, 250_001, 7] {
        let content = page(offset).await;
        assert!(
            content.starts_with(&expected_page(&first, offset, 3)),
            "offset {offset}: {content}"
        );
    }
    // The same size, other lines: a rewrite given its old modification time back.
    let modified = fs::metadata(&path).unwrap().modified().unwrap();
    let second: String = (0..37 * 8_108)
        .map(|i| format!("line {i} {}\n", "y".repeat(36 - i % 37)))
        .collect();
    assert_eq!(first.len(), second.len());
    fs::write(&path, &second).unwrap();
    fs::File::options()
        .write(true)
        .open(&path)
        .unwrap()
        .set_modified(modified)
        .unwrap();
    for offset in [250_000, 299_990] {
        let content = page(offset).await;
        assert!(
            content.starts_with(&expected_page(&second, offset, 3)),
            "offset {offset} after the rewrite: {content}"
        );
    }
}

#[tokio::test]
async fn an_image_is_shown_as_an_image_known_by_its_bytes_not_its_name() {
    use toolsmith::tool::{Media, MediaKind};
    let w = workspace();
    // A 1×1 PNG, as an image viewer would open it.
    let png = Media::from_base64(
        MediaKind::Image,
        "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg==",
        "image/png",
    )
    .unwrap()
    .to_bytes();
    fs::write(w.root.join("pixel.dat"), &png).unwrap();
    let image = w.call("read_file", json!({ "path": "pixel.dat" })).await;
    assert!(!image.is_error(), "{}", image.content);
    assert_eq!(
        image.content,
        "[read_file: `pixel.dat` is an image (image/png, 70 bytes), shown below]"
    );
    assert_eq!(image.media.len(), 1);
    assert_eq!(image.media[0].mime_type(), "image/png");
    assert_eq!(image.media[0].to_bytes(), png);

    // A text named like an image is text; a GIF header is an image whatever the name.
    fs::write(w.root.join("notes.png"), "not an image\n").unwrap();
    let text = w.call("read_file", json!({ "path": "notes.png" })).await;
    assert_eq!(text.content, "     1\tnot an image\n");
    assert!(text.media.is_empty());
    fs::write(w.root.join("anim"), b"GIF89a\x01\x00\x01\x00\x00\x00\x00;").unwrap();
    let gif = w.call("read_file", json!({ "path": "anim" })).await;
    assert_eq!(gif.media[0].mime_type(), "image/gif");
}

#[tokio::test]
async fn an_image_over_20_mib_is_refused_with_its_size_and_nothing_read() {
    let w = workspace();
    // A PNG header, then a sparse file of 21 MiB: no disk is spent, and nothing is read.
    let path = w.root.join("huge.png");
    fs::write(&path, b"\x89PNG\r\n\x1a\n").unwrap();
    fs::OpenOptions::new()
        .write(true)
        .open(&path)
        .unwrap()
        .set_len(21 << 20)
        .unwrap();
    let result = w.call("read_file", json!({ "path": "huge.png" })).await;
    assert!(result.is_error());
    assert!(result.media.is_empty());
    assert!(
        result.content.contains(
            "`huge.png` is an image of 22,020,096 bytes; read_file shows images of at most \
             20,971,520 bytes"
        ),
        "{}",
        result.content
    );
}
