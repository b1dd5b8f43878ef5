//! The MIL program structure: what CoreML's Model Intermediate Language says, before any
//! lowering.
//!
//! Both MIL front ends build this tree: the textual parser (`model.mil`) and the protobuf
//! reader (`.mlpackage`), so a program reads the same whichever file it came from, and
//! [`print::print_program`] writes it back in coremlc's text layout. The tree keeps the
//! source form of every value (rank-0 short forms, decimal vs hex floats, BLOBFILE
//! references) and a [`Span`] on every node for diagnostics; spans never take part in
//! equality, so "parse, print, parse" compares equal.
//!
//! Weights stay references (`BLOBFILE(path, offset)`) here; their bytes are resolved by the
//! front end into a [`BlobTable`] keyed by `(path, offset)`.

pub mod blob;
pub mod elements;
pub mod literal;
pub mod mapped;
pub mod print;
pub mod span;
pub mod types;

pub use blob::{zero_blobs, Backing, BlobData, BlobKey, BlobTable, SharedBytes};
pub use literal::Literal;
pub use mapped::{fill_file, map_file, spill};
pub use span::{LineIndex, Span};
pub use types::{Dim, ScalarType, Type};

/// A whole MIL program: `program(VERSION) [attrs] { func ... }`.
#[derive(Debug, Clone, PartialEq)]
pub struct Program {
    /// The version between the parentheses, as written (`"1.0"`, `"1.3"`).
    pub version: String,
    /// Program attributes (`buildInfo = dict<...>(...)`), in source order.
    pub attrs: Vec<NamedArg>,
    /// The functions, in source order.
    pub functions: Vec<Function>,
}

impl Program {
    /// The function called `name`.
    pub fn function(&self, name: &str) -> Option<&Function> {
        self.functions.iter().find(|f| f.name == name)
    }
}

/// `func NAME<opset>(inputs) [attrs] { body } -> (outputs);`
#[derive(Debug, Clone, PartialEq)]
pub struct Function {
    /// Function name (`main` by default).
    pub name: String,
    /// Opset name: `ios15` ... `ios18`.
    pub opset: String,
    /// Typed inputs.
    pub inputs: Vec<Param>,
    /// Function attributes (e.g. `FlexibleShapeInformation`), in source order.
    pub attrs: Vec<NamedArg>,
    /// The statements, in source order.
    pub body: Vec<Stmt>,
    /// Names of the returned values.
    pub outputs: Vec<Ident>,
    /// The `func` header.
    pub span: Span,
}

/// A typed name: a function input or a statement result.
#[derive(Debug, Clone, PartialEq)]
pub struct Param {
    /// Declared type.
    pub ty: Type,
    /// Variable name.
    pub name: Ident,
}

/// A name with where it was written.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Ident {
    /// The name.
    pub name: String,
    /// Where it was written.
    pub span: Span,
}

impl Ident {
    /// A name with no source position (built programmatically or from protobuf).
    pub fn new(name: impl Into<String>) -> Self {
        Ident { name: name.into(), span: Span::NONE }
    }
}

/// `[results =] op(inputs) [attrs];`
#[derive(Debug, Clone, PartialEq)]
pub struct Stmt {
    /// Declared results (empty for ops without results).
    pub outputs: Vec<Param>,
    /// Operator name (`conv`, `const`, `constexpr_lut_to_dense`, ...).
    pub op: Ident,
    /// Keyword inputs inside the parentheses, in source order.
    pub inputs: Vec<NamedArg>,
    /// Keyword attributes inside the brackets (`name`, `val`, ...), in source order.
    pub attrs: Vec<NamedArg>,
    /// The whole statement.
    pub span: Span,
}

impl Stmt {
    /// The input or attribute called `key` (inputs first).
    pub fn arg(&self, key: &str) -> Option<&Arg> {
        self.inputs.iter().chain(&self.attrs).find(|a| a.name.name == key).map(|a| &a.value)
    }

    /// The `name` attribute's string, if it has one.
    pub fn name_attr(&self) -> Option<&str> {
        match self.attrs.iter().find(|a| a.name.name == "name").map(|a| &a.value) {
            Some(Arg::Value(Value { data: ValueData::Literal(Literal::Str(s)), .. })) => Some(s),
            _ => None,
        }
    }
}

/// `key = arg`.
#[derive(Debug, Clone, PartialEq)]
pub struct NamedArg {
    /// The key.
    pub name: Ident,
    /// The argument.
    pub value: Arg,
}

/// An argument: a variable, a typed value, or a tuple of arguments (`values = (a, b)`).
#[derive(Debug, Clone, PartialEq)]
pub enum Arg {
    /// A variable reference.
    Name(Ident),
    /// A typed value.
    Value(Value),
    /// A parenthesised list of arguments.
    Tuple(Vec<Arg>, Span),
}

/// `type(literal)` or `type(BLOBFILE(path = ..., offset = ...))`.
#[derive(Debug, Clone, PartialEq)]
pub struct Value {
    /// The declared type.
    pub ty: Type,
    /// The contents.
    pub data: ValueData,
    /// The whole value.
    pub span: Span,
}

/// What a typed value holds.
#[derive(Debug, Clone, PartialEq)]
pub enum ValueData {
    /// An inline literal.
    Literal(Literal),
    /// A reference into a weight file: `BLOBFILE(path = string(..), offset = uint64(..))`.
    /// The two inner values keep their written types (rank-0 tensor or short form).
    BlobFile {
        /// The path value (a string).
        path: Box<Value>,
        /// The offset value (a uint64), pointing at the blob's metadata.
        offset: Box<Value>,
    },
}

impl ValueData {
    /// The `(path, offset)` of a BLOBFILE reference.
    pub fn blob_key(&self) -> Option<BlobKey> {
        match self {
            ValueData::BlobFile { path, offset } => match (&path.data, &offset.data) {
                (ValueData::Literal(Literal::Str(p)), ValueData::Literal(Literal::Int(o))) => {
                    Some(BlobKey { path: p.clone(), offset: u64::try_from(*o).ok()? })
                }
                _ => None,
            },
            ValueData::Literal(_) => None,
        }
    }
}

/// A MIL program with everything needed to lower it: the resolved weights and where the
/// program came from (for source locations in later errors).
#[derive(Debug, Clone, PartialEq)]
pub struct MilModel {
    /// The program.
    pub program: Program,
    /// Every `BLOBFILE` the program references, resolved and checked.
    pub blobs: BlobTable,
    /// The file the program was read from, as the user named it (for messages).
    pub file: String,
    /// The program text when it came from `model.mil` (spans index into it); `None` for
    /// protobuf input, where locations name the op instead.
    pub text: Option<String>,
}
