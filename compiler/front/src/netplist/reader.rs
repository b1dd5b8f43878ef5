//! Typed access to plist dictionaries, with errors that name the file, entry and key.
//!
//! A [`Dict`] wraps one plist dictionary together with the [`Site`] it belongs to and the
//! path of the dictionary inside the entry (`Params`, `Params.BiasScaleGroupData`). Every
//! accessor either returns the typed value or a [`FrontError`] naming the key; nothing here
//! panics on any input.

use crate::error::{FrontError, Site};
use anec_ir::DType;
use plist::{Dictionary, Value};

/// Result type of the netplist front end.
pub(crate) type Result<T> = std::result::Result<T, FrontError>;

/// One plist dictionary in context.
#[derive(Debug, Clone)]
pub(crate) struct Dict<'a> {
    map: &'a Dictionary,
    site: &'a Site,
    path: String,
}

/// The plist type name of a value, for messages.
pub(crate) fn kind(v: &Value) -> &'static str {
    match v {
        Value::Array(_) => "an array",
        Value::Dictionary(_) => "a dictionary",
        Value::Boolean(_) => "a boolean",
        Value::Data(_) => "data",
        Value::Date(_) => "a date",
        Value::Real(_) => "a real",
        Value::Integer(_) => "an integer",
        Value::String(_) => "a string",
        Value::Uid(_) => "a uid",
        _ => "an unknown value",
    }
}

/// Converts an fp16 bit pattern stored as an integer to its exact value. Apple writes these
/// with `numberWithShort:`, so both the signed (-32768..=-1) and the unsigned (32768..=65535)
/// spelling of patterns with the sign bit set are accepted.
pub(crate) fn half_bits(v: i64) -> Option<f64> {
    let bits = if (-32768..0).contains(&v) { v + 65536 } else { v };
    let bits = u16::try_from(bits).ok()?;
    Some(half::f16::from_bits(bits).to_f64())
}

/// The netplist name of an element type.
pub(crate) fn dtype_name(t: DType) -> &'static str {
    match t {
        DType::F16 => "Float16",
        DType::F32 => "Float32",
        DType::U8 => "UInt8",
        DType::I8 => "Int8",
    }
}

/// Parses a netplist element type name.
pub(crate) fn parse_dtype(s: &str) -> Option<DType> {
    match s {
        "Float16" => Some(DType::F16),
        "Float32" => Some(DType::F32),
        "UInt8" => Some(DType::U8),
        "Int8" => Some(DType::I8),
        _ => None,
    }
}

impl<'a> Dict<'a> {
    /// A top-level dictionary of an entry.
    pub(crate) fn new(map: &'a Dictionary, site: &'a Site) -> Self {
        Dict { map, site, path: String::new() }
    }

    /// The site this dictionary belongs to.
    pub(crate) fn site(&self) -> &'a Site {
        self.site
    }

    /// The underlying plist dictionary.
    pub(crate) fn map(&self) -> &'a Dictionary {
        self.map
    }

    /// The ` in Params` suffix used in messages.
    pub(crate) fn within(&self) -> String {
        if self.path.is_empty() {
            String::new()
        } else {
            format!(" in {}", self.path)
        }
    }

    /// A missing-key error for `key` in this dictionary.
    pub(crate) fn missing(&self, key: &str) -> FrontError {
        FrontError::MissingKey { site: Box::new(self.site.clone()), key: key.into(), within: self.within() }
    }

    /// A bad-value error for `key` in this dictionary.
    pub(crate) fn bad(&self, key: &str, message: impl Into<String>) -> FrontError {
        FrontError::BadValue {
            site: Box::new(self.site.clone()),
            key: key.into(),
            within: self.within(),
            message: message.into(),
        }
    }

    /// A wrong-type error for `key` in this dictionary.
    pub(crate) fn wrong(&self, key: &str, expected: &'static str, found: &Value) -> FrontError {
        FrontError::WrongType {
            site: Box::new(self.site.clone()),
            key: key.into(),
            within: self.within(),
            expected,
            found: kind(found),
        }
    }

    /// The raw value of `key`, if present.
    pub(crate) fn get(&self, key: &str) -> Option<&'a Value> {
        self.map.get(key)
    }

    /// The raw value of `key`, required.
    pub(crate) fn req(&self, key: &str) -> Result<&'a Value> {
        self.get(key).ok_or_else(|| self.missing(key))
    }

    fn to_int(&self, key: &str, v: &Value) -> Result<i64> {
        match v {
            Value::Integer(i) => i.as_signed().ok_or_else(|| self.bad(key, "integer out of range")),
            other => Err(self.wrong(key, "an integer", other)),
        }
    }

    /// An optional integer.
    pub(crate) fn opt_int(&self, key: &str) -> Result<Option<i64>> {
        self.get(key).map(|v| self.to_int(key, v)).transpose()
    }

    /// A required integer.
    pub(crate) fn int(&self, key: &str) -> Result<i64> {
        self.to_int(key, self.req(key)?)
    }

    /// Checks that an integer lies in `lo..=u32::MAX`.
    pub(crate) fn check_u32(&self, key: &str, v: i64, lo: u32) -> Result<u32> {
        match u32::try_from(v) {
            Ok(x) if x >= lo => Ok(x),
            _ => Err(self.bad(key, format!("{v} is out of range (expected {lo}..={})", u32::MAX))),
        }
    }

    /// A required extent or count (>= 1, fits 32 bits).
    pub(crate) fn dim(&self, key: &str) -> Result<u32> {
        let v = self.int(key)?;
        self.check_u32(key, v, 1)
    }

    /// An optional extent or count (>= 1) with a default.
    pub(crate) fn dim_or(&self, key: &str, default: u32) -> Result<u32> {
        match self.opt_int(key)? {
            Some(v) => self.check_u32(key, v, 1),
            None => Ok(default),
        }
    }

    /// An optional non-negative 32-bit integer (pads, offsets within a tensor).
    pub(crate) fn u32_or(&self, key: &str, default: u32) -> Result<u32> {
        match self.opt_int(key)? {
            Some(v) => self.check_u32(key, v, 0),
            None => Ok(default),
        }
    }

    /// An optional non-negative 64-bit integer (byte offsets, strides).
    pub(crate) fn opt_u64(&self, key: &str) -> Result<Option<u64>> {
        match self.opt_int(key)? {
            Some(v) => u64::try_from(v).map(Some).map_err(|_| self.bad(key, format!("{v} is negative"))),
            None => Ok(None),
        }
    }

    /// A required non-negative 64-bit integer.
    pub(crate) fn u64(&self, key: &str) -> Result<u64> {
        self.opt_u64(key)?.ok_or_else(|| self.missing(key))
    }

    /// An optional string.
    pub(crate) fn opt_str(&self, key: &str) -> Result<Option<&'a str>> {
        match self.get(key) {
            None => Ok(None),
            Some(Value::String(s)) => Ok(Some(s.as_str())),
            Some(other) => Err(self.wrong(key, "a string", other)),
        }
    }

    /// A required string.
    pub(crate) fn str(&self, key: &str) -> Result<&'a str> {
        self.opt_str(key)?.ok_or_else(|| self.missing(key))
    }

    /// An optional boolean.
    pub(crate) fn opt_bool(&self, key: &str) -> Result<Option<bool>> {
        match self.get(key) {
            None => Ok(None),
            Some(Value::Boolean(b)) => Ok(Some(*b)),
            Some(other) => Err(self.wrong(key, "a boolean", other)),
        }
    }

    /// An optional nested dictionary; its path extends this one's.
    pub(crate) fn opt_dict(&self, key: &str) -> Result<Option<Dict<'a>>> {
        match self.get(key) {
            None => Ok(None),
            Some(Value::Dictionary(map)) => Ok(Some(self.child(map, key))),
            Some(other) => Err(self.wrong(key, "a dictionary", other)),
        }
    }

    /// A required nested dictionary.
    pub(crate) fn dict(&self, key: &str) -> Result<Dict<'a>> {
        self.opt_dict(key)?.ok_or_else(|| self.missing(key))
    }

    /// A dictionary nested under `name` (a key or `Key[i]`).
    pub(crate) fn child(&self, map: &'a Dictionary, name: &str) -> Dict<'a> {
        let path = if self.path.is_empty() { name.to_string() } else { format!("{}.{name}", self.path) };
        Dict { map, site: self.site, path }
    }

    /// An optional array.
    pub(crate) fn opt_array(&self, key: &str) -> Result<Option<&'a [Value]>> {
        match self.get(key) {
            None => Ok(None),
            Some(Value::Array(a)) => Ok(Some(a.as_slice())),
            Some(other) => Err(self.wrong(key, "an array", other)),
        }
    }

    /// A required array.
    pub(crate) fn array(&self, key: &str) -> Result<&'a [Value]> {
        self.opt_array(key)?.ok_or_else(|| self.missing(key))
    }

    /// The elements of an array that must all be strings.
    pub(crate) fn strings_of(&self, key: &str, items: &'a [Value]) -> Result<Vec<&'a str>> {
        items
            .iter()
            .enumerate()
            .map(|(i, v)| match v {
                Value::String(s) => Ok(s.as_str()),
                other => Err(self.wrong(&format!("{key}[{i}]"), "a string", other)),
            })
            .collect()
    }

    /// A required array of strings.
    pub(crate) fn strings(&self, key: &str) -> Result<Vec<&'a str>> {
        let items = self.array(key)?;
        self.strings_of(key, items)
    }

    /// A required string or array of strings (`Bottom`).
    pub(crate) fn string_or_strings(&self, key: &str) -> Result<Vec<&'a str>> {
        match self.req(key)? {
            Value::String(s) => Ok(vec![s.as_str()]),
            Value::Array(a) => self.strings_of(key, a),
            other => Err(self.wrong(key, "a string or an array of strings", other)),
        }
    }

    /// An optional fp16 parameter: an integer is an fp16 bit pattern (`15360` = 1.0), a
    /// real is taken as is.
    pub(crate) fn opt_half(&self, key: &str) -> Result<Option<f64>> {
        match self.get(key) {
            None => Ok(None),
            Some(Value::Real(r)) => Ok(Some(*r)),
            Some(v @ Value::Integer(_)) => {
                let i = self.to_int(key, v)?;
                half_bits(i)
                    .map(Some)
                    .ok_or_else(|| self.bad(key, format!("{i} is not an fp16 bit pattern (-32768..=65535)")))
            }
            Some(other) => Err(self.wrong(key, "an integer (fp16 bits) or a real", other)),
        }
    }

    /// An optional element type (`Float16`, `Float32`, `UInt8`, `Int8`).
    pub(crate) fn opt_dtype(&self, key: &str) -> Result<Option<DType>> {
        match self.opt_str(key)? {
            None => Ok(None),
            Some(s) => parse_dtype(s)
                .map(Some)
                .ok_or_else(|| self.bad(key, format!("unknown type '{s}' (expected Float16, Float32, UInt8 or Int8)"))),
        }
    }

    /// A required element type.
    pub(crate) fn dtype(&self, key: &str) -> Result<DType> {
        self.opt_dtype(key)?.ok_or_else(|| self.missing(key))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::error::Subject;

    fn site() -> Site {
        Site { file: "t.plist".into(), line: 7, subject: Subject::Unit("u".into()) }
    }

    #[test]
    fn half_bits_accepts_both_spellings() {
        assert_eq!(half_bits(15360), Some(1.0));
        assert_eq!(half_bits(-17408), Some(-1.0));
        assert_eq!(half_bits(0xBC00), Some(-1.0));
        assert_eq!(half_bits(65536), None);
        assert_eq!(half_bits(-32769), None);
    }

    #[test]
    fn typed_access_reports_key_and_path() {
        let mut params = Dictionary::new();
        params.insert("KernelWidth".into(), Value::String("3".into()));
        let mut unit = Dictionary::new();
        unit.insert("Params".into(), Value::Dictionary(params));
        let s = site();
        let d = Dict::new(&unit, &s);
        let p = d.dict("Params").ok();
        let p = p.as_ref().map(|p| p.int("KernelWidth").map_err(|e| e.to_string()));
        assert_eq!(
            p,
            Some(Err("t.plist:7: unit 'u': key 'KernelWidth' in Params must be an integer, found a string".into()))
        );
        assert_eq!(
            d.int("Missing").map_err(|e| e.to_string()),
            Err("t.plist:7: unit 'u': missing key 'Missing'".into())
        );
    }
}
