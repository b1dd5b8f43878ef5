//! Decoding of the 0x28-byte TD header: the chain link, the BARs of the sources, the
//! destination and the kernel memory, where the sources and the result live (SrcLoc,
//! DstLoc), the dependency tokens (SPC, DPC: a memory surface a task stands for reading
//! or writing while the data passes through L2) and the engine enable. The fields that
//! only order or log the work (IDs, events, the synchronization flags SPL/TSR/TSE) are
//! accepted with any value; the others of unknown effect must hold the one value every
//! program holds.

use super::error::SimError;
use super::reader::Reader;

/// Where the chain goes after a TD.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Link {
    /// EON: the last TD of the network.
    pub end: bool,
    /// NextPointer: byte offset of the next TD in `__text`.
    pub next: u64,
}

/// Header fields with no effect on values (IDs, event logging, the synchronization flags
/// SPL, TSR and TSE, which vary with the position in a chain of the current compiler: SPL
/// on the first task, TSR and TSE on the last; DisallowAbort, set on planar-engine tasks
/// whose result another planar-engine task reads).
const HEADER_IGNORED: [&str; 12] = [
    "aneTD.Header[0].TID",
    "aneTD.Header[0].NID",
    "aneTD.Header[0].LNID",
    "aneTD.Header[1].ExeCycles",
    "aneTD.Header[2].LogEvents",
    "aneTD.Header[3].Exceptions",
    "aneTD.Header[4].DebugLogEvents",
    "aneTD.Header[5].DebugExceptions",
    "aneTD.Header[6].SPL",
    "aneTD.Header[6].TSR",
    "aneTD.Header[6].TSE",
    // Mirrors NE.KernelCfg bit 12 of planar-engine tasks (`header-common-l2.md` §1).
    "aneTD.Header[6].DisallowAbort",
];

/// Header fields of unknown effect, with the one value every Apple program holds.
const HEADER_FIXED: [(&str, u64); 9] = [
    ("aneTD.Header[6].TDSkip", 0),
    ("aneTD.Header[6].KPC", 0),
    ("aneTD.Header[6].NextPriority", 0),
    ("aneTD.Header[6].TQDis", 0),
    ("aneTD.Header[8].TBase", 0),
    ("aneTD.Header[9].KBase1", 0),
    ("aneTD.Header[9].KBE1", 0),
    ("aneTD.Header[9].KBase2", 0),
    ("aneTD.Header[9].KBE2", 0),
];

/// The TD header as the simulator uses it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Header {
    /// Chain link.
    pub link: Link,
    /// NextSize.
    pub next_size: u64,
    /// RBase0 (when RBE0: none for a task reading its source from L2) and, when RBE1,
    /// RBase1.
    pub sources: [Option<u8>; 2],
    /// SrcLoc: the first source is read from DRAM (checked against the tile-DMA source's
    /// enable).
    pub src_dram: bool,
    /// SPC: the task stands for reading a memory surface (RBase0) its source does not come
    /// from (it is read in place from L2): a dependency token, no data.
    pub spc: bool,
    /// DPC: the task stands for writing a memory surface (WBase) its result does not go
    /// to (it is kept in L2): a dependency token, no data.
    pub dpc: bool,
    /// WBase when WBE (none for a task that keeps its result in L2).
    pub dest: Option<u8>,
    /// DstLoc: the result is written to DRAM (checked against the destination tile DMA's
    /// enable).
    pub dst_dram: bool,
    /// ENE.
    pub ene: u64,
    /// KBase0 when KBE0.
    pub kbar: Option<u8>,
    /// TDE: the kernel was written by an earlier task of the program, the eleventh header
    /// word (its TID; checked to be an earlier task, and the kernel a runtime one).
    pub kernel_producer: Option<u32>,
}

fn bar(r: &mut Reader, base: &str, enable: &str, allowed: &[u64]) -> Result<Option<u8>, SimError> {
    let on = r.fixed(enable, allowed)? == 1;
    let b = r.get(base)?;
    match (on, b) {
        (true, _) => Ok(u8::try_from(b).ok()),
        (false, 0) => Ok(None),
        (false, _) => Err(r.err(base, b, format!("a BAR index with {enable} = 0 is not modelled"))),
    }
}

/// Decodes the 0x28-byte header.
pub fn header(r: &mut Reader) -> Result<Header, SimError> {
    for name in HEADER_IGNORED {
        r.ignore(name)?;
    }
    for (name, v) in HEADER_FIXED {
        r.fixed(name, &[v])?;
    }
    // TBE names __text (TBase 0) as the base of NextPointer on every task but the last
    // (the current compiler); v4.2.1 leaves it clear.
    r.fixed("aneTD.Header[8].TBE", &[0, 1])?;
    r.fixed("aneTD.Header[9].KBase3", &[0])?;
    r.fixed("aneTD.Header[9].KBE3", &[0])?;
    let link = Link { end: r.get("aneTD.Header[0].EON")? == 1, next: r.get("aneTD.Header[7].NextPointer")? };
    let next_size = r.get("aneTD.Header[1].NextSize")?;
    let src0 = bar(r, "aneTD.Header[8].RBase0", "aneTD.Header[8].RBE0", &[0, 1])?;
    let src_dram = r.get("aneTD.Header[6].SrcLoc")? == 1;
    let src1 = bar(r, "aneTD.Header[8].RBase1", "aneTD.Header[8].RBE1", &[0, 1])?;
    let dest = bar(r, "aneTD.Header[8].WBase", "aneTD.Header[8].WBE", &[0, 1])?;
    let dst_dram = r.get("aneTD.Header[6].DstLoc")? == 1;
    let spc = r.get("aneTD.Header[6].SPC")? == 1;
    let dpc = r.get("aneTD.Header[6].DPC")? == 1;
    // ENE: 0 for a planar-engine task, ActiveNE + 1 for an NE task (checked against
    // Common.Cfg.ActiveNE when the Common block is read).
    let ene = r.fixed("aneTD.Header[8].ENE", &[0, 1, 2, 3, 4, 5])?;
    let kbar = bar(r, "aneTD.Header[9].KBase0", "aneTD.Header[9].KBE0", &[0, 1])?;
    let kernel_producer = match (r.fixed("aneTD.Header[6].TDE", &[0, 1])?, r.extra_header()) {
        (0, _) => None,
        (_, Some(tid)) if (tid as usize) < r.td() && kbar.is_some() => Some(tid),
        (_, word) => {
            let reason = format!(
                "TDE names the earlier task that wrote the kernel (eleventh header word {word:?}, KBE0 set);                  this is task {}",
                r.td()
            );
            return Err(r.err("aneTD.Header[6].TDE", 1, reason));
        }
    };
    Ok(Header {
        link,
        next_size,
        sources: [src0, src1],
        src_dram,
        spc,
        dest,
        dst_dram,
        dpc,
        ene,
        kbar,
        kernel_producer,
    })
}
