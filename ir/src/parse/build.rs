//! Assembling the module from the parsed pieces: op attributes, the func's port and
//! resource attributes, the value table, and the resource blobs.

use super::attr::{PAttr, PKind};
use super::{ParseError, Parser, Parts};
use crate::attr::Attrs;
use crate::module::{Blob, Layout, Location, Module, Port, Value, ValueId};
use crate::print::referenced_dtypes;
use crate::types::{DType, TensorType};
use std::collections::BTreeMap;

/// The func attributes, read.
struct FuncAttrs {
    name: String,
    inputs: Vec<Port>,
    outputs: Vec<Port>,
    resource_types: BTreeMap<String, (DType, usize)>,
    fn_type: (Vec<TensorType>, Vec<TensorType>),
}

impl Parser<'_> {
    /// Splits an op's dictionary into its `name` and its attributes.
    pub(super) fn op_attrs(&self, dict: Vec<(String, PAttr)>, pos: usize) -> Result<(String, Attrs), ParseError> {
        let mut name = None;
        let mut attrs = Attrs::new();
        for (key, value) in dict {
            if key == "name" {
                name = Some(self.string_of(value)?);
            } else {
                attrs.insert(key, self.to_attr(value)?);
            }
        }
        let name = name.ok_or_else(|| self.cur.error_at(pos, "op has no `name` attribute"))?;
        Ok((name, attrs))
    }

    /// The string a value holds.
    fn string_of(&self, a: PAttr) -> Result<String, ParseError> {
        match a.kind {
            PKind::Str(s) => Ok(s),
            _ => Err(self.wrong_kind(&a, "a string")),
        }
    }

    /// Builds the module from its parts.
    pub(super) fn assemble(&mut self, parts: Parts) -> Result<Module, ParseError> {
        let (dict, func_pos) = parts.func_attrs;
        let mut f = self.func_attrs(dict, func_pos)?;
        let values = self.values()?;
        self.bind_ports(&mut f.inputs, &parts.args, func_pos, "anec.inputs", "block arguments")?;
        let (rets, ret_pos) = parts.returns;
        self.bind_ports(&mut f.outputs, &rets, ret_pos, "anec.outputs", "returned values")?;
        let ins: Vec<TensorType> = values_of(&values, &parts.args);
        let outs: Vec<TensorType> = values_of(&values, &rets);
        if f.fn_type != (ins, outs) {
            return Err(self
                .cur
                .error_at(func_pos, "`function_type` does not match the block arguments and returned values"));
        }
        let dtypes = referenced_dtypes(&parts.ops);
        let resources = self.resources(parts.blobs, &f.resource_types, &dtypes)?;
        Ok(Module {
            name: f.name,
            values,
            inputs: f.inputs,
            outputs: f.outputs,
            ops: parts.ops,
            resources,
            hints: Default::default(),
        })
    }

    /// Checks there are as many ports as values and gives each port its value.
    fn bind_ports(
        &self,
        ports: &mut [Port],
        ids: &[ValueId],
        pos: usize,
        attr: &str,
        what: &str,
    ) -> Result<(), ParseError> {
        if ports.len() != ids.len() {
            let msg = format!("`{attr}` lists {} ports for {} {what}", ports.len(), ids.len());
            return Err(self.cur.error_at(pos, msg));
        }
        for (port, &id) in ports.iter_mut().zip(ids) {
            port.value = id;
        }
        Ok(())
    }

    /// The value table: ids `%0..%n` all defined, every use matching its definition.
    fn values(&self) -> Result<Vec<Value>, ParseError> {
        let mut values = Vec::with_capacity(self.defs.len());
        for (expected, (&id, &(ty, pos))) in self.defs.iter().enumerate() {
            if id as usize != expected {
                return Err(self.cur.error_at(pos, format!("value %{expected} is never defined (ids must be %0..%N)")));
            }
            values.push(Value { ty });
        }
        for u in &self.uses {
            match self.defs.get(&u.id) {
                None => return Err(self.cur.error_at(u.pos, format!("use of undefined value %{}", u.id))),
                Some((ty, _)) if *ty != u.ty => {
                    let msg = format!("value %{} is used as {} but defined as {ty}", u.id, u.ty);
                    return Err(self.cur.error_at(u.pos, msg));
                }
                Some(_) => {}
            }
        }
        Ok(values)
    }

    /// Reads the func's attribute dictionary.
    fn func_attrs(&self, dict: Vec<(String, PAttr)>, pos: usize) -> Result<FuncAttrs, ParseError> {
        let (mut name, mut inputs, mut outputs, mut fn_type) = (None, None, None, None);
        let mut resource_types = BTreeMap::new();
        for (key, value) in dict {
            match key.as_str() {
                "sym_name" => name = Some(self.string_of(value)?),
                "anec.inputs" => inputs = Some(self.ports(value)?),
                "anec.outputs" => outputs = Some(self.ports(value)?),
                "anec.resource_types" => resource_types = self.resource_types(value)?,
                "function_type" => match value.kind {
                    PKind::FnType(i, o) => fn_type = Some((i, o)),
                    _ => return Err(self.wrong_kind(&value, "a function type")),
                },
                _ => return Err(self.cur.error_at(value.pos, format!("unknown func attribute `{key}`"))),
            }
        }
        let missing = |what: &str| self.cur.error_at(pos, format!("func has no `{what}` attribute"));
        Ok(FuncAttrs {
            name: name.ok_or_else(|| missing("sym_name"))?,
            inputs: inputs.ok_or_else(|| missing("anec.inputs"))?,
            outputs: outputs.ok_or_else(|| missing("anec.outputs"))?,
            resource_types,
            fn_type: fn_type.ok_or_else(|| missing("function_type"))?,
        })
    }

    /// `[{name = ..., ...}, ...]`.
    fn ports(&self, a: PAttr) -> Result<Vec<Port>, ParseError> {
        match a.kind {
            PKind::Array(items) => items.into_iter().map(|p| self.port(p)).collect(),
            _ => Err(self.wrong_kind(&a, "an array of port dictionaries")),
        }
    }

    /// One port dictionary; its value is bound later.
    fn port(&self, a: PAttr) -> Result<Port, ParseError> {
        let PKind::Dict(items) = a.kind else {
            return Err(self.wrong_kind(&a, "a port dictionary"));
        };
        let mut name = None;
        let (mut layout, mut loc) = (Layout::default(), Location::default());
        for (key, v) in items {
            match key.as_str() {
                "name" => name = Some(self.string_of(v)?),
                "loc" => loc = self.loc_of(v)?,
                "row_stride" => layout.row_stride = Some(self.unsigned(v)?),
                "plane_stride" => layout.plane_stride = Some(self.unsigned(v)?),
                "depth_stride" => layout.depth_stride = Some(self.unsigned(v)?),
                "batch_stride" => layout.batch_stride = Some(self.unsigned(v)?),
                "interleave" => layout.interleave = Some(self.interleave(v)?),
                _ => return Err(self.cur.error_at(v.pos, format!("unknown port field `{key}`"))),
            }
        }
        let name = name.ok_or_else(|| self.cur.error_at(a.pos, "port has no `name`"))?;
        Ok(Port { name, value: ValueId(0), layout, loc })
    }

    /// A location value.
    fn loc_of(&self, a: PAttr) -> Result<Location, ParseError> {
        match a.kind {
            PKind::Loc(l) => Ok(l),
            _ => Err(self.wrong_kind(&a, "a location")),
        }
    }

    /// A non-negative 64-bit integer.
    fn unsigned(&self, a: PAttr) -> Result<u64, ParseError> {
        match a.kind {
            PKind::Int(v) => u64::try_from(v).map_err(|_| self.cur.error_at(a.pos, "expected a non-negative integer")),
            _ => Err(self.wrong_kind(&a, "an integer")),
        }
    }

    /// An interleave factor (32-bit).
    fn interleave(&self, a: PAttr) -> Result<u32, ParseError> {
        let pos = a.pos;
        let v = self.unsigned(a)?;
        u32::try_from(v).map_err(|_| self.cur.error_at(pos, "interleave does not fit in 32 bits"))
    }

    /// `{key = f16, ...}`.
    fn resource_types(&self, a: PAttr) -> Result<BTreeMap<String, (DType, usize)>, ParseError> {
        let PKind::Dict(items) = a.kind else {
            return Err(self.wrong_kind(&a, "a dictionary of element types"));
        };
        let mut out = BTreeMap::new();
        for (key, v) in items {
            match v.kind {
                PKind::DType(t) => out.insert(key, (t, v.pos)),
                _ => return Err(self.wrong_kind(&v, "an element type")),
            };
        }
        Ok(out)
    }

    /// Decodes the trailer's blobs, giving each its element type.
    fn resources(
        &self,
        blobs: Vec<(String, String, usize)>,
        stated: &BTreeMap<String, (DType, usize)>,
        referenced: &BTreeMap<String, DType>,
    ) -> Result<BTreeMap<String, Blob>, ParseError> {
        let mut out = BTreeMap::new();
        for (key, hex, pos) in blobs {
            let dtype = stated.get(&key).map(|&(t, _)| t).or_else(|| referenced.get(&key).copied());
            let dtype = dtype.ok_or_else(|| self.cur.error_at(pos, format!("resource `{key}` has no element type: no attribute refers to it and `anec.resource_types` does not list it")))?;
            let bytes = decode_blob(&hex).map_err(|m| self.cur.error_at(pos, format!("resource `{key}`: {m}")))?;
            if out.insert(key.clone(), Blob { dtype, bytes: bytes.into() }).is_some() {
                return Err(self.cur.error_at(pos, format!("resource `{key}` appears twice")));
            }
        }
        if let Some((key, &(_, pos))) = stated.iter().find(|(k, _)| !out.contains_key(k.as_str())) {
            return Err(self.cur.error_at(pos, format!("`anec.resource_types` names `{key}`, which has no blob")));
        }
        Ok(out)
    }
}

/// The types of `ids` (all defined: checked by `values`).
fn values_of(values: &[Value], ids: &[ValueId]) -> Vec<TensorType> {
    ids.iter().filter_map(|id| values.get(id.index()).map(|v| v.ty)).collect()
}

/// `0x` + 4 alignment bytes + data, in hex; returns the data.
fn decode_blob(hex: &str) -> Result<Vec<u8>, String> {
    let digits = hex.strip_prefix("0x").ok_or("blob must start with `0x`")?;
    if digits.len() % 2 != 0 || digits.len() < 8 {
        return Err("blob needs a 4-byte alignment word and whole bytes".into());
    }
    let bytes: Option<Vec<u8>> = digits
        .as_bytes()
        .chunks(2)
        .map(|pair| {
            let h = char::from(*pair.first()?).to_digit(16)?;
            let l = char::from(*pair.get(1)?).to_digit(16)?;
            Some((h * 16 + l) as u8)
        })
        .collect();
    let bytes = bytes.ok_or("blob has a non-hex digit")?;
    Ok(bytes.get(4..).unwrap_or_default().to_vec())
}
