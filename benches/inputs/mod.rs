//! The inputs the benches measure, each made in one place: a build log, JSON documents of five
//! shapes, and an agent's session. Each bench binary uses some of them.
#![allow(dead_code)]

use std::fmt::Write as _;

/// A build log: numbered lines of ~70 chars, one in sixteen with multi-byte text.
pub(crate) fn log_of(bytes: usize) -> String {
    let mut out = String::with_capacity(bytes + 128);
    let mut i = 0u64;
    while out.len() < bytes {
        if i.is_multiple_of(16) {
            out.push_str(&format!(
                "{i:>10} warning: unused variable `naïve_π` — см. документацию\n"
            ));
        } else {
            out.push_str(&format!(
                "{i:>10} compiling crate_{} v0.1.{} (build script)\n",
                i % 97,
                i % 13
            ));
        }
        i += 1;
    }
    out
}

/// A container of about `bytes` bytes: `open`, items written by `item` (given their index)
/// separated by `separator`, then `close`.
pub(crate) fn container(
    bytes: usize,
    (open, separator, close): (&str, &str, &str),
    item: impl Fn(&mut String, u64),
) -> String {
    let mut out = String::with_capacity(bytes + 1024);
    out.push_str(open);
    let mut i = 0u64;
    while out.len() < bytes {
        if i > 0 {
            out.push_str(separator);
        }
        item(&mut out, i);
        i += 1;
    }
    out.push_str(close);
    out
}

/// A compact array of issue-like objects.
pub(crate) fn compact(bytes: usize) -> String {
    container(bytes, ("[", ",", "]"), |out, i| {
        write!(
            out,
            r#"{{"number":{i},"title":"Crash when parsing \"config\" on start — issue {i}","state":"open","labels":["bug","p{}"],"comments":{},"body":"Steps:\n1. run\n2. see the panic at src/main.rs:{}"}}"#,
            i % 4,
            i % 97,
            i % 1000
        )
        .unwrap();
    })
}

/// The records of an API, pretty-printed with two-space indentation, each with a nested user
/// and a list of labels.
pub(crate) fn pretty(bytes: usize) -> String {
    let frame = ("{\n  \"total\": 0,\n  \"items\": [\n", ",\n", "\n  ]\n}\n");
    container(bytes, frame, |out, i| {
        write!(
            out,
            "    {{\n      \"id\": {i},\n      \"name\": \"repo-{i}\",\n      \"full_name\": \"octo/repo-{i}\",\n      \"private\": false,\n      \"owner\": {{\n        \"login\": \"octo\",\n        \"id\": {},\n        \"site_admin\": false\n      }},\n      \"topics\": [\n        \"rust\",\n        \"cli\",\n        \"t{}\"\n      ],\n      \"stars\": {},\n      \"description\": \"A tool for the {}th task, with \\\"quotes\\\" and a path C:\\\\src\"\n    }}",
            i % 5000,
            i % 31,
            i * 7 % 10_000,
            i
        )
        .unwrap();
    })
}

/// Objects nested seven deep, pretty-printed with four-space indentation (as `kubectl get -o
/// json` or `python -m json.tool` writes a list of pods): most bytes are indentation, most
/// tokens short keys and values.
pub(crate) fn pretty_nested(bytes: usize) -> String {
    let frame = (
        "{\n    \"kind\": \"List\",\n    \"items\": [\n",
        ",\n",
        "\n    ]\n}\n",
    );
    container(bytes, frame, |out, i| {
        write!(
            out,
            r#"        {{
            "metadata": {{
                "name": "api-{i}",
                "labels": {{
                    "app": "api",
                    "tier": "t{}"
                }}
            }},
            "spec": {{
                "containers": [
                    {{
                        "name": "main",
                        "resources": {{
                            "limits": {{
                                "cpu": "{}m",
                                "memory": "{}Mi"
                            }}
                        }},
                        "ports": [
                            {{
                                "containerPort": {},
                                "protocol": "TCP"
                            }}
                        ]
                    }}
                ]
            }},
            "status": {{
                "phase": "Running",
                "restartCount": {}
            }}
        }}"#,
            i % 7,
            100 + i % 900,
            64 << (i % 5),
            8000 + i % 100,
            i % 3
        )
        .unwrap();
    })
}

/// One object of many keys, each value a short text of non-ASCII chars.
pub(crate) fn wide_unicode(bytes: usize) -> String {
    container(bytes, ("{", ",", "}"), |out, i| {
        write!(
            out,
            r#""clé_{i}":"Größe {i} — 日本語のテキスト ✓ ÄÖÜ ñ ø € 🙂""#
        )
        .unwrap();
    })
}

/// Arrays nested ten deep, numbers at the leaves.
pub(crate) fn deep_arrays(bytes: usize) -> String {
    container(bytes, ("[", ",", "]"), |out, i| {
        out.push_str(&"[".repeat(10));
        write!(out, "{i},{},{}", i + 1, i * 3).unwrap();
        out.push_str(&"]".repeat(10));
    })
}

/// An agent's session of `messages` messages: two turns in five a tool call and its 10 KB
/// result, the others a chat exchange; it starts with the user.
pub(crate) fn session(messages: usize) -> Vec<toolsmith::history::Message> {
    use toolsmith::history::{Block, Message, Role};
    let result: String = (0..400)
        .map(|i| format!("{i:>6}\tfn line_{i}() {{ let x = {i}; }}\n"))
        .collect();
    let result = &result[..10_000];
    let mut out = Vec::with_capacity(messages + 1);
    for t in 0..messages / 2 {
        if t % 5 < 2 {
            let id = format!("toolu_{t}");
            out.push(Message::from_blocks(
                Role::Assistant,
                vec![
                    Block::text("Let me look."),
                    Block::tool_use(&id, "read_file", serde_json::json!({ "path": t })),
                ],
            ));
            out.push(Message::from_blocks(
                Role::User,
                vec![Block::tool_result(&id, result, false)],
            ));
        } else {
            out.push(Message::assistant(format!(
                "Here is what I found in step {t}."
            )));
            out.push(Message::user("Go on."));
        }
    }
    // A valid session does not start with the assistant.
    out.insert(0, Message::user("Start."));
    out.pop();
    out
}

/// `session` with every 50th tool result lost: the pairing to repair.
pub(crate) fn damaged(session: &[toolsmith::history::Message]) -> Vec<toolsmith::history::Message> {
    let mut messages = session.to_vec();
    let mut results = 0;
    for message in &mut messages {
        if message.tool_results().next().is_some() {
            results += 1;
            if results % 50 == 0 {
                *message = toolsmith::history::Message::user("(the tool results were lost)");
            }
        }
    }
    messages
}
