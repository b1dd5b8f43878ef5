//! The task chain in `__text`, written and read side by side: each task's stream starts
//! at a 0x100-byte boundary and is linked to the next by `Header[7].NextPointer` (the next
//! task's byte offset) and `Header[1].NextSize` (its size in words minus one); the last
//! task sets `Header[0].EON`. The first task's size is the program's `td_words` + 1.

use crate::error::BackendError;
use crate::generation::Compat;
use crate::stream::{self, ReadTask, StreamError};
use crate::td::TdImage;
use thiserror::Error;

/// Alignment of a task in `__text`. v4.2.1: 0x274-byte TDs every 0x300 bytes; the current
/// compiler: 126-word (504-byte) tasks every 0x200 and 157-word ones every 0x300.
pub const TASK_ALIGN: usize = 0x100;

/// The linked chain.
#[derive(Debug, Clone)]
pub struct Chain {
    /// `__text`.
    pub text: Vec<u8>,
    /// Size in words of the first task.
    pub first_words: u32,
    /// Each task's byte offset in `__text` and its final image.
    tasks: Vec<(usize, TdImage)>,
    compat: Compat,
}

impl Chain {
    /// The `__text` byte offset of the register word at TD offset `td_offset` of task
    /// `task`, if its stream writes that word.
    pub fn text_offset(&self, task: usize, td_offset: u16) -> Option<u32> {
        let (at, img) = self.tasks.get(task)?;
        let word = stream::stream_position(img, self.compat.data(), td_offset)?;
        u32::try_from(at + 4 * word).ok()
    }
}

/// Serializes and links the tasks.
pub fn link(mut images: Vec<TdImage>, compat: Compat) -> Result<Chain, BackendError> {
    let gen = compat.data();
    let sizes: Vec<usize> = images.iter().map(|img| stream::task_words(img, gen)).collect();
    let mut offsets = Vec::with_capacity(sizes.len());
    let mut at = 0usize;
    for s in &sizes {
        offsets.push(at);
        at = (at + 4 * s).next_multiple_of(TASK_ALIGN);
    }
    let n = images.len();
    for (i, img) in images.iter_mut().enumerate().take(n.saturating_sub(1)) {
        img.set("aneTD.Header[1].NextSize", (sizes[i + 1] - 1) as u64)?;
        img.set("aneTD.Header[7].NextPointer", offsets[i + 1] as u64)?;
    }
    let mut text = Vec::new();
    for (img, &off) in images.iter().zip(&offsets) {
        text.resize(off, 0);
        text.extend(stream::write_task(img, gen).iter().flat_map(|w| w.to_le_bytes()));
    }
    let first_words =
        u32::try_from(sizes.first().copied().unwrap_or(0)).map_err(|_| BackendError::Internal("task size".into()))?;
    Ok(Chain { text, first_words, tasks: offsets.into_iter().zip(images).collect(), compat })
}

/// A task found in `__text`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ChainTask {
    /// Byte offset in `__text`.
    pub offset: usize,
    /// Size in words.
    pub words: usize,
    /// The task read back.
    pub task: ReadTask,
}

/// A chain that cannot be followed.
#[derive(Debug, Clone, Error, PartialEq, Eq)]
pub enum ChainError {
    /// A task lies (partly) outside `__text`.
    #[error("task {index} at __text+{offset:#x} ({words} words) lies past the {len:#x}-byte __text")]
    OutsideText {
        /// Task index.
        index: usize,
        /// Byte offset.
        offset: u64,
        /// Declared size in words.
        words: u64,
        /// `__text` size.
        len: usize,
    },
    /// A task's stream is malformed.
    #[error("task {index} at __text+{offset:#x}: {source}")]
    Stream {
        /// Task index.
        index: usize,
        /// Byte offset.
        offset: usize,
        /// What is wrong.
        source: StreamError,
    },
    /// A NextPointer that does not move forward (the chain would loop).
    #[error("task {index} at __text+{offset:#x} links back to __text+{next:#x}: the chain would loop")]
    Loop {
        /// Task index.
        index: usize,
        /// Its byte offset.
        offset: usize,
        /// The NextPointer.
        next: u64,
    },
    /// More tasks than declared without an end of network.
    #[error("no task with EON among the {0} tasks the program declares")]
    NoEnd(usize),
}

/// Reads the chain from `text`: `first_words` is the first task's size, `max_tasks` the
/// task count the program declares. Every task must lie inside `__text` and each link
/// must point forward, so a malformed program cannot make the reader loop.
pub fn read(text: &[u8], first_words: u64, max_tasks: usize) -> Result<Vec<ChainTask>, ChainError> {
    let mut out = Vec::new();
    let (mut offset, mut words) = (0u64, first_words);
    loop {
        let index = out.len();
        if index >= max_tasks {
            return Err(ChainError::NoEnd(max_tasks));
        }
        let outside = ChainError::OutsideText { index, offset, words, len: text.len() };
        let end = words.checked_mul(4).and_then(|b| b.checked_add(offset)).ok_or(outside.clone())?;
        if end > text.len() as u64 {
            return Err(outside);
        }
        let (at, n) = (offset as usize, words as usize);
        let task =
            stream::read_task(&text[at..], n).map_err(|source| ChainError::Stream { index, offset: at, source })?;
        let img = &task.image;
        let eon = img.get("aneTD.Header[0].EON") == Some(1);
        let next = img.get("aneTD.Header[7].NextPointer").unwrap_or(0);
        let next_words = img.get("aneTD.Header[1].NextSize").unwrap_or(0) + 1;
        out.push(ChainTask { offset: at, words: n, task });
        if eon {
            return Ok(out);
        }
        if next <= offset {
            return Err(ChainError::Loop { index, offset: at, next });
        }
        (offset, words) = (next, next_words);
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use super::*;

    fn images(n: usize) -> Vec<TdImage> {
        (0..n)
            .map(|i| {
                let mut td = TdImage::new("t");
                td.set("aneTD.Header[0].TID", i as u64).unwrap();
                td.set("aneTD.Header[0].EON", u64::from(i + 1 == n)).unwrap();
                if i == 1 {
                    td.set("KernelDMASrc.CoeffBfrSize[0].MemBfrSize", 1).unwrap();
                }
                td
            })
            .collect()
    }

    #[test]
    fn v4_2_tasks_sit_every_0x300_bytes() {
        let c = link(images(3), Compat::V4_2).unwrap();
        assert_eq!(c.text.len(), 0x600 + 0x274);
        let tasks = read(&c.text, u64::from(c.first_words), 3).unwrap();
        assert_eq!(tasks.iter().map(|t| t.offset).collect::<Vec<_>>(), [0, 0x300, 0x600]);
    }

    #[test]
    fn current_tasks_link_by_their_sizes() {
        let c = link(images(3), Compat::Current).unwrap();
        assert_eq!(c.first_words, 126);
        let tasks = read(&c.text, u64::from(c.first_words), 3).unwrap();
        assert_eq!(
            tasks.iter().map(|t| (t.offset, t.words)).collect::<Vec<_>>(),
            [(0, 126), (0x200, 157), (0x500, 126)]
        );
        assert_eq!(tasks[0].task.image.get("aneTD.Header[1].NextSize"), Some(156));
    }

    #[test]
    fn a_looping_or_overlong_chain_is_an_error() {
        let mut imgs = images(2);
        imgs[1].set("aneTD.Header[0].EON", 0).unwrap();
        let c = link(imgs, Compat::Current).unwrap();
        assert!(matches!(read(&c.text, u64::from(c.first_words), 2), Err(ChainError::Loop { .. })));
        assert!(matches!(read(&c.text, 100_000, 2), Err(ChainError::OutsideText { .. })));
        assert!(matches!(read(&c.text, u64::MAX, 2), Err(ChainError::OutsideText { .. })));
    }
}
