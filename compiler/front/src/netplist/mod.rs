//! The netplist front end: Apple's `net.plist` network description to an anec [`Module`].
//!
//! Reads the version 1.0.9 `Networks`/`Units` form (XML or binary plist): the first network
//! named in `Networks` becomes the module; its `Inputs` become module inputs, its `Units`
//! become ops in list order, and its `Outputs` become module outputs. Shapes are inferred
//! unit by unit; weights are read lazily from the files of the network's `Weights` array,
//! resolved relative to the plist's directory. The keys read, their defaults and the errors
//! are documented in `docs/netplist.md`.

mod locate;
mod ports;
mod reader;
mod units;

use crate::error::{one_line, FrontError, Site, Subject};
use anec_ir::{Location, Module, ValueId};
use locate::Locator;
use plist::{Dictionary, Value};
use reader::{kind, Dict, Result};
use std::collections::{HashMap, HashSet};
use std::io::Cursor;
use std::path::Path;
use units::weights::WeightFiles;

/// The only plist `Version` of the Networks/Units form this front end reads.
pub const SUPPORTED_VERSION: &str = "1.0.9";

/// Parses a net.plist file. Weight files resolve relative to the file's directory.
pub fn parse_netplist(path: &Path) -> std::result::Result<Module, FrontError> {
    let file = path.display().to_string();
    let bytes = std::fs::read(path).map_err(|e| FrontError::Io { file: file.clone(), message: one_line(e) })?;
    let base_dir = path.parent().unwrap_or(Path::new(""));
    parse_netplist_bytes(&bytes, &file, base_dir)
}

/// Parses net.plist bytes. `path_for_messages` names the file in errors and locations;
/// relative weight file paths resolve against `base_dir`.
pub fn parse_netplist_bytes(
    bytes: &[u8],
    path_for_messages: &str,
    base_dir: &Path,
) -> std::result::Result<Module, FrontError> {
    let file = path_for_messages;
    let value = Value::from_reader(Cursor::new(bytes))
        .map_err(|e| FrontError::Syntax { file: file.into(), message: one_line(e) })?;
    let Value::Dictionary(top) = value else {
        let message = format!("the top-level value is {}, not a dictionary", kind(&value));
        return Err(FrontError::Syntax { file: file.into(), message });
    };
    let top_site = Site { file: file.into(), line: 0, subject: Subject::TopLevel };
    let top = Dict::new(&top, &top_site);
    check_form(&top)?;
    let locator = Locator::new(bytes);
    let net_name = first_network(&top)?;
    let (net_line, _) = locator.find(net_name);
    let net_site = Site { file: file.into(), line: net_line, subject: Subject::Network(net_name.into()) };
    let net = Dict::new(top.dict(net_name)?.map(), &net_site);
    let weights = match net.opt_array("Weights")? {
        Some(items) => net.strings_of("Weights", items)?,
        None => Vec::new(),
    };
    let mut b = Builder {
        file,
        locator,
        weights: WeightFiles::new(weights, base_dir),
        module: Module::new(net_name),
        values: HashMap::new(),
        op_names: HashSet::new(),
    };
    build(&mut b, &net)?;
    Ok(b.module)
}

/// Rejects the ProcedureList form and versions other than 1.0.9.
fn check_form(top: &Dict<'_>) -> Result<()> {
    let file = top.site().file.clone();
    if top.get("ProcedureList").is_some() {
        return Err(FrontError::ProcedureList { file });
    }
    let version = top.str("Version")?;
    if version != SUPPORTED_VERSION {
        return Err(FrontError::UnsupportedVersion { file, version: version.into() });
    }
    Ok(())
}

/// The first entry of `Networks`.
fn first_network<'a>(top: &Dict<'a>) -> Result<&'a str> {
    let networks = top.strings("Networks")?;
    networks.first().copied().ok_or_else(|| top.bad("Networks", "lists no network"))
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

impl Builder<'_> {
    /// The error site and source location of an entry.
    fn place(&self, subject: Subject) -> (Site, Location) {
        let name = match &subject {
            Subject::TopLevel => "",
            Subject::Network(n) | Subject::Input(n) | Subject::Output(n) | Subject::Unit(n) => n,
        };
        let (line, col) = self.locator.find(name);
        let loc = Location { file: self.file.into(), line, col };
        (Site { file: self.file.into(), line, subject }, loc)
    }
}
