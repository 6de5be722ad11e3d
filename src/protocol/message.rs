//! One chat message as the client sent it: its keys in order, each with its JSON value.
//!
//! A message has two to five keys. `serde_json::Map` (an `IndexMap` with SipHash, for key
//! order) costs a hash table, an entry vector and a `String` per key for each one; a 20-turn
//! chat has ~40 messages, and building them was a quarter of parsing its body. Here the keys
//! live in one small vector, found by a linear scan (faster than hashing at this size), and
//! the common key names are static strings rather than allocations. Parsing a 40-message,
//! 40 KB body with mimalloc: 13.5 µs into `serde_json::Map`, 10.4 µs into this.
//!
//! Semantics match `serde_json::Map` with `preserve_order` (and a Python dict): keys keep the
//! order they first appear in, and a repeated key takes the last value in the first place.
//!
//! A string value (content, role, name, ...) is a [`Text`], which slices the request body
//! instead of copying when the body is parsed with [`super::text::parse_shared`]; other
//! values are `serde_json::Value`s.

use super::text::Text;
use serde::de::value::{MapAccessDeserializer, SeqAccessDeserializer};
use serde::de::{Deserialize, Deserializer, MapAccess, SeqAccess, Visitor};
use serde::ser::{Serialize, SerializeMap, Serializer};
use serde_json::Value;
use std::borrow::Cow;

/// Key names kept without an allocation.
const COMMON_KEYS: [&str; 10] = [
    "role",
    "content",
    "name",
    "tool_calls",
    "tool_call_id",
    "reasoning_content",
    "reasoning",
    "thinking",
    "type",
    "text",
];

/// A message's value for one key.
///
/// Strings are always [`Field::Str`], never `Field::Json(Value::String(_))`: every
/// constructor sorts them so, and readers match on that.
#[derive(Debug, Clone, PartialEq)]
pub enum Field {
    Str(Text),
    Json(Value),
}

impl Field {
    pub fn as_str(&self) -> Option<&str> {
        match self {
            Field::Str(s) => Some(s),
            Field::Json(_) => None,
        }
    }

    /// The value when it is not a string.
    pub fn as_json(&self) -> Option<&Value> {
        match self {
            Field::Str(_) => None,
            Field::Json(v) => Some(v),
        }
    }

    pub fn is_null(&self) -> bool {
        matches!(self, Field::Json(Value::Null))
    }

    /// The value as a `serde_json::Value` (a copy).
    pub fn to_value(&self) -> Value {
        match self {
            Field::Str(s) => Value::String(s.to_string()),
            Field::Json(v) => v.clone(),
        }
    }
}

impl From<Value> for Field {
    fn from(v: Value) -> Field {
        match v {
            Value::String(s) => Field::Str(s.into()),
            v => Field::Json(v),
        }
    }
}

impl Serialize for Field {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        match self {
            Field::Str(t) => s.serialize_str(t),
            Field::Json(v) => v.serialize(s),
        }
    }
}

impl<'de> Deserialize<'de> for Field {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        d.deserialize_any(FieldVisitor)
    }
}

/// Builds what `Value`'s own visitor builds, except that strings become [`Text`]s.
struct FieldVisitor;

impl<'de> Visitor<'de> for FieldVisitor {
    type Value = Field;

    fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
        f.write_str("any valid JSON value")
    }
    fn visit_borrowed_str<E>(self, s: &'de str) -> Result<Field, E> {
        Ok(Field::Str(Text::from_body_or_copy(s)))
    }
    fn visit_str<E>(self, s: &str) -> Result<Field, E> {
        Ok(Field::Str(s.into()))
    }
    fn visit_string<E>(self, s: String) -> Result<Field, E> {
        Ok(Field::Str(s.into()))
    }
    fn visit_bool<E>(self, b: bool) -> Result<Field, E> {
        Ok(Field::Json(Value::Bool(b)))
    }
    fn visit_i64<E>(self, n: i64) -> Result<Field, E> {
        Ok(Field::Json(Value::Number(n.into())))
    }
    fn visit_u64<E>(self, n: u64) -> Result<Field, E> {
        Ok(Field::Json(Value::Number(n.into())))
    }
    fn visit_f64<E>(self, n: f64) -> Result<Field, E> {
        Ok(Field::Json(
            serde_json::Number::from_f64(n).map_or(Value::Null, Value::Number),
        ))
    }
    fn visit_unit<E>(self) -> Result<Field, E> {
        Ok(Field::Json(Value::Null))
    }
    fn visit_none<E>(self) -> Result<Field, E> {
        Ok(Field::Json(Value::Null))
    }
    fn visit_some<D: Deserializer<'de>>(self, d: D) -> Result<Field, D::Error> {
        Field::deserialize(d)
    }
    fn visit_seq<A: SeqAccess<'de>>(self, seq: A) -> Result<Field, A::Error> {
        Value::deserialize(SeqAccessDeserializer::new(seq)).map(Field::Json)
    }
    fn visit_map<A: MapAccess<'de>>(self, map: A) -> Result<Field, A::Error> {
        // `Value`'s visitor, which also reads serde_json's number and raw-value maps.
        Value::deserialize(MapAccessDeserializer::new(map)).map(Field::from)
    }
}

#[derive(Debug, Clone, Default, PartialEq)]
pub struct Message {
    entries: Vec<(Cow<'static, str>, Field)>,
}

impl Message {
    /// The value of `key`.
    pub fn get(&self, key: &str) -> Option<&Field> {
        self.entries
            .iter()
            .find(|(k, _)| k.as_ref() == key)
            .map(|(_, v)| v)
    }

    /// Keys and values in order.
    pub fn iter(&self) -> impl Iterator<Item = (&str, &Field)> {
        self.entries.iter().map(|(k, v)| (k.as_ref(), v))
    }

    pub fn len(&self) -> usize {
        self.entries.len()
    }

    pub fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }

    /// Sets `key`, keeping its place if it is already there (as a Python dict does).
    pub fn insert(&mut self, key: &str, value: Value) {
        self.set(stored_key(key.into()), value.into());
    }

    fn set(&mut self, key: Cow<'static, str>, value: Field) {
        match self.entries.iter_mut().find(|(k, _)| *k == key) {
            Some(slot) => slot.1 = value,
            None => self.entries.push((key, value)),
        }
    }
}

/// `key` as stored: a static string when it is a common one, else owned.
fn stored_key(key: Cow<'_, str>) -> Cow<'static, str> {
    match COMMON_KEYS.iter().find(|k| **k == key) {
        Some(k) => Cow::Borrowed(k),
        None => Cow::Owned(key.into_owned()),
    }
}

impl From<serde_json::Map<String, Value>> for Message {
    fn from(map: serde_json::Map<String, Value>) -> Self {
        let mut m = Message {
            entries: Vec::with_capacity(map.len()),
        };
        for (k, v) in map {
            m.set(stored_key(k.into()), v.into());
        }
        m
    }
}

impl Serialize for Message {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let mut map = s.serialize_map(Some(self.entries.len()))?;
        for (k, v) in &self.entries {
            map.serialize_entry(k.as_ref(), v)?;
        }
        map.end()
    }
}

impl<'de> Deserialize<'de> for Message {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        d.deserialize_map(MessageVisitor)
    }
}

struct MessageVisitor;

impl<'de> Visitor<'de> for MessageVisitor {
    type Value = Message;

    /// The same words as `serde_json::Map`'s, so errors read as before.
    fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
        f.write_str("a map")
    }

    fn visit_map<A: MapAccess<'de>>(self, mut access: A) -> Result<Message, A::Error> {
        let mut m = Message {
            entries: Vec::with_capacity(access.size_hint().unwrap_or(4).min(16)),
        };
        while let Some(key) = access.next_key::<Key>()? {
            m.set(key.0, access.next_value::<Field>()?);
        }
        Ok(m)
    }
}

/// A key, interned when common.
struct Key(Cow<'static, str>);

impl<'de> Deserialize<'de> for Key {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct KeyVisitor;
        impl Visitor<'_> for KeyVisitor {
            type Value = Key;
            fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
                f.write_str("a string key")
            }
            fn visit_str<E>(self, s: &str) -> Result<Key, E> {
                Ok(Key(stored_key(s.into())))
            }
            fn visit_string<E>(self, s: String) -> Result<Key, E> {
                Ok(Key(stored_key(s.into())))
            }
        }
        d.deserialize_str(KeyVisitor)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    /// Order, repeated keys and round trips agree with `serde_json::Map`.
    #[test]
    fn behaves_as_serde_json_map() {
        for text in [
            r#"{"role": "user", "content": "hi"}"#,
            r#"{"content": "a", "role": "user", "content": "b", "x": {"k": [1, 2.5, null]}}"#,
            r#"{"zeta": 1, "alpha": 2, "role": "tool", "tool_call_id": "c1", "name": "f"}"#,
            r#"{}"#,
        ] {
            let map: serde_json::Map<String, Value> = serde_json::from_str(text).unwrap();
            let msg: Message = serde_json::from_str(text).unwrap();
            assert_eq!(
                serde_json::to_string(&msg).unwrap(),
                serde_json::to_string(&map).unwrap()
            );
            let keys: Vec<&str> = msg.iter().map(|(k, _)| k).collect();
            let want: Vec<&str> = map.keys().map(String::as_str).collect();
            assert_eq!(keys, want);
            for (k, v) in &map {
                assert_eq!(msg.get(k).map(Field::to_value).as_ref(), Some(v));
            }
            assert_eq!(Message::from(map.clone()), msg);
            let via_value: Message = serde_json::from_value(Value::Object(map)).unwrap();
            assert_eq!(via_value, msg);
        }
    }

    /// Parsed from a body the server holds, strings without escapes slice the body; the
    /// message reads the same as one parsed from a `str` or built from a `Value`.
    #[test]
    fn shared_parse_reads_the_same() {
        for text in [
            r#"{"role": "user", "content": "plain"}"#,
            r#"{"role": "user", "content": "esc\"aped\n", "name": "\u00e9"}"#,
            r#"{"content": [{"type": "text", "text": "t"}], "role": "user", "n": -1.5e3}"#,
            r#"{"role": "assistant", "tool_calls": [{"function": {"arguments": "{}"}}], "x": null, "big": 18446744073709551615, "neg": -9223372036854775808, "t": true}"#,
        ] {
            let body = bytes::Bytes::copy_from_slice(text.as_bytes());
            let shared: Message = crate::protocol::parse_json_shared(&body).unwrap();
            let plain: Message = serde_json::from_str(text).unwrap();
            let value: Value = serde_json::from_str(text).unwrap();
            let via_value: Message = serde_json::from_value(value.clone()).unwrap();
            assert_eq!(shared, plain);
            assert_eq!(shared, via_value);
            assert_eq!(serde_json::to_value(&shared).unwrap(), value);
            for (_, field) in shared.iter() {
                assert!(!matches!(field, Field::Json(Value::String(_))));
            }
        }
    }

    #[test]
    fn errors_read_as_serde_json_map_errors() {
        let want = serde_json::from_str::<serde_json::Map<String, Value>>(r#""text""#)
            .unwrap_err()
            .to_string();
        let got = serde_json::from_str::<Message>(r#""text""#)
            .unwrap_err()
            .to_string();
        assert_eq!(got, want);
    }

    #[test]
    fn insert_keeps_the_first_place() {
        let mut m: Message =
            serde_json::from_value(json!({"role": "user", "content": "a"})).unwrap();
        m.insert("role", json!("assistant"));
        m.insert("extra", json!(1));
        assert_eq!(
            serde_json::to_string(&m).unwrap(),
            r#"{"role":"assistant","content":"a","extra":1}"#
        );
    }
}
