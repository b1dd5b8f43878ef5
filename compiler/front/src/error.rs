//! Errors of the front ends.
//!
//! Every [`FrontError`] prints as one line that names the source file, the line of the
//! offending entry when known, the entry (unit, input, output, network or procedure) and the
//! key, e.g.
//! `net.plist:45: unit 'my_layer': missing key 'KernelWidth' in Params`.

use std::fmt;

/// What part of the description an error is about.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Subject {
    /// The top-level dictionary of the file.
    TopLevel,
    /// The network dictionary (`net`).
    Network(String),
    /// A network input (`image`).
    Input(String),
    /// A network output (`probs@output`).
    Output(String),
    /// A unit (layer), by its key in `Units`.
    Unit(String),
    /// A procedure of a version 1.0.10 `ProcedureList`, by its `Name`.
    Procedure(String),
}

impl fmt::Display for Subject {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Subject::TopLevel => f.write_str("top level"),
            Subject::Network(n) => write!(f, "network '{n}'"),
            Subject::Input(n) => write!(f, "input '{n}'"),
            Subject::Output(n) => write!(f, "output '{n}'"),
            Subject::Unit(n) => write!(f, "unit '{n}'"),
            Subject::Procedure(n) => write!(f, "procedure '{n}'"),
        }
    }
}

/// Where an error was found: file, line (0 when unknown) and subject.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Site {
    /// The source path as given by the caller.
    pub file: String,
    /// 1-based line of the entry's key in the XML text, 0 when unknown (binary plists).
    pub line: u32,
    /// The entry the error is about.
    pub subject: Subject,
}

impl fmt::Display for Site {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.line > 0 {
            write!(f, "{}:{}: {}", self.file, self.line, self.subject)
        } else {
            write!(f, "{}: {}", self.file, self.subject)
        }
    }
}

/// An error of a front end. `within` fields are preformatted suffixes such as ` in Params`.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[non_exhaustive]
pub enum FrontError {
    /// The description file cannot be read.
    #[error("{file}: cannot read: {message}")]
    Io {
        /// The path as given.
        file: String,
        /// The operating system's message.
        message: String,
    },
    /// The bytes are not a property list (XML or binary).
    #[error("{file}: not a valid property list: {message}")]
    Syntax {
        /// The path as given.
        file: String,
        /// The plist reader's message.
        message: String,
    },
    /// The plist `Version` is not one this front end reads.
    #[error("{file}: unsupported netplist Version '{version}' (supported: {supported})")]
    UnsupportedVersion {
        /// The path as given.
        file: String,
        /// The version string found.
        version: String,
        /// The version the file's form is read in, e.g. `1.0.9 for the Networks/Units form`.
        supported: &'static str,
    },
    /// A required key is absent.
    #[error("{site}: missing key '{key}'{within}")]
    MissingKey {
        /// Where.
        site: Box<Site>,
        /// The key.
        key: String,
        /// Enclosing dictionary, e.g. ` in Params`.
        within: String,
    },
    /// A key holds a value of the wrong plist type.
    #[error("{site}: key '{key}'{within} must be {expected}, found {found}")]
    WrongType {
        /// Where.
        site: Box<Site>,
        /// The key.
        key: String,
        /// Enclosing dictionary.
        within: String,
        /// The expected plist type.
        expected: &'static str,
        /// The plist type found.
        found: &'static str,
    },
    /// A key holds a value of the right type that is not acceptable.
    #[error("{site}: key '{key}'{within}: {message}")]
    BadValue {
        /// Where.
        site: Box<Site>,
        /// The key.
        key: String,
        /// Enclosing dictionary.
        within: String,
        /// What is wrong.
        message: String,
    },
    /// A unit `Type` this front end does not know.
    #[error("{site}: unknown unit Type '{unit_type}' (supported: {supported})")]
    UnknownUnitType {
        /// Where.
        site: Box<Site>,
        /// The type found.
        unit_type: String,
        /// The supported types, comma separated.
        supported: &'static str,
    },
    /// A `Bottom` names neither an input nor an earlier unit.
    #[error("{site}: unknown Bottom '{bottom}' (not an input or an earlier unit)")]
    UnknownBottom {
        /// Where.
        site: Box<Site>,
        /// The name found.
        bottom: String,
    },
    /// A weight file cannot be opened or read.
    #[error("{site}: weight file '{path}' (Weights[{index}]) {message}")]
    MissingWeightFile {
        /// Where.
        site: Box<Site>,
        /// Index into the network's `Weights` array.
        index: usize,
        /// The path as written in the plist.
        path: String,
        /// What failed, e.g. `cannot be opened: No such file or directory (os error 2)`.
        message: String,
    },
    /// Weight data extends past the end of its file.
    #[error(
        "{site}: weight data past end of file '{path}': {key}{within} {offset} + {size} bytes > file length {len}"
    )]
    WeightOutOfRange {
        /// Where.
        site: Box<Site>,
        /// The offset key (`KernelOffset`, `BiasOffset`, ...).
        key: String,
        /// Enclosing dictionary.
        within: String,
        /// The path as written in the plist.
        path: String,
        /// Byte offset.
        offset: u64,
        /// Bytes needed.
        size: u64,
        /// File length in bytes.
        len: u64,
    },
    /// Shapes of a unit's operands or result do not fit together.
    #[error("{site}: {message}")]
    Shape {
        /// Where.
        site: Box<Site>,
        /// What does not fit.
        message: String,
    },
}

impl FrontError {
    /// The site of the error, when it is about one entry of the description.
    pub fn site(&self) -> Option<&Site> {
        match self {
            FrontError::MissingKey { site, .. }
            | FrontError::WrongType { site, .. }
            | FrontError::BadValue { site, .. }
            | FrontError::UnknownUnitType { site, .. }
            | FrontError::UnknownBottom { site, .. }
            | FrontError::MissingWeightFile { site, .. }
            | FrontError::WeightOutOfRange { site, .. }
            | FrontError::Shape { site, .. } => Some(site.as_ref()),
            FrontError::Io { .. } | FrontError::Syntax { .. } | FrontError::UnsupportedVersion { .. } => None,
        }
    }
}

/// Flattens a foreign message to one line.
pub(crate) fn one_line(message: impl fmt::Display) -> String {
    message.to_string().split_whitespace().collect::<Vec<_>>().join(" ")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn site_prints_line_only_when_known() {
        let mut site = Site { file: "a.plist".into(), line: 3, subject: Subject::Unit("u".into()) };
        assert_eq!(site.to_string(), "a.plist:3: unit 'u'");
        site.line = 0;
        assert_eq!(site.to_string(), "a.plist: unit 'u'");
    }

    #[test]
    fn one_line_flattens() {
        assert_eq!(one_line("a\n  b\tc"), "a b c");
    }
}
