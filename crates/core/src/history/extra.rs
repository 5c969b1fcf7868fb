//! What a message or a block does not model, kept as it was: [`Extra`], its other fields and
//! what it was in another provider's format; and the look-ups with which the conversions take
//! values out of such an object and put them back.

use serde::{Deserialize, Deserializer, Serialize, Serializer};
use serde_json::{Map, Value};

/// What a message or a block does not model, kept as it was: its other fields
/// (`cache_control`, `citations`, fields of kinds that do not exist yet) and, for one read from
/// another provider's format, what it was there — the Gemini part or content, the Responses
/// item — to be written back around what it models, so that what nothing changed goes back
/// field for field.
///
/// It derefs to the map of the other fields. What it was elsewhere is held beside them, not in
/// the map (it is moved there whole from what was read, not wrapped in a map of its own), and is
/// serialized with the fields under its key (`gemini_part`, `gemini_content`,
/// `responses_item`), where deserializing finds it again.
///
/// ```
/// use serde_json::json;
/// use toolsmith::history::{Block, Message, Role};
///
/// let mut message = Message::from_blocks(Role::User, vec![Block::text("hi")]);
/// message.extra.insert("cache_control".to_owned(), json!({ "type": "ephemeral" }));
/// assert_eq!(message.extra["cache_control"]["type"], "ephemeral");
/// let json = serde_json::to_value(&message)?;
/// assert_eq!(json["cache_control"], json!({ "type": "ephemeral" }));
/// # Ok::<(), serde_json::Error>(())
/// ```
#[derive(Debug, Clone, Default)]
pub struct Extra {
    /// The other fields; or, for a message or block read from another format, the object it was
    /// there (and the other fields, if it has any, in `was`). A read block carries no map it
    /// does not use, and an `Extra` is not much larger than one map.
    map: Map<String, Value>,
    was: Option<Was>,
}

/// Which format's object an [`Extra`] holds as what its message or block was.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Origin {
    /// A Gemini part (a block's).
    GeminiPart,
    /// A Gemini content (a message's), its `parts` emptied.
    GeminiContent,
    /// A Responses API input item (a block's).
    ResponsesItem,
}

impl Origin {
    const ALL: [Origin; 3] = [
        Origin::GeminiPart,
        Origin::GeminiContent,
        Origin::ResponsesItem,
    ];

    /// The key it is serialized under.
    fn key(self) -> &'static str {
        match self {
            Origin::GeminiPart => "gemini_part",
            Origin::GeminiContent => "gemini_content",
            Origin::ResponsesItem => "responses_item",
        }
    }
}

/// Of an [`Extra`] read from another format: which, where the values its message or block
/// models were taken out of the object, and its other fields (made when there are any).
#[derive(Debug, Clone)]
struct Was {
    origin: Origin,
    holes: Holes,
    fields: Option<Box<Map<String, Value>>>,
}

/// The fields of an `Extra` that has none kept apart.
fn no_fields() -> &'static Map<String, Value> {
    static EMPTY: std::sync::OnceLock<Map<String, Value>> = std::sync::OnceLock::new();
    EMPTY.get_or_init(Map::new)
}

impl Extra {
    /// No fields.
    pub fn new() -> Self {
        Self::default()
    }

    /// What was read from another format, with no other field.
    pub(crate) fn of(origin: Origin, object: Map<String, Value>, holes: Holes) -> Self {
        Extra {
            map: object,
            was: Some(Was {
                origin,
                holes,
                fields: None,
            }),
        }
    }

    /// What it was in `origin`'s format, if it was read from one, and where its values were
    /// taken out.
    pub(crate) fn was(&self, origin: Origin) -> Option<(&Map<String, Value>, Holes)> {
        match &self.was {
            Some(was) if was.origin == origin => Some((&self.map, was.holes)),
            _ => None,
        }
    }

    /// [`Extra::was`], taken: what to write back around what the block models.
    pub(crate) fn into_was(self, origin: Origin) -> Option<(Map<String, Value>, Holes)> {
        match self.was {
            Some(was) if was.origin == origin => Some((self.map, was.holes)),
            _ => None,
        }
    }

    /// What it was in another format, and which.
    fn object(&self) -> Option<(Origin, &Map<String, Value>)> {
        self.was.as_ref().map(|was| (was.origin, &self.map))
    }
}

impl PartialEq for Extra {
    /// The same fields, and the same object of the same format (where its values were taken out
    /// being known or not is no difference).
    fn eq(&self, other: &Self) -> bool {
        **self == **other && self.object() == other.object()
    }
}

impl From<Map<String, Value>> for Extra {
    /// These fields.
    fn from(fields: Map<String, Value>) -> Self {
        Extra {
            map: fields,
            was: None,
        }
    }
}

impl std::ops::Deref for Extra {
    type Target = Map<String, Value>;

    fn deref(&self) -> &Self::Target {
        match &self.was {
            None => &self.map,
            Some(was) => match &was.fields {
                Some(fields) => fields,
                None => no_fields(),
            },
        }
    }
}

impl std::ops::DerefMut for Extra {
    fn deref_mut(&mut self) -> &mut Self::Target {
        match &mut self.was {
            None => &mut self.map,
            Some(was) => was.fields.get_or_insert_with(Box::default),
        }
    }
}

impl Serialize for Extra {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let was = (self.object().into_iter())
            .map(|(origin, object)| (origin.key(), Field::Object(object)));
        let fields = (self.iter()).map(|(key, value)| (key.as_str(), Field::Value(value)));
        serializer.collect_map(was.chain(fields))
    }
}

/// A value of [`Extra`]'s serialized map: one of its fields, or the object it was elsewhere.
enum Field<'a> {
    Value(&'a Value),
    Object(&'a Map<String, Value>),
}

impl Serialize for Field<'_> {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        match self {
            Field::Value(value) => value.serialize(serializer),
            Field::Object(object) => object.serialize(serializer),
        }
    }
}

impl<'de> Deserialize<'de> for Extra {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let mut fields = Map::deserialize(deserializer)?;
        // What it was in another format, as `serialize` writes it: an object under its key
        // (where its values were taken out is not known: the writer looks them up by key).
        let was = Origin::ALL.into_iter().find_map(|origin| {
            if !matches!(fields.get(origin.key()), Some(Value::Object(_))) {
                return None;
            }
            match fields.shift_remove(origin.key()) {
                Some(Value::Object(object)) => Some((origin, object)),
                _ => None,
            }
        });
        Ok(match was {
            None => Extra::from(fields),
            Some((origin, object)) => Extra {
                map: object,
                was: Some(Was {
                    origin,
                    holes: Holes::UNKNOWN,
                    fields: (!fields.is_empty()).then(|| Box::new(fields)),
                }),
            },
        })
    }
}

/// Where a reader took out of an object the values its block or message models: each one's
/// place among its object's fields (the object's own, or the call's or response's inside it),
/// numbered as each format fixes, so that the writer puts them back without finding their keys
/// again. A kept object is read long before it is written back and its keys are out of cache
/// by then: finding one costs a trip to memory.
///
/// Places are set only by the reader that took the values out of that very object, which
/// nothing but the writer changes after; where they are not known (an object read back from
/// JSON), every value is found by its key.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Holes {
    /// Each value's place, [`Holes::ABSENT`] for one that was not there.
    at: [u8; 4],
    known: bool,
}

impl Holes {
    /// Places to be set as a reader finds the values.
    pub(crate) const NEW: Holes = Holes {
        at: [Self::ABSENT; 4],
        known: true,
    };
    /// Places not known: every value is found by its key.
    pub(crate) const UNKNOWN: Holes = Holes {
        at: [Self::ABSENT; 4],
        known: false,
    };
    const ABSENT: u8 = u8::MAX;

    /// The value under `key` of `object`, found by key, its place kept as the `n`th.
    pub(crate) fn find<'a>(
        &mut self,
        n: usize,
        object: &'a mut Map<String, Value>,
        key: &str,
    ) -> Option<&'a mut Value> {
        if object.len() > 8 {
            // A large object (none that a format writes): found by hash, places not known.
            self.known = false;
            return slot(object, key);
        }
        let (at, value) = object
            .iter_mut()
            .enumerate()
            .find(|(_, (name, _))| *name == key)
            .map(|(at, (_, value))| (at, value))?;
        self.at[n] = at as u8;
        Some(value)
    }

    /// [`Holes::find`] of a string, taken out: an empty string (which allocates nothing) is
    /// left in its place for the writer to put it back.
    pub(crate) fn take_string(
        &mut self,
        n: usize,
        object: &mut Map<String, Value>,
        key: &str,
    ) -> Option<String> {
        match self.find(n, object, key) {
            Some(Value::String(text)) => Some(std::mem::take(text)),
            _ => None,
        }
    }

    /// Adds `key` to `object` (which does not have it), its place kept as the `n`th.
    pub(crate) fn insert(
        &mut self,
        n: usize,
        object: &mut Map<String, Value>,
        key: &str,
        value: Value,
    ) {
        object.insert(key.to_owned(), value);
        match u8::try_from(object.len() - 1) {
            Ok(at) if at != Self::ABSENT => self.at[n] = at,
            _ => self.known = false,
        }
    }

    /// Whether the `n`th value was there: `None` when not known.
    pub(crate) fn had(self, n: usize) -> Option<bool> {
        self.known.then_some(self.at[n] != Self::ABSENT)
    }

    /// The `n`th value, under `key`, of `object`: at its place, or found by key.
    pub(crate) fn slot<'a>(
        self,
        n: usize,
        object: &'a mut Map<String, Value>,
        key: &str,
    ) -> Option<&'a mut Value> {
        if !self.known {
            return slot(object, key);
        }
        let at = self.at[n];
        if at == Self::ABSENT {
            return None;
        }
        // The place is the reader's, in an object nothing else changed: the key is not read
        // (its length is, beside the value, as a check that costs no trip to memory; a place
        // that fails it is not trusted, and the key is looked up).
        let at = usize::from(at);
        let placed = object.iter().nth(at).is_some_and(|(name, _)| {
            debug_assert_eq!(name, key, "a hole's place names another field");
            name.len() == key.len()
        });
        if !placed {
            return slot(object, key);
        }
        object.iter_mut().nth(at).map(|(_, value)| value)
    }

    /// Sets the `n`th value, under `key`, of `object`: in its place, or last when it was not
    /// there.
    pub(crate) fn put(self, n: usize, object: &mut Map<String, Value>, key: &str, value: Value) {
        match self.slot(n, object, key) {
            Some(slot) => *slot = value,
            None => {
                object.insert(key.to_owned(), value);
            }
        }
    }
}

/// The value under `key` of `object`. The objects of a history are small (a part, a call, an
/// item: a handful of fields), and for them a look along the fields, lengths first, is cheaper
/// than hashing the key; a large one is looked up by hash.
fn slot<'a>(object: &'a mut Map<String, Value>, key: &str) -> Option<&'a mut Value> {
    if object.len() > 8 {
        return object.get_mut(key);
    }
    object
        .iter_mut()
        .find_map(|(name, value)| (name == key).then_some(value))
}

/// [`slot`], to read.
pub(crate) fn field<'a>(object: &'a Map<String, Value>, key: &str) -> Option<&'a Value> {
    if object.len() > 8 {
        return object.get(key);
    }
    object
        .iter()
        .find_map(|(name, value)| (name == key).then_some(value))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every block and message holds one: what a read one keeps must not make the others
    /// larger to move (a repair moves every block of a history).
    #[test]
    fn an_extra_is_one_map_and_a_few_words() {
        let map = std::mem::size_of::<Map<String, Value>>();
        assert!(std::mem::size_of::<Extra>() <= map + 16);
    }

    /// Fields added to a block read from another format are its own, beside the object it
    /// was; equal to the same read from JSON.
    #[test]
    fn fields_beside_what_it_was() {
        let object: Map<String, Value> =
            [("text".to_owned(), Value::from(""))].into_iter().collect();
        let mut extra = Extra::of(Origin::GeminiPart, object.clone(), Holes::NEW);
        assert!(extra.is_empty());
        extra.insert("cache_control".to_owned(), Value::from("x"));
        assert_eq!(extra.len(), 1);
        assert_eq!(
            extra.was(Origin::GeminiPart).map(|(map, _)| map),
            Some(&object)
        );
        assert!(extra.was(Origin::ResponsesItem).is_none());
        let json = serde_json::to_string(&extra).unwrap();
        assert_eq!(json, r#"{"gemini_part":{"text":""},"cache_control":"x"}"#);
        let read: Extra = serde_json::from_str(&json).unwrap();
        assert_eq!(read, extra);
        assert_eq!(
            read.into_was(Origin::GeminiPart).map(|(map, _)| map),
            Some(object)
        );
    }
}
