//! The parser: reads the MLIR generic op syntax written by [`crate::print`] back into an
//! equal [`Module`].
//!
//! It accepts exactly the printer's grammar (see `print.rs` for the layout), with any
//! whitespace and `//` comments between tokens; resource keys and dictionary keys may be
//! bare identifiers or strings, integers may carry `: i64`. Values may be used before the
//! op defining them (MLIR allows it; the verifier reports it), but every `%N` from `%0`
//! up must be defined exactly once, with the type its uses state.
//!
//! Errors carry a 1-based line and column and a one-line message. The parser never
//! panics: the lexer bounds-checks every read, nesting depth is capped, and value ids are
//! collected sparsely so a huge `%N` cannot allocate.

mod attr;
mod build;
mod lexer;

use crate::module::{Location, Module, Op, ValueId};
use crate::opcode::OpCode;
use crate::types::TensorType;
use attr::PAttr;
use lexer::Cursor;
use std::collections::BTreeMap;

/// A syntax or consistency error in module text.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{line}:{col}: {message}")]
pub struct ParseError {
    /// 1-based line.
    pub line: usize,
    /// 1-based column, in characters.
    pub col: usize,
    /// The problem, one line.
    pub message: String,
}

/// Parses a module printed by [`crate::print_module`].
pub fn parse_module(text: &str) -> Result<Module, ParseError> {
    let mut p = Parser::new(text);
    p.module()
}

/// A use of a value: its id, the type the text gives it, and where.
struct Use {
    id: u32,
    ty: TensorType,
    pos: usize,
}

/// Parser state: the cursor and the values seen so far.
pub(super) struct Parser<'a> {
    cur: Cursor<'a>,
    /// Definitions by id: type and position.
    defs: BTreeMap<u32, (TensorType, usize)>,
    /// Every use, checked once all definitions are known.
    uses: Vec<Use>,
}

/// The `func.return` operands and the return's position.
type Returns = (Vec<ValueId>, usize);

/// The pieces of the text the module is assembled from.
struct Parts {
    /// Block arguments (module input values).
    args: Vec<ValueId>,
    ops: Vec<Op>,
    /// `func.return` operands and the position of the return.
    returns: Returns,
    /// The func's attributes and their position.
    func_attrs: (Vec<(String, PAttr)>, usize),
    /// Trailer entries: key, hex text, position.
    blobs: Vec<(String, String, usize)>,
}

impl<'a> Parser<'a> {
    fn new(text: &'a str) -> Self {
        Parser { cur: Cursor::new(text), defs: BTreeMap::new(), uses: Vec::new() }
    }

    /// The whole text.
    fn module(&mut self) -> Result<Module, ParseError> {
        for lit in ["\"builtin.module\"", "(", ")", "(", "{", "\"func.func\"", "(", ")", "(", "{"] {
            self.cur.expect(lit)?;
        }
        let args = self.block_label()?;
        let (ops, returns) = self.body()?;
        self.cur.expect("}")?;
        self.cur.expect(")")?;
        self.cur.skip_ws();
        let func_pos = self.cur.pos;
        let func_attrs = (self.dict(0)?, func_pos);
        for lit in [":", "(", ")", "->", "(", ")", "}", ")", ":", "(", ")", "->", "(", ")"] {
            self.cur.expect(lit)?;
        }
        let blobs = self.trailer()?;
        if !self.cur.at_end() {
            return Err(self.cur.expected("end of input"));
        }
        self.assemble(Parts { args, ops, returns, func_attrs, blobs })
    }

    /// `^bb0(%0: tensor<...>, ...):`; defines the block arguments.
    fn block_label(&mut self) -> Result<Vec<ValueId>, ParseError> {
        self.cur.expect("^bb0")?;
        let mut args = Vec::new();
        if self.cur.eat("(") && !self.cur.eat(")") {
            loop {
                let (id, pos) = self.cur.value_id()?;
                self.cur.expect(":")?;
                let ty = self.tensor_type()?;
                self.define(id, ty, pos)?;
                args.push(ValueId(id));
                if self.cur.eat(")") {
                    break;
                }
                self.cur.expect(",")?;
            }
        }
        self.cur.expect(":")?;
        Ok(args)
    }

    /// Ops up to and including `func.return`.
    fn body(&mut self) -> Result<(Vec<Op>, Returns), ParseError> {
        let mut ops = Vec::new();
        loop {
            self.cur.skip_ws();
            let pos = self.cur.pos;
            let results = self.result_names()?;
            self.cur.skip_ws();
            let name_pos = self.cur.pos;
            let name = self.cur.string()?;
            if name == "func.return" {
                if !results.is_empty() {
                    return Err(self.cur.error_at(pos, "`func.return` has no results"));
                }
                return Ok((ops, (self.return_op()?, pos)));
            }
            let opcode =
                OpCode::from_name(&name).ok_or_else(|| self.cur.error_at(name_pos, format!("unknown op `{name}`")))?;
            ops.push(self.op(opcode, results, pos)?);
        }
    }

    /// `%a, %b =` if present.
    fn result_names(&mut self) -> Result<Vec<(u32, usize)>, ParseError> {
        let mut names = Vec::new();
        if self.cur.peek() != Some(b'%') {
            return Ok(names);
        }
        loop {
            names.push(self.cur.value_id()?);
            if self.cur.eat("=") {
                return Ok(names);
            }
            self.cur.expect(",")?;
        }
    }

    /// `(%a, %b)`: an operand list.
    fn operand_names(&mut self) -> Result<Vec<(u32, usize)>, ParseError> {
        self.cur.expect("(")?;
        let mut names = Vec::new();
        if self.cur.eat(")") {
            return Ok(names);
        }
        loop {
            names.push(self.cur.value_id()?);
            if self.cur.eat(")") {
                return Ok(names);
            }
            self.cur.expect(",")?;
        }
    }

    /// The rest of an anec op after its name.
    fn op(&mut self, opcode: OpCode, results: Vec<(u32, usize)>, pos: usize) -> Result<Op, ParseError> {
        let operands = self.operand_names()?;
        let dict = if self.cur.peek() == Some(b'{') { self.dict(0)? } else { Vec::new() };
        self.cur.expect(":")?;
        let (in_tys, out_tys) = self.signature(operands.len(), results.len(), pos)?;
        let loc = if self.cur.at("loc") { self.loc()? } else { Location::default() };
        self.record_uses(&operands, &in_tys);
        for (&(id, at), ty) in results.iter().zip(&out_tys) {
            self.define(id, *ty, at)?;
        }
        let (name, attrs) = self.op_attrs(dict, pos)?;
        Ok(Op {
            opcode,
            name,
            operands: operands.iter().map(|&(id, _)| ValueId(id)).collect(),
            results: results.iter().map(|&(id, _)| ValueId(id)).collect(),
            attrs,
            loc,
        })
    }

    /// A function type whose arities must be `n_in` and `n_out`.
    fn signature(
        &mut self,
        n_in: usize,
        n_out: usize,
        pos: usize,
    ) -> Result<(Vec<TensorType>, Vec<TensorType>), ParseError> {
        let (ins, outs) = self.fn_type()?;
        if ins.len() != n_in || outs.len() != n_out {
            let msg = format!(
                "signature has {} operand and {} result types for {n_in} operands and {n_out} results",
                ins.len(),
                outs.len()
            );
            return Err(self.cur.error_at(pos, msg));
        }
        Ok((ins, outs))
    }

    /// `(%a) : (types) -> ()` after `"func.return"`.
    fn return_op(&mut self) -> Result<Vec<ValueId>, ParseError> {
        let pos = self.cur.pos;
        let operands = self.operand_names()?;
        self.cur.expect(":")?;
        let (tys, _) = self.signature(operands.len(), 0, pos)?;
        self.record_uses(&operands, &tys);
        Ok(operands.iter().map(|&(id, _)| ValueId(id)).collect())
    }

    /// Records uses for checking against definitions later.
    fn record_uses(&mut self, names: &[(u32, usize)], tys: &[TensorType]) {
        for (&(id, pos), &ty) in names.iter().zip(tys) {
            self.uses.push(Use { id, ty, pos });
        }
    }

    /// Records a definition, rejecting a second one.
    fn define(&mut self, id: u32, ty: TensorType, pos: usize) -> Result<(), ParseError> {
        if self.defs.insert(id, (ty, pos)).is_some() {
            return Err(self.cur.error_at(pos, format!("value %{id} is defined twice")));
        }
        Ok(())
    }

    /// The optional `{-# dialect_resources: { builtin: { key: "0x..." } } #-}` trailer.
    fn trailer(&mut self) -> Result<Vec<(String, String, usize)>, ParseError> {
        let mut blobs = Vec::new();
        if !self.cur.eat("{-#") {
            return Ok(blobs);
        }
        self.expect_word("dialect_resources")?;
        self.cur.expect(":")?;
        self.cur.expect("{")?;
        while !self.cur.eat("}") {
            let at = self.cur.pos;
            let dialect = self.cur.ident()?;
            if dialect != "builtin" && dialect != "anec" {
                return Err(self.cur.error_at(at, format!("unexpected resource dialect `{dialect}`")));
            }
            self.cur.expect(":")?;
            self.blob_entries(&mut blobs)?;
            if !self.cur.at("}") {
                self.cur.expect(",")?;
            }
        }
        self.cur.expect("#-}")?;
        Ok(blobs)
    }

    /// `{ key: "0x...", ... }`.
    fn blob_entries(&mut self, blobs: &mut Vec<(String, String, usize)>) -> Result<(), ParseError> {
        self.cur.expect("{")?;
        while !self.cur.eat("}") {
            self.cur.skip_ws();
            let at = self.cur.pos;
            let key = self.cur.key()?;
            self.cur.expect(":")?;
            blobs.push((key, self.cur.string()?, at));
            if !self.cur.at("}") {
                self.cur.expect(",")?;
            }
        }
        Ok(())
    }

    /// A specific bare word.
    fn expect_word(&mut self, word: &str) -> Result<(), ParseError> {
        self.cur.skip_ws();
        let at = self.cur.pos;
        match self.cur.ident() {
            Ok(w) if w == word => Ok(()),
            _ => {
                self.cur.pos = at;
                Err(self.cur.expected(&format!("`{word}`")))
            }
        }
    }
}
