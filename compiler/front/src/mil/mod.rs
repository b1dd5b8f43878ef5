//! Textual MIL (`model.mil`): lexer, parser and checker.
//!
//! [`parse_program`] reads the text coremlc writes into a compiled `.mlmodelc` (and the
//! variants hand-written generators produce) into an [`anec_ir::mil::Program`], then runs
//! the checker ([`check_program`]). Every node carries its byte span; errors are
//! [`anec_ir::Diagnostic`]s naming the file, with the text attached for rendering.
//!
//! Files: `lexer.rs` (bytes to tokens), `parser.rs` (token helpers, bracket tracking,
//! nesting limit), `parse_program.rs` (program, functions, statements), `parse_types.rs`,
//! `parse_values.rs` (arguments, values, literals), `numbers.rs` (exact hex floats,
//! string escapes), `check.rs` and `check_literal.rs` (the checker), `locate.rs` (the
//! text of one element of a literal, for error spans).

mod check;
mod check_literal;
mod lexer;
mod locate;
mod numbers;
mod parse_program;
mod parse_types;
mod parse_values;
mod parser;

pub use check::{check_program, OPSETS};
pub use parser::MAX_DEPTH;

use anec_ir::mil::{Program, Span};
use anec_ir::Diagnostic;
use parser::{Parser, SyntaxError};
use std::sync::Arc;

/// Parses and checks `text`, read from `file` (named in the diagnostics). Returns the
/// first syntax error, or every checker error.
pub fn parse_program(text: &str, file: &str) -> Result<Program, Vec<Diagnostic>> {
    let program = parse_syntax(text, file).map_err(|d| vec![d])?;
    let errors = check::check_source(&program, file, Some(text));
    if errors.is_empty() {
        return Ok(program);
    }
    let shared: Arc<str> = Arc::from(text);
    Err(errors.into_iter().map(|d| Diagnostic { text: Some(shared.clone()), ..d }).collect())
}

/// Parses `text` without running the checker: the tree or the first syntax error.
pub fn parse_syntax(text: &str, file: &str) -> Result<Program, Diagnostic> {
    if u32::try_from(text.len()).is_err() {
        return Err(Diagnostic::new(file, None, Span::NONE, "file is larger than 4 GiB"));
    }
    let mut p = Parser::new(text, lexer::lex(text));
    p.parse_program().map_err(|e| to_diagnostic(*e, text, file))
}

fn to_diagnostic(e: SyntaxError, text: &str, file: &str) -> Diagnostic {
    let d = Diagnostic::new(file, Some(Arc::from(text)), e.span, e.message).with_label(e.label);
    match e.note {
        Some(n) => d.with_note(n),
        None => d,
    }
}
