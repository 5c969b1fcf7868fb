//! What an output schema asks of one place of a structure, as a cut needs to know it: the
//! schema's `$ref`s followed (local ones; nothing is fetched), `allOf` merged, and of an
//! `anyOf` or a `oneOf` the branch the instance there matches — as a validator follows them.
//!
//! The rules are read for removal only: a cut never adds, so `maxItems`, `maxLength`,
//! `additionalProperties`, `unevaluated*` and `propertyNames` cannot be broken by one. What a
//! removal could break makes the place keep what it has: `const`, `enum`, `not`, `if`, a
//! `false` schema, a reference not followed, `contains`, `minProperties`, `dependent*`. The
//! cut is checked by the compiled validator afterwards all the same.

use serde_json::{Map, Value};

/// How many references in a row are followed before a place is taken as unknown (a cycle of
/// references that consumes no instance).
const MAX_HOPS: usize = 32;
/// How deep a branch's match is checked into the instance.
const MATCH_DEPTH: usize = 4;

/// What the schema asks of one place of the instance, merged from every schema that applies.
#[derive(Debug, Default)]
pub(super) struct Rules<'s> {
    /// Nothing here may change (see the module's docs).
    pub(super) fixed: bool,
    /// A string here keeps every char (a `pattern`, `format`, content encoding or media type).
    pub(super) whole_string: bool,
    /// The fewest chars a string here may have.
    pub(super) min_length: usize,
    /// The fewest items an array here may have.
    pub(super) min_items: usize,
    /// An array here keeps every item (`contains`).
    pub(super) whole_array: bool,
    /// The schemas of the items by place (`prefixItems`, or `items` as a list): the items they
    /// name keep their places.
    pub(super) prefix: Vec<&'s Value>,
    /// The schemas of the items past the prefix.
    pub(super) items: Vec<&'s Value>,
    /// `properties` of every schema merged.
    pub(super) properties: Vec<&'s Map<String, Value>>,
    /// Whether some schema has `patternProperties` (a member they may name has no schema known
    /// here, and is kept as it is).
    pub(super) patterns: bool,
    /// `additionalProperties` of every schema merged.
    pub(super) additional: Vec<&'s Value>,
    /// The members that must be present.
    pub(super) required: Vec<&'s str>,
    /// Every member stays (`minProperties`, `dependentRequired`, `dependentSchemas`).
    pub(super) keep_members: bool,
}

impl<'s> Rules<'s> {
    /// The rules of the place `instance` is at, under the schemas `schemas` (all apply).
    pub(super) fn of(root: &'s Value, schemas: &[&'s Value], instance: &Value) -> Self {
        let mut rules = Rules::default();
        for schema in schemas {
            rules.merge(root, schema, instance, 0);
        }
        rules
    }

    /// The schemas of member `key`: its `properties`, else (no pattern could name it) the
    /// `additionalProperties`; `None` when a pattern may name it (not known here).
    pub(super) fn member(&self, key: &str) -> Option<Vec<&'s Value>> {
        let named: Vec<&Value> = self
            .properties
            .iter()
            .filter_map(|properties| properties.get(key))
            .collect();
        if !named.is_empty() {
            return Some(named);
        }
        if self.patterns {
            return None;
        }
        Some(self.additional.clone())
    }

    /// The schemas of item `index`.
    pub(super) fn item(&self, index: usize) -> Vec<&'s Value> {
        match self.prefix.get(index) {
            Some(schema) => vec![schema],
            None => self.items.clone(),
        }
    }

    fn merge(&mut self, root: &'s Value, schema: &'s Value, instance: &Value, hops: usize) {
        let schema = match schema {
            Value::Bool(true) => return,
            Value::Object(schema) => schema,
            _ => {
                self.fixed = true;
                return;
            }
        };
        if let Some(reference) = schema.get("$ref") {
            match reference.as_str().and_then(|r| resolve(root, r)) {
                Some(target) if hops < MAX_HOPS => self.merge(root, target, instance, hops + 1),
                _ => self.fixed = true,
            }
        }
        const FIXED: &[&str] = &["const", "enum", "not", "if", "$dynamicRef", "$recursiveRef"];
        if FIXED.iter().any(|keyword| schema.contains_key(*keyword)) {
            self.fixed = true;
        }
        const WHOLE_STRING: &[&str] = &["pattern", "format", "contentEncoding", "contentMediaType"];
        if WHOLE_STRING
            .iter()
            .any(|keyword| schema.contains_key(*keyword))
        {
            self.whole_string = true;
        }
        let count = |keyword: &str| {
            schema
                .get(keyword)
                .and_then(Value::as_u64)
                .map_or(0, |n| usize::try_from(n).unwrap_or(usize::MAX))
        };
        self.min_length = self.min_length.max(count("minLength"));
        self.min_items = self.min_items.max(count("minItems"));
        if schema.contains_key("contains") {
            self.whole_array = true;
        }
        match (schema.get("prefixItems"), schema.get("items")) {
            (Some(Value::Array(prefix)), items) => {
                self.prefix.extend(prefix);
                self.items.extend(items);
            }
            (_, Some(Value::Array(prefix))) => {
                // Before 2020-12: `items` as a list, `additionalItems` past it.
                self.prefix.extend(prefix);
                self.items.extend(schema.get("additionalItems"));
            }
            (_, Some(items)) => self.items.push(items),
            _ => {}
        }
        if let Some(Value::Object(properties)) = schema.get("properties") {
            self.properties.push(properties);
        }
        if schema.contains_key("patternProperties") {
            self.patterns = true;
        }
        self.additional.extend(schema.get("additionalProperties"));
        if let Some(Value::Array(required)) = schema.get("required") {
            self.required
                .extend(required.iter().filter_map(Value::as_str));
        }
        const KEEP_MEMBERS: &[&str] = &[
            "minProperties",
            "dependentRequired",
            "dependentSchemas",
            "dependencies",
        ];
        if KEEP_MEMBERS
            .iter()
            .any(|keyword| schema.contains_key(*keyword))
        {
            self.keep_members = true;
        }
        if let Some(Value::Array(all)) = schema.get("allOf") {
            for part in all {
                self.merge(root, part, instance, hops);
            }
        }
        for keyword in ["anyOf", "oneOf"] {
            if let Some(Value::Array(branches)) = schema.get(keyword) {
                match branches
                    .iter()
                    .find(|branch| matches(root, branch, instance, 0, 0))
                {
                    Some(branch) => self.merge(root, branch, instance, hops),
                    None => self.fixed = true,
                }
            }
        }
    }
}

/// The schema a local reference (`#`, `#/$defs/Row`) names in `root`; `None` for any other.
pub(super) fn resolve<'s>(root: &'s Value, reference: &str) -> Option<&'s Value> {
    let pointer = reference.strip_prefix('#')?;
    if pointer.is_empty() {
        return Some(root);
    }
    if !pointer.starts_with('/') {
        // An anchor (`#name`): not followed here.
        return None;
    }
    let decoded = percent_decode(pointer)?;
    root.pointer(&decoded)
}

/// A reference's pointer with its `%XX` escapes decoded (a URI fragment may carry them).
fn percent_decode(pointer: &str) -> Option<String> {
    if !pointer.contains('%') {
        return Some(pointer.to_owned());
    }
    let bytes = pointer.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        if bytes[i] == b'%' {
            let hex = std::str::from_utf8(bytes.get(i + 1..i + 3)?).ok()?;
            out.push(u8::from_str_radix(hex, 16).ok()?);
            i += 3;
        } else {
            out.push(bytes[i]);
            i += 1;
        }
    }
    String::from_utf8(out).ok()
}

/// Whether `instance` matches `schema` as far as a branch is told apart by: types, `const`,
/// `enum`, required members, and the members' and items' own schemas to a small depth.
fn matches(root: &Value, schema: &Value, instance: &Value, depth: usize, hops: usize) -> bool {
    let schema = match schema {
        Value::Bool(accepts) => return *accepts,
        Value::Object(schema) => schema,
        _ => return false,
    };
    if let Some(reference) = schema.get("$ref") {
        let target = reference.as_str().and_then(|r| resolve(root, r));
        match target {
            Some(target) if hops < MAX_HOPS => {
                if !matches(root, target, instance, depth, hops + 1) {
                    return false;
                }
            }
            _ => return false,
        }
    }
    if let Some(types) = schema.get("type")
        && !type_matches(types, instance)
    {
        return false;
    }
    if let Some(constant) = schema.get("const")
        && constant != instance
    {
        return false;
    }
    if let Some(Value::Array(values)) = schema.get("enum")
        && !values.contains(instance)
    {
        return false;
    }
    if let Some(Value::Array(all)) = schema.get("allOf")
        && !all
            .iter()
            .all(|part| matches(root, part, instance, depth, hops))
    {
        return false;
    }
    for keyword in ["anyOf", "oneOf"] {
        if let Some(Value::Array(branches)) = schema.get(keyword)
            && !branches
                .iter()
                .any(|branch| matches(root, branch, instance, depth, hops))
        {
            return false;
        }
    }
    if depth >= MATCH_DEPTH {
        return true;
    }
    match instance {
        Value::Object(members) => {
            if let Some(Value::Array(required)) = schema.get("required")
                && !required
                    .iter()
                    .filter_map(Value::as_str)
                    .all(|key| members.contains_key(key))
            {
                return false;
            }
            if let Some(Value::Object(properties)) = schema.get("properties") {
                for (key, member) in members {
                    if let Some(member_schema) = properties.get(key)
                        && !matches(root, member_schema, member, depth + 1, 0)
                    {
                        return false;
                    }
                }
            }
            if schema.get("additionalProperties") == Some(&Value::Bool(false)) {
                let properties = schema.get("properties").and_then(Value::as_object);
                let named = |key: &String| properties.is_some_and(|p| p.contains_key(key));
                if !schema.contains_key("patternProperties") && !members.keys().all(named) {
                    return false;
                }
            }
            true
        }
        Value::Array(items) => match schema.get("items") {
            Some(items_schema)
                if !items_schema.is_array() && !schema.contains_key("prefixItems") =>
            {
                items
                    .iter()
                    .take(3)
                    .all(|item| matches(root, items_schema, item, depth + 1, 0))
            }
            _ => true,
        },
        _ => true,
    }
}

/// Whether `instance` is of one of the JSON types `types` names.
fn type_matches(types: &Value, instance: &Value) -> bool {
    let is = |name: &str| match name {
        "object" => instance.is_object(),
        "array" => instance.is_array(),
        "string" => instance.is_string(),
        "boolean" => instance.is_boolean(),
        "null" => instance.is_null(),
        "number" => instance.is_number(),
        "integer" => match instance {
            Value::Number(n) => {
                n.is_i64() || n.is_u64() || n.as_f64().is_some_and(|f| f.fract() == 0.0)
            }
            _ => false,
        },
        _ => false,
    };
    match types {
        Value::String(name) => is(name),
        Value::Array(names) => names.iter().filter_map(Value::as_str).any(is),
        _ => true,
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn references_are_followed_and_the_matching_branch_is_merged() {
        let root = json!({
            "type": "object",
            "properties": {
                "rows": { "type": "array", "items": { "$ref": "#/$defs/Row" }, "minItems": 2 },
                "note": { "anyOf": [{ "type": "string", "pattern": "^a" }, { "type": "null" }] },
            },
            "required": ["rows"],
            "$defs": { "Row": { "type": "object", "properties": { "id": { "type": "integer" } } } },
        });
        let instance = json!({ "rows": [{ "id": 1 }], "note": null });
        let rules = Rules::of(&root, &[&root], &instance);
        assert_eq!(rules.required, ["rows"]);
        let rows = Rules::of(&root, &rules.member("rows").unwrap(), &instance["rows"]);
        assert_eq!(rows.min_items, 2);
        let row = Rules::of(&root, &rows.item(5), &instance["rows"][0]);
        assert!(row.member("id").is_some() && !row.fixed);
        // The null branch is the one taken: no pattern applies to a null.
        let note = Rules::of(&root, &rules.member("note").unwrap(), &instance["note"]);
        assert!(!note.whole_string && !note.fixed);
        let note = Rules::of(&root, &rules.member("note").unwrap(), &json!("abc"));
        assert!(note.whole_string);
    }

    #[test]
    fn what_cannot_be_followed_keeps_its_place_whole() {
        let root = json!({ "$ref": "https://example.invalid/schema.json" });
        assert!(Rules::of(&root, &[&root], &json!({})).fixed);
        let cycle = json!({ "$ref": "#" });
        assert!(Rules::of(&cycle, &[&cycle], &json!({})).fixed);
        let enumerated = json!({ "enum": ["a", "b"] });
        assert!(Rules::of(&enumerated, &[&enumerated], &json!("a")).fixed);
        assert_eq!(resolve(&json!({ "a b": 1 }), "#/a%20b"), Some(&json!(1)));
    }
}
