//! The checker: what a syntactically valid program may still get wrong.
//!
//! Rejected: a variable used before (or without) a definition, a variable defined twice in
//! a function, a function output that is not defined, a function name or an argument key
//! given twice, an opset other than `ios15`..`ios18`, a literal that does not fit its
//! declared type ([`super::check_literal`]), and a `BLOBFILE` whose path is not a string
//! or whose offset is not a non-negative integer. Every problem is reported, in source
//! order.

use super::check_literal::{check_literal, kind};
use super::locate::element_span;
use anec_ir::mil::{Arg, Function, Ident, Literal, NamedArg, Program, ScalarType, Span, Value, ValueData};
use anec_ir::Diagnostic;
use std::collections::{HashMap, HashSet};
use std::sync::Arc;

/// The opsets accepted.
pub const OPSETS: [&str; 4] = ["ios15", "ios16", "ios17", "ios18"];

/// Checks a program; `file` and `text` go into the diagnostics (spans index `text`).
pub fn check_program(p: &Program, file: &str, text: Option<Arc<str>>) -> Vec<Diagnostic> {
    let errors = check_source(p, file, text.as_deref());
    errors.into_iter().map(|d| Diagnostic { text: text.clone(), ..d }).collect()
}

/// [`check_program`] with the text borrowed: the diagnostics carry no text yet (the
/// caller attaches it, so that a program without errors never copies its text).
pub(crate) fn check_source(p: &Program, file: &str, text: Option<&str>) -> Vec<Diagnostic> {
    let mut c = Checker { file, text, errors: Vec::new() };
    c.named_args(&p.attrs, &HashMap::new());
    let mut names: HashMap<&str, Span> = HashMap::new();
    for f in &p.functions {
        if let Some(first) = names.insert(&f.name, f.span) {
            let e = c.error(f.span, format!("function `{}` is defined twice", f.name), "second definition");
            c.push(c.first_defined(e, first));
        }
        c.function(f);
    }
    c.errors
}

struct Checker<'a> {
    file: &'a str,
    text: Option<&'a str>,
    errors: Vec<Diagnostic>,
}

/// Variables in scope: name to the span of the definition.
type Scope<'p> = HashMap<&'p str, Span>;

impl<'a> Checker<'a> {
    fn error(&self, span: Span, message: String, label: &str) -> Diagnostic {
        Diagnostic::new(self.file, None, span, message).with_label(label)
    }

    fn push(&mut self, d: Diagnostic) {
        self.errors.push(d);
    }

    /// Adds "first defined at line:col" when the text is known.
    fn first_defined(&self, d: Diagnostic, first: Span) -> Diagnostic {
        match self.text {
            Some(text) if !first.is_none() => {
                let (line, col) = first.line_col(text);
                d.with_note(format!("first defined at line {line}, column {col}"))
            }
            _ => d,
        }
    }

    fn function<'p>(&mut self, f: &'p Function) {
        if !OPSETS.contains(&f.opset.as_str()) {
            let d =
                self.error(opset_span(f, self.text), format!("unknown opset `{}`", f.opset), "not an opset anec knows");
            self.push(d.with_note("supported opsets: ios15, ios16, ios17, ios18"));
        }
        let mut scope: Scope<'p> = HashMap::new();
        for p in &f.inputs {
            self.define(&mut scope, &p.name, &f.name);
        }
        self.named_args(&f.attrs, &scope);
        for s in &f.body {
            self.named_args(&s.inputs, &scope);
            self.named_args(&s.attrs, &scope);
            for o in &s.outputs {
                self.define(&mut scope, &o.name, &f.name);
            }
        }
        for o in &f.outputs {
            if !scope.contains_key(o.name.as_str()) {
                let msg = format!("function output `{}` is not defined", o.name);
                let d = self.error(o.span, msg, &format!("no variable `{}` in function `{}`", o.name, f.name));
                self.push(d);
            }
        }
    }

    fn define<'p>(&mut self, scope: &mut Scope<'p>, name: &'p Ident, func: &str) {
        if let Some(first) = scope.insert(&name.name, name.span) {
            let msg = format!("variable `{}` is defined twice in function `{func}`", name.name);
            let d = self.error(name.span, msg, "second definition");
            self.push(self.first_defined(d, first));
        }
    }

    /// Keys given twice, then each argument.
    fn named_args(&mut self, args: &[NamedArg], scope: &Scope<'_>) {
        let mut seen: HashSet<&str> = HashSet::new();
        for (i, a) in args.iter().enumerate() {
            // Short lists (all real ones) are scanned; long ones use the set.
            let repeated = if args.len() <= 16 {
                args[..i].iter().any(|b| b.name.name == a.name.name)
            } else {
                !seen.insert(&a.name.name)
            };
            if repeated {
                let d = self.error(a.name.span, format!("argument `{}` is given twice", a.name.name), "repeated key");
                self.push(d);
            }
            self.arg(&a.value, scope);
        }
    }

    fn arg(&mut self, a: &Arg, scope: &Scope<'_>) {
        match a {
            Arg::Name(id) if !scope.contains_key(id.name.as_str()) => {
                let d = self.error(id.span, format!("use of undefined variable `{}`", id.name), "not defined before");
                self.push(d);
            }
            Arg::Name(_) => {}
            Arg::Value(v) => self.value(v),
            Arg::Tuple(items, _) => items.iter().for_each(|i| self.arg(i, scope)),
        }
    }

    fn value(&mut self, v: &Value) {
        match &v.data {
            ValueData::Literal(lit) => {
                if let Err(e) = check_literal(&v.ty, lit) {
                    let span = self.text.and_then(|t| element_span(t, v.span, &e.path)).unwrap_or(v.span);
                    let d = self.error(span, format!("{}{}", e.location(), e.message), &e.label);
                    self.push(d);
                }
            }
            ValueData::BlobFile { path, offset } => {
                self.value(path);
                self.value(offset);
                self.blob_path(path);
                self.blob_offset(offset);
            }
        }
    }

    fn blob_path(&mut self, path: &Value) {
        let ok =
            path.ty.dtype() == Some(ScalarType::String) && matches!(path.data, ValueData::Literal(Literal::Str(_)));
        if !ok {
            let msg = format!("BLOBFILE path must be a string, found {}", describe_value(path));
            self.push(self.error(path.span, msg, "expected `string(\"...\")`"));
        }
    }

    fn blob_offset(&mut self, offset: &Value) {
        let int_type = offset.ty.dtype().is_some_and(|t| super::check_literal::int_range(t).is_some());
        let ok = int_type && matches!(offset.data, ValueData::Literal(Literal::Int(v)) if v >= 0);
        if !ok {
            let msg = format!("BLOBFILE offset must be a non-negative integer, found {}", describe_value(offset));
            self.push(self.error(offset.span, msg, "expected `uint64(N)`"));
        }
    }
}

/// A value's type and literal kind for messages.
fn describe_value(v: &Value) -> String {
    let mut ty = String::new();
    anec_ir::mil::print::write_type(&mut ty, &v.ty);
    match &v.data {
        ValueData::Literal(l) => format!("{} of type {ty}", kind(l)),
        ValueData::BlobFile { .. } => format!("a BLOBFILE of type {ty}"),
    }
}

/// The span of the opset name inside the function header `func NAME<opset>` (the whole
/// header when the text is not known).
fn opset_span(f: &Function, text: Option<&str>) -> Span {
    let header = text.and_then(|t| t.get(f.span.range())).filter(|_| !f.span.is_none());
    match header.and_then(|h| h.rfind(f.opset.as_str())) {
        Some(at) if !f.opset.is_empty() => {
            let start = f.span.start as usize + at;
            Span::new(start, start + f.opset.len())
        }
        _ => f.span,
    }
}
