//! The version 1.0.10 `ProcedureList` form (written by ANEForge): one module per procedure.
//!
//! A procedure (`ProcedureList` item) names its inputs (`InputList`: `InputName` and the
//! shape, type and layout keys of a 1.0.9 input entry), the networks it runs in order
//! (`OperationList`: `NetworkName`) and its outputs (`OutputList`: `OutputName`, the unit
//! `Name` producing it, and the layout and type keys of a 1.0.9 output entry). Its module,
//! named after the procedure, holds those inputs, the units of every network in list order
//! (a unit may read an input or any earlier unit, also one of an earlier network) and those
//! outputs. The networks are dictionaries of the 1.0.9 form without `Inputs`/`Outputs`.
//! A file of the Networks/Units form reads as one procedure named after its first network.

use super::locate::Locator;
use super::reader::{Dict, Result};
use super::{check_version, network_site, ports, read_file, read_networks_form, top_level, units, weight_files};
use super::{Builder, PROCEDURE_LIST_VERSION};
use crate::error::{Site, Subject};
use anec_ir::{Location, Module};
use plist::{Dictionary, Value};
use std::collections::HashSet;
use std::ops::Range;
use std::path::Path;

/// One procedure of a netplist: a callable entry point and the module it runs.
#[derive(Debug, Clone, PartialEq)]
pub struct Procedure {
    /// The procedure's `Name` (the first network's name for the Networks/Units form).
    pub name: String,
    /// The procedure's inputs, the units of the networks it runs and its outputs; named
    /// after the procedure.
    pub module: Module,
}

/// Parses a net.plist file of either form into its procedures, in file order. Weight files
/// resolve relative to the file's directory.
pub fn parse_netplist_procedures(path: &Path) -> Result<Vec<Procedure>> {
    let bytes = read_file(path)?;
    let base_dir = path.parent().unwrap_or(Path::new(""));
    parse_netplist_procedures_bytes(&bytes, &path.display().to_string(), base_dir)
}

/// Parses net.plist bytes of either form into its procedures, in file order.
/// `path_for_messages` names the file in errors and locations; relative weight file paths
/// resolve against `base_dir`.
pub fn parse_netplist_procedures_bytes(
    bytes: &[u8],
    path_for_messages: &str,
    base_dir: &Path,
) -> Result<Vec<Procedure>> {
    let map = top_level(bytes, path_for_messages)?;
    let site = Site { file: path_for_messages.into(), line: 0, subject: Subject::TopLevel };
    let top = Dict::new(&map, &site);
    let locator = Locator::new(bytes);
    if top.get("ProcedureList").is_none() {
        let module = read_networks_form(&top, locator, base_dir)?;
        return Ok(vec![Procedure { name: module.name.clone(), module }]);
    }
    check_version(&top, PROCEDURE_LIST_VERSION, "1.0.10 for the ProcedureList form")?;
    let networks = top.strings("Networks")?;
    let cx = Cx { top, locator, base_dir, networks, ranges: locator.array_dicts("ProcedureList") };
    read_list(&cx)
}

/// What every procedure reads: the top level, its text and the networks it may run.
struct Cx<'a> {
    /// The top-level dictionary.
    top: Dict<'a>,
    /// Line lookup in the XML text.
    locator: Locator<'a>,
    /// The directory relative weight paths resolve against.
    base_dir: &'a Path,
    /// The top-level `Networks` list.
    networks: Vec<&'a str>,
    /// The byte ranges of the procedures in the XML text (none for binary plists).
    ranges: Vec<Range<usize>>,
}

/// Reads every procedure of `ProcedureList`; their names must differ.
fn read_list(cx: &Cx<'_>) -> Result<Vec<Procedure>> {
    let items = cx.top.array("ProcedureList")?;
    if items.is_empty() {
        return Err(cx.top.bad("ProcedureList", "lists no procedure"));
    }
    let mut names = HashSet::new();
    items.iter().enumerate().map(|(i, item)| read_procedure(cx, i, item, &mut names)).collect()
}

/// Reads the procedure `ProcedureList[index]` into its module.
fn read_procedure(cx: &Cx<'_>, index: usize, item: &Value, names: &mut HashSet<String>) -> Result<Procedure> {
    let key = format!("ProcedureList[{index}]");
    let Value::Dictionary(map) = item else { return Err(cx.top.wrong(&key, "a dictionary", item)) };
    let range = cx.ranges.get(index);
    let name = procedure_name(cx, &key, range, map)?;
    let line = match cx.locator.find_value(range, "Name", &name) {
        (0, _) => cx.locator.start_of(range).0,
        (line, _) => line,
    };
    let site = Site { file: cx.top.site().file.clone(), line, subject: Subject::Procedure(name.clone()) };
    let proc = Dict::new(map, &site);
    if !names.insert(name.clone()) {
        return Err(proc.bad("Name", format!("'{name}' is also the name of an earlier procedure")));
    }
    let mut b = Builder::new(&site.file, cx.locator, &name);
    let lists = Lists { proc: &proc, locator: cx.locator, range };
    add_inputs(&mut b, &lists)?;
    run_operations(&mut b, cx, &lists)?;
    add_outputs(&mut b, &lists)?;
    Ok(Procedure { name, module: b.module })
}

/// The `Name` of a procedure; a missing one is reported at the procedure's first line.
fn procedure_name(cx: &Cx<'_>, key: &str, range: Option<&Range<usize>>, map: &Dictionary) -> Result<String> {
    let (line, _) = cx.locator.start_of(range);
    let site = Site { line, ..cx.top.site().clone() };
    Dict::new(cx.top.map(), &site).child(map, key).str("Name").map(String::from)
}

/// A procedure's dictionary and where it is in the XML text, to read its lists from.
struct Lists<'p, 'a> {
    /// The procedure's dictionary.
    proc: &'p Dict<'a>,
    /// Line lookup in the XML text.
    locator: Locator<'a>,
    /// The procedure's byte range, when known.
    range: Option<&'p Range<usize>>,
}

impl<'a> Lists<'_, 'a> {
    /// The items of the list `key` (at least one), as dictionaries with their path `KEY[i]`.
    fn items(&self, key: &str, what: &str) -> Result<Vec<(String, &'a Dictionary)>> {
        let items = self.proc.array(key)?;
        if items.is_empty() {
            return Err(self.proc.bad(key, format!("lists no {what}")));
        }
        let item = |(i, v): (usize, &'a Value)| {
            let path = format!("{key}[{i}]");
            match v {
                Value::Dictionary(map) => Ok((path, map)),
                other => Err(self.proc.wrong(&path, "a dictionary", other)),
            }
        };
        items.iter().enumerate().map(item).collect()
    }

    /// The string `key` of an item (its identifying name), read before the item is placed.
    fn name_of(&self, path: &str, map: &'a Dictionary, key: &str) -> Result<&'a str> {
        self.proc.child(map, path).str(key)
    }

    /// The site and location of an item, at the `<key>KEY</key><string>NAME</string>` pair
    /// that identifies it (the procedure's line when the text does not show it).
    fn place(&self, key: &str, name: &str) -> (Site, Location) {
        let site = self.proc.site();
        let (line, col) = match self.locator.find_value(self.range, key, name) {
            (0, _) => (site.line, 0),
            found => found,
        };
        (Site { line, ..site.clone() }, Location { file: site.file.clone(), line, col })
    }
}

/// Adds the procedure's `InputList` as module inputs, in list order.
fn add_inputs(b: &mut Builder<'_>, lists: &Lists<'_, '_>) -> Result<()> {
    for (path, map) in lists.items("InputList", "input")? {
        let name = lists.name_of(&path, map, "InputName")?;
        let (site, loc) = lists.place("InputName", name);
        let d = Dict::new(lists.proc.map(), &site).child(map, &path);
        let (ty, layout) = ports::input_type(&d)?;
        if b.values.contains_key(name) {
            return Err(d.bad("InputName", format!("'{name}' is listed twice")));
        }
        ports::push_input(b, name, ty, layout, loc);
    }
    Ok(())
}

/// Adds the units of every network the procedure's `OperationList` runs, in list order.
fn run_operations(b: &mut Builder<'_>, cx: &Cx<'_>, lists: &Lists<'_, '_>) -> Result<()> {
    for (path, map) in lists.items("OperationList", "operation")? {
        let name = lists.name_of(&path, map, "NetworkName")?;
        let (site, _) = lists.place("NetworkName", name);
        let entry = Dict::new(lists.proc.map(), &site).child(map, &path);
        run_network(b, cx, &entry, name)?;
    }
    Ok(())
}

/// Adds the units of the network `name`, which the `OperationList` item `entry` runs.
fn run_network(b: &mut Builder<'_>, cx: &Cx<'_>, entry: &Dict<'_>, name: &str) -> Result<()> {
    let net_map = match cx.top.get(name) {
        _ if !cx.networks.contains(&name) => {
            let listed = cx.networks.join(", ");
            return Err(entry.bad("NetworkName", format!("'{name}' is not a network (Networks lists: {listed})")));
        }
        Some(Value::Dictionary(map)) => map,
        _ => return Err(entry.bad("NetworkName", format!("network '{name}' has no dictionary at the top level"))),
    };
    let site = network_site(&cx.top.site().file, cx.locator, name);
    let net = Dict::new(net_map, &site);
    b.weights = weight_files(&net, cx.base_dir)?;
    for key in net.strings("Units")? {
        units::add_unit(b, &net, key)?;
    }
    Ok(())
}

/// Adds the procedure's `OutputList` as module outputs, in list order.
fn add_outputs(b: &mut Builder<'_>, lists: &Lists<'_, '_>) -> Result<()> {
    for (path, map) in lists.items("OutputList", "output")? {
        let name = lists.name_of(&path, map, "OutputName")?;
        let (site, loc) = lists.place("OutputName", name);
        let d = Dict::new(lists.proc.map(), &site).child(map, &path);
        let unit = d.str("Name")?;
        let no_unit = || d.bad("Name", format!("no unit of the procedure's networks is named '{unit}'"));
        let source = b.value(unit).ok_or_else(no_unit)?;
        ports::push_output(b, &d, name, (unit, source), loc)?;
    }
    Ok(())
}
