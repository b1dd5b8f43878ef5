//! Prints a MIL [`Program`] in coremlc's text layout (in progress).

use super::Program;

/// The program as `model.mil` text.
pub fn print_program(_p: &Program) -> String {
    String::new()
}
