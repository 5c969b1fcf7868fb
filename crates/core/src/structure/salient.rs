//! Which items of a structure's list a developer would look for first: those that carry an
//! error or a failed status — as a text cut keeps the salient lines of a log.

use serde_json::Value;

/// How deep into an item its members are looked at.
const DEPTH: usize = 6;

/// Members whose presence with a value says something went wrong.
const ERROR_KEYS: &[&str] = &[
    "error",
    "errors",
    "err",
    "exception",
    "failure",
    "failures",
    "fault",
    "traceback",
    "stacktrace",
    "stack_trace",
    "panic",
];

/// Members whose word says how something went.
const STATUS_KEYS: &[&str] = &[
    "status",
    "phase",
    "state",
    "level",
    "severity",
    "lvl",
    "levelname",
    "outcome",
    "conclusion",
    "result",
    "verdict",
];

/// Members that are `false` when something failed.
const SUCCESS_KEYS: &[&str] = &["ok", "success", "succeeded", "passed", "healthy"];

/// Members that are a process's exit status.
const EXIT_KEYS: &[&str] = &[
    "exit_code",
    "exitcode",
    "exitCode",
    "returncode",
    "return_code",
];

/// Whether `item` carries an error: a member named for one with a value (`"error": "…"`), a
/// status or level that says failed or error, an `"ok": false`, a nonzero exit code, or a string
/// in which the text salience finds an error.
pub(super) fn carries_error(item: &Value) -> bool {
    carries(item, 0)
}

fn carries(value: &Value, depth: usize) -> bool {
    match value {
        Value::String(text) => crate::trim::holds_error(text),
        Value::Object(members) if depth < DEPTH => members.iter().any(|(key, member)| {
            let is = |keys: &[&str]| keys.iter().any(|k| k.eq_ignore_ascii_case(key));
            (is(ERROR_KEYS) && present(member))
                || (is(STATUS_KEYS)
                    && member
                        .as_str()
                        .is_some_and(|word| crate::trim::says_failed(word.trim())))
                || (is(SUCCESS_KEYS) && *member == Value::Bool(false))
                || (is(EXIT_KEYS) && member.as_i64().is_some_and(|code| code != 0))
                || carries(member, depth + 1)
        }),
        Value::Array(items) if depth < DEPTH => {
            items.iter().take(16).any(|item| carries(item, depth + 1))
        }
        _ => false,
    }
}

/// Whether a value says something: not null, false, empty or zero.
fn present(value: &Value) -> bool {
    match value {
        Value::Null | Value::Bool(false) => false,
        Value::String(text) => !text.is_empty(),
        Value::Array(items) => !items.is_empty(),
        Value::Object(members) => !members.is_empty(),
        Value::Number(n) => n.as_f64() != Some(0.0),
        Value::Bool(true) => true,
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::carries_error;

    #[test]
    fn errors_and_failed_statuses_are_told_from_routine_records() {
        for failing in [
            json!({ "id": 3, "error": "connection refused" }),
            json!({ "status": "FAILED" }),
            json!({ "level": "fatal", "msg": "out of memory" }),
            json!({ "conclusion": "failure" }),
            json!({ "ok": false }),
            json!({ "exitCode": 2 }),
            json!({ "check": { "state": "error" } }),
            json!("thread 'main' panicked at src/main.rs:3:5"),
            json!({ "message": "Traceback (most recent call last):" }),
        ] {
            assert!(carries_error(&failing), "{failing}");
        }
        for routine in [
            json!({ "id": 3, "error": null, "errors": [] }),
            json!({ "status": "passed", "ok": true, "exitCode": 0 }),
            json!({ "level": "info", "msg": "listening" }),
            json!("all good"),
            json!(42),
        ] {
            assert!(!carries_error(&routine), "{routine}");
        }
    }
}
