//! The intermediate form shared by dump and diff: a tree of named fields.
//!
//! Each structure of a program (header, load command, TD block, ...) becomes a [`Node`]
//! holding [`Field`]s with formatted values. `dump` renders the tree as indented text;
//! `diff` flattens it into `(location, value)` pairs and compares them by location. A
//! location is the non-empty node keys from the root down, then the field name, joined
//! by spaces (`TD 0 Common.InDim.Win`, `LC_SEGMENT_64[1] section[0] addr`).

/// How a field takes part in dump and diff.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Role {
    /// Shown and compared.
    Plain,
    /// Compared but not shown (zero unnamed words, empty BAR entries); the node's notes
    /// say how many were left out.
    Hidden,
    /// Shown but not compared: derived from data compared elsewhere (weight chunk bytes).
    Derived,
    /// Part of `LC_IDENT` (skipped by `DiffOptions::ignore_ident`).
    Ident,
    /// A file offset fixed by the load-command layout (`sizeofcmds`, command offsets,
    /// `symoff`, `stroff`, `reloff`): it moves with the length of `LC_IDENT`, so
    /// `DiffOptions::ignore_ident` skips it too.
    Layout,
    /// A symbol name (hash-insensitive under `DiffOptions::ignore_symbol_hashes`).
    SymbolName,
}

/// One named value.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Field {
    /// Name, unique inside its node.
    pub name: String,
    /// Formatted value.
    pub value: String,
    /// How dump and diff treat it.
    pub role: Role,
}

/// One structure: a heading, its fields, its sub-structures.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(crate) struct Node {
    /// Location component for diff (empty: contributes nothing).
    pub key: String,
    /// Heading for dump.
    pub title: String,
    /// The fields, in file order.
    pub fields: Vec<Field>,
    /// Sub-structures.
    pub children: Vec<Node>,
    /// Lines dump prints after the fields (what was left out); diff ignores them.
    pub notes: Vec<String>,
    /// Dump prints the fields on the heading line as `name=value`.
    pub compact: bool,
    /// Dump leaves the node out (an empty BAR); diff still compares it.
    pub hidden: bool,
}

impl Node {
    /// A node with a diff key and a dump title.
    pub fn new(key: impl Into<String>, title: impl Into<String>) -> Self {
        Self { key: key.into(), title: title.into(), ..Self::default() }
    }

    /// Adds a field of `role`.
    pub fn add(&mut self, name: impl Into<String>, value: impl Into<String>, role: Role) {
        self.fields.push(Field { name: name.into(), value: value.into(), role });
    }

    /// Adds a plain field.
    pub fn field(&mut self, name: impl Into<String>, value: impl Into<String>) {
        self.add(name, value, Role::Plain);
    }

    /// Adds a plain field shown in hex.
    pub fn hex(&mut self, name: impl Into<String>, value: impl Into<u64>) {
        self.field(name, format!("{:#x}", value.into()));
    }

    /// Adds a plain field shown in decimal.
    pub fn num(&mut self, name: impl Into<String>, value: impl Into<u64>) {
        self.field(name, value.into().to_string());
    }

    /// Builder form of `compact = true`.
    pub fn compact(mut self) -> Self {
        self.compact = true;
        self
    }
}

/// `value (0xvalue)`: the form of register fields and counts.
pub(crate) fn dec_hex(v: u64) -> String {
    format!("{v} ({v:#x})")
}

/// A field with its location and the paths of the keyed nodes above it.
#[derive(Debug, Clone)]
pub(crate) struct Flat<'a> {
    /// Where the field is (`TD 0 Common.InDim.Win`).
    pub location: String,
    /// Paths of its keyed ancestors, outermost first (`TD 0`).
    pub owners: Vec<String>,
    /// The field.
    pub field: &'a Field,
}

/// Every field of `nodes` with its location, in tree order.
pub(crate) fn flatten(nodes: &[Node]) -> Vec<Flat<'_>> {
    let mut out = Vec::new();
    for n in nodes {
        walk(n, "", &[], &mut out);
    }
    out
}

/// Appends the fields of `n` and its children under `prefix`.
fn walk<'a>(n: &'a Node, prefix: &str, owners: &[String], out: &mut Vec<Flat<'a>>) {
    let here = join(prefix, &n.key);
    let mut owners = owners.to_vec();
    if !n.key.is_empty() {
        owners.push(here.clone());
    }
    for f in &n.fields {
        out.push(Flat { location: join(&here, &f.name), owners: owners.clone(), field: f });
    }
    for c in &n.children {
        walk(c, &here, &owners, out);
    }
}

/// `a b`, or whichever is non-empty.
fn join(a: &str, b: &str) -> String {
    match (a.is_empty(), b.is_empty()) {
        (true, _) => b.to_string(),
        (_, true) => a.to_string(),
        _ => format!("{a} {b}"),
    }
}
