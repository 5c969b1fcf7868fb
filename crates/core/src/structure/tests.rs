//! The cut of a typed structure over generated schemas and instances: every answer within the
//! allowance and valid against its schema, or `Over` only where no valid form fits.

use proptest::prelude::*;
use serde_json::{Map, Value, json};

use super::*;

/// A type, from which both a schema and instances of it are made.
#[derive(Debug, Clone)]
enum Type {
    Int,
    Bool,
    /// A string: its `minLength`, and whether a pattern binds it.
    Str {
        min: usize,
        pattern: bool,
    },
    Array {
        item: Box<Type>,
        min: usize,
    },
    Object {
        members: Vec<(String, Type, bool)>,
    },
    /// `anyOf` of it and null, as Python's `Optional` writes it.
    Nullable(Box<Type>),
    /// Through `$ref` to `$defs`.
    Ref(String, Box<Type>),
}

fn leaf() -> impl Strategy<Value = Type> {
    prop_oneof![
        Just(Type::Int),
        Just(Type::Bool),
        (0usize..6, prop::bool::weighted(0.2))
            .prop_map(|(min, pattern)| Type::Str { min, pattern }),
    ]
}

fn a_type() -> impl Strategy<Value = Type> {
    leaf().prop_recursive(4, 24, 5, |inner| {
        prop_oneof![
            (inner.clone(), 0usize..4).prop_map(|(item, min)| Type::Array {
                item: Box::new(item),
                min
            }),
            prop::collection::vec((inner.clone(), any::<bool>()), 1..5).prop_map(|members| {
                Type::Object {
                    members: members
                        .into_iter()
                        .enumerate()
                        .map(|(i, (t, required))| (format!("m{i}"), t, required))
                        .collect(),
                }
            }),
            inner.clone().prop_map(|t| Type::Nullable(Box::new(t))),
            (inner, 0u32..1000).prop_map(|(t, n)| Type::Ref(format!("D{n}"), Box::new(t))),
        ]
    })
}

fn schema_of(t: &Type, defs: &mut Map<String, Value>) -> Value {
    match t {
        Type::Int => json!({ "type": "integer" }),
        Type::Bool => json!({ "type": "boolean" }),
        Type::Str { min, pattern } => {
            let mut s = json!({ "type": "string", "minLength": min });
            if *pattern {
                s["pattern"] = json!("^[a-z ]*$");
            }
            s
        }
        Type::Array { item, min } => {
            json!({ "type": "array", "items": schema_of(item, defs), "minItems": min })
        }
        Type::Object { members } => {
            let properties: Map<String, Value> = members
                .iter()
                .map(|(name, t, _)| (name.clone(), schema_of(t, defs)))
                .collect();
            let required: Vec<&str> = members
                .iter()
                .filter(|(_, _, required)| *required)
                .map(|(name, _, _)| name.as_str())
                .collect();
            json!({ "type": "object", "properties": properties, "required": required,
                    "additionalProperties": false })
        }
        Type::Nullable(t) => json!({ "anyOf": [schema_of(t, defs), { "type": "null" }] }),
        Type::Ref(name, t) => {
            let schema = schema_of(t, defs);
            defs.insert(name.clone(), schema);
            json!({ "$ref": format!("#/$defs/{name}") })
        }
    }
}

fn next(sizes: &mut impl Iterator<Item = usize>) -> usize {
    sizes.next().unwrap_or(3)
}

/// An instance of `t`, its sizes drawn from `sizes` (a cycle of numbers).
fn instance(t: &Type, sizes: &mut impl Iterator<Item = usize>) -> Value {
    match t {
        Type::Int => json!(next(sizes) * 1_000),
        Type::Bool => json!(next(sizes).is_multiple_of(2)),
        Type::Str { min, .. } => {
            let words = "error in row\n".len();
            let text = "error in row\n".repeat(next(sizes) * 3 / words + 1);
            let text = if text.len() < *min {
                "x".repeat(*min)
            } else {
                text
            };
            Value::String(text.replace('\n', " "))
        }
        Type::Array { item, min } => {
            let count = (*min).max(next(sizes) * 7 % 60);
            Value::Array((0..count).map(|_| instance(item, sizes)).collect())
        }
        Type::Object { members } => {
            let mut map = Map::new();
            for (name, t, required) in members {
                if *required || !next(sizes).is_multiple_of(3) {
                    map.insert(name.clone(), instance(t, sizes));
                }
            }
            Value::Object(map)
        }
        Type::Nullable(t) => {
            if next(sizes).is_multiple_of(4) {
                Value::Null
            } else {
                instance(t, sizes)
            }
        }
        Type::Ref(_, t) => instance(t, sizes),
    }
}

/// The fewest chars a valid form of `value` (of type `t`) may take: the reference the cut is
/// held to, written naively.
fn floor(t: &Type, value: &Value) -> usize {
    let container = |sizes: Vec<usize>| {
        if sizes.is_empty() {
            2
        } else {
            1 + sizes.iter().map(|s| s + 1).sum::<usize>()
        }
    };
    match (t, value) {
        (
            Type::Str {
                min,
                pattern: false,
            },
            Value::String(text),
        ) => {
            let chars = text.chars().count();
            if (*min).max(1) >= chars {
                chars + 2
            } else {
                (*min).max(1) + 2
            }
        }
        (Type::Array { item, min }, Value::Array(items)) => {
            let mut floors: Vec<usize> = items.iter().map(|i| floor(item, i)).collect();
            floors.sort_unstable();
            floors.truncate(*min);
            container(floors)
        }
        (Type::Object { members }, Value::Object(map)) => container(
            members
                .iter()
                .filter(|(name, _, required)| *required && map.contains_key(name))
                .map(|(name, t, _)| name.len() + 3 + floor(t, &map[name]))
                .collect(),
        ),
        (Type::Nullable(t) | Type::Ref(_, t), value) if !value.is_null() => floor(t, value),
        (_, value) => compact_chars(value),
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 256, ..ProptestConfig::default() })]

    #[test]
    fn every_cut_is_valid_and_within_the_allowance_or_none_could_be(
        t in a_type(),
        sizes in prop::collection::vec(0usize..40, 1..64),
        allowance in prop_oneof![0usize..64, 64usize..600, 600usize..5_000],
    ) {
        let mut defs = Map::new();
        let mut schema = schema_of(&t, &mut defs);
        // MCP's output schemas are objects: wrap the type as Python's SDK wraps a list.
        schema = json!({ "type": "object", "properties": { "result": schema },
                         "required": ["result"], "$defs": defs });
        let mut sizes = sizes.into_iter().cycle();
        let value = json!({ "result": instance(&t, &mut sizes) });
        let compiled = OutputSchema::new(&schema);
        prop_assert!(compiled.accepts(&value), "the generated instance is valid: {value}");
        let whole = compact_chars(&value);
        match fit_typed(&value, &compiled, allowance, None) {
            Typed::Whole => prop_assert!(whole <= allowance),
            Typed::Cut(cut) => {
                prop_assert!(whole > allowance);
                prop_assert!(cut.chars <= allowance, "{} over {allowance}", cut.chars);
                prop_assert_eq!(cut.chars, compact_chars(&cut.value));
                prop_assert!(compiled.accepts(&cut.value), "valid: {}", cut.value);
                prop_assert_eq!(cut.original_chars, whole);
                prop_assert!(!cut.places.is_empty(), "a cut states what it cut");
            }
            Typed::Over => {
                let least = 1 + "\"result\":".len() + floor(&t, &value["result"]) + 1;
                prop_assert!(least > allowance,
                    "a valid form of {least} chars fits {allowance}: {schema} {value}");
            }
        }
    }
}

#[test]
fn a_list_of_records_keeps_its_first_last_and_failing_records() {
    // What the Python SDK states for `list[Row]`: `{"result": [Row, …]}`, Row in `$defs`.
    let schema = json!({
        "$defs": { "Row": { "properties": {
            "id": { "title": "Id", "type": "integer" },
            "name": { "title": "Name", "type": "string" },
            "status": { "title": "Status", "type": "string" } },
            "required": ["id", "name", "status"], "title": "Row", "type": "object" } },
        "properties": { "result": { "items": { "$ref": "#/$defs/Row" }, "title": "Result",
                                    "type": "array" } },
        "required": ["result"], "title": "list_rowsOutput", "type": "object",
    });
    let rows: Vec<Value> = (0..2_000)
        .map(|i| {
            let status = if i == 1_234 { "failed" } else { "ok" };
            json!({ "id": i, "name": format!("row number {i}"), "status": status })
        })
        .collect();
    let value = json!({ "result": rows });
    let compiled = OutputSchema::new(&schema);
    let Typed::Cut(cut) = fit_typed(&value, &compiled, 4_000, None) else {
        panic!("a list of rows can be thinned");
    };
    assert!(cut.chars <= 4_000 && cut.chars > 3_500, "{}", cut.chars);
    let kept = cut.value["result"].as_array().unwrap();
    assert_eq!(kept[0], rows[0]);
    assert_eq!(kept.last(), rows.last());
    assert!(kept.contains(&rows[1_234]));
    assert_eq!(cut.places[0]["pointer"], "/result");
    assert_eq!(
        cut.summary()[0],
        format!("/result {} of 2,000 items", kept.len())
    );
}

#[test]
fn no_valid_cut_is_over_never_the_whole() {
    let schema = json!({ "type": "object", "properties": {
        "rows": { "type": "array", "minItems": 5_000 } }, "required": ["rows"] });
    let value = json!({ "rows": (0..5_000).collect::<Vec<_>>() });
    assert!(matches!(
        fit_typed(&value, &OutputSchema::new(&schema), 1_000, None),
        Typed::Over
    ));
    // A required string bound by a pattern cannot be shortened.
    let schema = json!({ "type": "object", "properties": {
        "digest": { "type": "string", "pattern": "^[a-f0-9]+$" } }, "required": ["digest"] });
    let value = json!({ "digest": "ab".repeat(10_000) });
    assert!(matches!(
        fit_typed(&value, &OutputSchema::new(&schema), 1_000, None),
        Typed::Over
    ));
    // A schema that cannot be compiled here: no cut is known to be valid.
    let remote = json!({ "$ref": "https://example.invalid/s.json" });
    let value = json!({ "rows": (0..5_000).collect::<Vec<_>>() });
    assert!(matches!(
        fit_typed(&value, &OutputSchema::new(&remote), 1_000, None),
        Typed::Over
    ));
}

#[test]
fn a_schema_that_wraps_a_text_is_told_apart() {
    let wrapper = json!({ "properties": { "result": { "title": "Result", "type": "string" } },
                          "required": ["result"], "title": "greetOutput", "type": "object" });
    assert!(wraps_text(&wrapper));
    let two = json!({ "properties": { "result": { "type": "string" }, "n": { "type": "integer" } },
                      "required": ["result"], "type": "object" });
    assert!(!wraps_text(&two));
    let list = json!({ "properties": { "result": { "type": "array" } },
                       "required": ["result"], "type": "object" });
    assert!(!wraps_text(&list));
}
