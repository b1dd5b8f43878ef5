//! Input formats: which front end reads a path, and the MIL route (read, resolve weights,
//! lower one function to the anec dialect).

use crate::Error;
use anec_ir::mil::MilModel;
use anec_ir::Module;
use std::path::Path;

/// The function compiled when none is named.
pub const DEFAULT_FUNCTION: &str = "main";

/// The kinds of model the compiler reads.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum InputKind {
    /// A `net.plist` netplist.
    Netplist,
    /// An anec-dialect module in MLIR generic syntax (`.mlir`).
    AnecIr,
    /// Textual MIL (`model.mil`), a compiled `.mlmodelc` folder or an `.mlpackage`.
    Mil,
}

impl InputKind {
    /// Chooses the front end by the path's extension.
    pub fn of(path: &Path) -> Result<InputKind, Error> {
        match path.extension().and_then(|e| e.to_str()) {
            Some("plist") => Ok(InputKind::Netplist),
            Some("mlir") => Ok(InputKind::AnecIr),
            Some("mil" | "mlmodelc" | "mlpackage") => Ok(InputKind::Mil),
            _ => Err(Error::UnsupportedInput(path.to_path_buf())),
        }
    }
}

/// Reads a MIL model (text, `.mlmodelc` or `.mlpackage`) with its weights resolved.
pub fn load_mil(path: &Path) -> Result<MilModel, Error> {
    anec_front::load_mil(path).map_err(Error::Diagnostics)
}

/// Reads any supported model and returns function `function` of it in the anec dialect:
/// a MIL function, or a netplist procedure (1.0.10 `ProcedureList`; `main` means the
/// first); an `.mlir` file holds one network.
pub fn load_function(path: &Path, function: &str) -> Result<Module, Error> {
    match InputKind::of(path)? {
        InputKind::Netplist if function == DEFAULT_FUNCTION => Ok(anec_front::parse_netplist(path)?),
        InputKind::Netplist => procedure(path, function),
        InputKind::AnecIr => {
            let text = std::fs::read_to_string(path).map_err(|e| Error::io(path, e))?;
            anec_ir::parse_module(&text).map_err(|source| Error::IrParse { file: path.display().to_string(), source })
        }
        InputKind::Mil => {
            let model = load_mil(path)?;
            anec_passes::lower::lower_mil(&model, function).map_err(Error::Diagnostics)
        }
    }
}

/// Procedure `name` of a netplist.
fn procedure(path: &Path, name: &str) -> Result<Module, Error> {
    let procedures = anec_front::parse_netplist_procedures(path)?;
    let names = procedures.iter().map(|p| p.name.clone()).collect::<Vec<_>>().join(", ");
    let found = procedures.into_iter().find(|p| p.name == name);
    found.map(|p| p.module).ok_or_else(|| Error::NoFunction {
        file: path.display().to_string(),
        function: name.to_string(),
        functions: names,
    })
}
