//! The netplist front end: Apple's `net.plist` network description to anec [`Module`]s.
//!
//! Reads two forms (XML or binary plist). The version 1.0.9 `Networks`/`Units` form: the
//! first network named in `Networks` becomes the module; its `Inputs` become module inputs,
//! its `Units` become ops in list order, and its `Outputs` become module outputs. The
//! version 1.0.10 `ProcedureList` form (`procedures.rs`): each procedure becomes a module
//! over the networks its `OperationList` runs. Shapes are inferred unit by unit; weights
//! are read lazily from the files of each network's `Weights` array, resolved relative to
//! the plist's directory. The keys read, their defaults and the errors are documented in
//! `docs/netplist.md`.

mod locate;
mod ports;
mod procedures;
mod reader;
mod units;

use crate::error::{one_line, FrontError, Site, Subject};
use anec_ir::{Location, Module, TensorType, ValueId};
use locate::Locator;
use plist::{Dictionary, Value};
pub use procedures::{parse_netplist_procedures, parse_netplist_procedures_bytes, Procedure};
use reader::{kind, Dict, Result};
use std::collections::{HashMap, HashSet};
use std::io::Cursor;
use std::path::Path;
use units::weights::WeightFiles;

/// The plist `Version` of the Networks/Units form.
pub const SUPPORTED_VERSION: &str = "1.0.9";

/// The plist `Version` of the ProcedureList form.
pub const PROCEDURE_LIST_VERSION: &str = "1.0.10";

/// Parses a net.plist file into one module: the first network of the Networks/Units form,
/// or the first procedure of the ProcedureList form (every procedure is read and checked).
/// Weight files resolve relative to the file's directory.
pub fn parse_netplist(path: &Path) -> std::result::Result<Module, FrontError> {
    first_module(parse_netplist_procedures(path)?, &path.display().to_string())
}

/// Parses net.plist bytes into one module, as [`parse_netplist`]. `path_for_messages` names
/// the file in errors and locations; relative weight file paths resolve against `base_dir`.
pub fn parse_netplist_bytes(
    bytes: &[u8],
    path_for_messages: &str,
    base_dir: &Path,
) -> std::result::Result<Module, FrontError> {
    first_module(parse_netplist_procedures_bytes(bytes, path_for_messages, base_dir)?, path_for_messages)
}

/// The module of the first procedure (the readers never return an empty list).
fn first_module(procedures: Vec<Procedure>, file: &str) -> Result<Module> {
    let site = Site { file: file.into(), line: 0, subject: Subject::TopLevel };
    let missing = || FrontError::BadValue {
        site: Box::new(site.clone()),
        key: "ProcedureList".into(),
        within: String::new(),
        message: "lists no procedure".into(),
    };
    procedures.into_iter().next().map(|p| p.module).ok_or_else(missing)
}

/// Reads a netplist file's bytes.
fn read_file(path: &Path) -> Result<Vec<u8>> {
    std::fs::read(path).map_err(|e| FrontError::Io { file: path.display().to_string(), message: one_line(e) })
}

/// The top-level dictionary of plist bytes.
fn top_level(bytes: &[u8], file: &str) -> Result<Dictionary> {
    let value = Value::from_reader(Cursor::new(bytes))
        .map_err(|e| FrontError::Syntax { file: file.into(), message: one_line(e) })?;
    match value {
        Value::Dictionary(top) => Ok(top),
        other => {
            let message = format!("the top-level value is {}, not a dictionary", kind(&other));
            Err(FrontError::Syntax { file: file.into(), message })
        }
    }
}

/// Checks the top-level `Version` against the one version of the file's form.
fn check_version(top: &Dict<'_>, want: &str, supported: &'static str) -> Result<()> {
    let version = top.str("Version")?;
    if version != want {
        let file = top.site().file.clone();
        return Err(FrontError::UnsupportedVersion { file, version: version.into(), supported });
    }
    Ok(())
}

/// Reads the version 1.0.9 Networks/Units form: the module of the first network.
fn read_networks_form(top: &Dict<'_>, locator: Locator<'_>, base_dir: &Path) -> Result<Module> {
    check_version(top, SUPPORTED_VERSION, "1.0.9 for the Networks/Units form, 1.0.10 with a ProcedureList")?;
    let file = top.site().file.as_str();
    let net_name = first_network(top)?;
    let net_site = network_site(file, locator, net_name);
    let net = Dict::new(top.dict(net_name)?.map(), &net_site);
    let mut b = Builder::new(file, locator, net_name);
    b.weights = weight_files(&net, base_dir)?;
    build(&mut b, &net)?;
    Ok(b.module)
}

/// The first entry of `Networks`.
fn first_network<'a>(top: &Dict<'a>) -> Result<&'a str> {
    let networks = top.strings("Networks")?;
    networks.first().copied().ok_or_else(|| top.bad("Networks", "lists no network"))
}

/// The error site of the network dictionary `name`.
fn network_site(file: &str, locator: Locator<'_>, name: &str) -> Site {
    let (line, _) = locator.find(name);
    Site { file: file.into(), line, subject: Subject::Network(name.into()) }
}

/// The weight files of a network's `Weights` array (none when absent).
fn weight_files(net: &Dict<'_>, base_dir: &Path) -> Result<WeightFiles> {
    let weights = match net.opt_array("Weights")? {
        Some(items) => net.strings_of("Weights", items)?,
        None => Vec::new(),
    };
    Ok(WeightFiles::new(weights, base_dir))
}

/// Adds inputs, units and outputs of the network to the module.
fn build(b: &mut Builder<'_>, net: &Dict<'_>) -> Result<()> {
    let inputs = net.strings("Inputs")?;
    let outputs = net.strings("Outputs")?;
    let unit_keys = net.strings("Units")?;
    if inputs.is_empty() {
        return Err(net.bad("Inputs", "lists no input"));
    }
    if outputs.is_empty() {
        return Err(net.bad("Outputs", "lists no output"));
    }
    for name in inputs {
        ports::add_input(b, net, name)?;
    }
    for key in unit_keys {
        units::add_unit(b, net, key)?;
    }
    for name in outputs {
        ports::add_output(b, net, name)?;
    }
    Ok(())
}

/// The entry dictionary `key` of the network, which `list` (`Units`, `Inputs`, `Outputs`)
/// names.
fn entry<'a>(net: &Dict<'a>, key: &str, list: &str) -> Result<&'a Dictionary> {
    match net.get(key) {
        Some(Value::Dictionary(map)) => Ok(map),
        Some(other) => Err(FrontError::WrongType {
            site: Box::new(net.site().clone()),
            key: key.into(),
            within: format!(" (listed in {list})"),
            expected: "a dictionary",
            found: kind(other),
        }),
        None => Err(FrontError::MissingKey {
            site: Box::new(net.site().clone()),
            key: key.into(),
            within: format!(" (listed in {list})"),
        }),
    }
}

/// The module under construction and what the units need to see of it.
pub(crate) struct Builder<'a> {
    /// The path for messages.
    file: &'a str,
    /// Line lookup in the XML text.
    locator: Locator<'a>,
    /// The network's weight files.
    weights: WeightFiles,
    /// The module being built.
    module: Module,
    /// Values by input name and unit key.
    values: HashMap<String, ValueId>,
    /// Op names used so far.
    op_names: HashSet<String>,
}

impl<'a> Builder<'a> {
    /// An empty module named `name`, with no weight files yet.
    fn new(file: &'a str, locator: Locator<'a>, name: &str) -> Self {
        Builder {
            file,
            locator,
            weights: WeightFiles::new(Vec::new(), Path::new("")),
            module: Module::new(name),
            values: HashMap::new(),
            op_names: HashSet::new(),
        }
    }

    /// The value named `name` (an input or a unit's key) and its type.
    fn value(&self, name: &str) -> Option<(ValueId, TensorType)> {
        let id = *self.values.get(name)?;
        Some((id, *self.module.ty(id)?))
    }

    /// The error site and source location of an entry.
    fn place(&self, subject: Subject) -> (Site, Location) {
        let name = match &subject {
            Subject::TopLevel => "",
            Subject::Network(n) | Subject::Input(n) | Subject::Output(n) | Subject::Unit(n) | Subject::Procedure(n) => {
                n
            }
        };
        let (line, col) = self.locator.find(name);
        let loc = Location { file: self.file.into(), line, col };
        (Site { file: self.file.into(), line, subject }, loc)
    }
}
