//! `read_file`: a page of a text file, numbered, streamed from disk.

use std::fs::File;
use std::io::{self, BufReader, Read, Seek, SeekFrom};
use std::path::Path;

use schemars::JsonSchema;
use serde::Deserialize;
use toolsmith::ToolOutput;
use toolsmith::lines::{FileKey, LineIndex, LineReader, without_newline};
use toolsmith::tool::{Media, Page, SizeHint, Tool, ToolContext, ToolError};

use crate::sandbox::{Sandbox, open_regular};
use crate::{blocking, grouped};

/// Chars a line number adds: a right-aligned number of six and a tab.
const NUMBER_WIDTH: u64 = 7;
/// Bytes sampled from the head of a file to estimate its lines and spot binary content.
const SAMPLE_BYTES: usize = 64 * 1024;
/// The largest image read_file shows: what one request to a model provider may carry.
const MAX_IMAGE_BYTES: u64 = 20 << 20;

/// Reads a text file of the workspace, with line numbers, or shows an image (PNG, JPEG, GIF,
/// WebP).
///
/// Lines are numbered from 1, as `cat -n` numbers them. A file too large for the budget is
/// refused with its size and the `offset` and `limit` that fit; pass them to read a part.
/// `offset` is 0-based: `offset=10 limit=5` returns the lines numbered 11 to 15.
#[derive(Debug, Deserialize, JsonSchema, Tool)]
#[serde(deny_unknown_fields)]
#[tool(
    state = Sandbox,
    name = "read_file",
    read_only,
    paginate,
    max_result_chars = 100_000,
    max_result_lines = 2_000,
    head_ratio = 1.0,
    size_hint = Self::estimate
)]
pub struct ReadFile {
    /// The file, relative to the workspace root.
    pub path: String,
}

impl ReadFile {
    /// The numbered text of the page asked for, estimated from the file's size and a sample
    /// of its head: nothing more is read.
    async fn estimate(&self, cx: &ToolContext) -> Result<Option<SizeHint>, ToolError> {
        let path = cx.state::<Sandbox>()?.resolve_existing(&self.path)?;
        let shown = self.path.clone();
        let page = cx.page().unwrap_or_default();
        blocking(move || {
            if let Some(mime) = image_type(&path) {
                // An image is a block, not text: its text is one line.
                return Ok(Some(SizeHint::new(format!("The {mime} image"), 120)));
            }
            let (bytes, lines) = estimate_file(&path, &shown)?;
            Ok(Some(
                SizeHint::new("File content", page_chars(bytes, lines, page))
                    .with_lines(lines)
                    .with_alternative("use grep to search it"),
            ))
        })
        .await
    }

    async fn run(self, cx: &ToolContext) -> Result<ToolOutput, ToolError> {
        let sandbox = cx.state::<Sandbox>()?;
        let path = sandbox.resolve_existing(&self.path)?;
        let page = cx.page().unwrap_or_default();
        let budget = cx.allowance();
        let shown = sandbox.display(&path);
        blocking(move || {
            if let Some(mime) = image_type(&path) {
                return read_image(&path, &shown, mime);
            }
            read_page(&path, &shown, page, budget).map(ToolOutput::text)
        })
        .await
    }
}

/// The MIME type of an image the model providers read, by the file's first bytes (not its
/// name); `None` for anything else, or a file that cannot be opened (the text path says why).
fn image_type(path: &Path) -> Option<&'static str> {
    let (mut file, _) = open_regular(path, "").ok()?;
    let mut head = [0u8; 12];
    let read = read_up_to(&mut file, &mut head).ok()?;
    match &head[..read] {
        [0x89, b'P', b'N', b'G', 0x0d, 0x0a, 0x1a, 0x0a, ..] => Some("image/png"),
        [0xff, 0xd8, 0xff, ..] => Some("image/jpeg"),
        [b'G', b'I', b'F', b'8', b'7' | b'9', b'a', ..] => Some("image/gif"),
        [b'R', b'I', b'F', b'F', _, _, _, _, b'W', b'E', b'B', b'P'] => Some("image/webp"),
        _ => None,
    }
}

/// The image at `path`, whole, as an image block after a line naming it.
fn read_image(path: &Path, shown: &str, mime: &'static str) -> Result<ToolOutput, ToolError> {
    let (file, meta) = open_regular(path, shown)?;
    if meta.len() > MAX_IMAGE_BYTES {
        return Err(ToolError::invalid_arguments(format!(
            "path: `{shown}` is an image of {} bytes; read_file shows images of at most {} \
             bytes",
            grouped(meta.len()),
            grouped(MAX_IMAGE_BYTES)
        )));
    }
    let mut bytes = Vec::with_capacity(usize::try_from(meta.len()).unwrap_or(0));
    // Bounded even if the file grows while it is read.
    file.take(MAX_IMAGE_BYTES + 1)
        .read_to_end(&mut bytes)
        .map_err(|error| ToolError::io(shown, error))?;
    if bytes.len() as u64 > MAX_IMAGE_BYTES {
        return Err(ToolError::invalid_arguments(format!(
            "path: `{shown}` grew past {} bytes while it was read",
            grouped(MAX_IMAGE_BYTES)
        )));
    }
    let text = format!(
        "[read_file: `{shown}` is an image ({mime}, {} bytes), shown below]",
        grouped(bytes.len())
    );
    Ok(ToolOutput::text(text).with_media(Media::image(bytes, mime)))
}

/// The file's size and estimated lines; refuses directories, special and binary files.
fn estimate_file(path: &Path, shown: &str) -> Result<(u64, u64), ToolError> {
    let (file, meta) = open_regular(path, shown)?;
    let mut sample = Vec::with_capacity(SAMPLE_BYTES);
    file.take(SAMPLE_BYTES as u64)
        .read_to_end(&mut sample)
        .map_err(|error| ToolError::io(shown, error))?;
    if memchr::memchr(0, &sample).is_some() {
        return Err(is_binary(shown));
    }
    let bytes = meta.len();
    let newlines = memchr::memchr_iter(b'\n', &sample).count() as u64;
    let lines = if sample.len() as u64 >= bytes {
        newlines + u64::from(sample.last().is_some_and(|&b| b != b'\n'))
    } else if newlines == 0 {
        1
    } else {
        bytes * newlines / sample.len() as u64
    };
    Ok((bytes, lines))
}

/// The estimated chars of the numbered text of `page` of a file of `bytes` bytes and `lines`
/// lines: its lines' share of the bytes, plus a line number for each.
fn page_chars(bytes: u64, lines: u64, page: Page) -> u64 {
    if lines == 0 {
        return 0;
    }
    let offset = u64::try_from(page.offset).unwrap_or(u64::MAX);
    let left = lines.saturating_sub(offset);
    let shown = page.limit.map_or(left, |limit| {
        left.min(u64::try_from(limit).unwrap_or(u64::MAX))
    });
    let line_bytes = bytes.div_ceil(lines);
    shown.saturating_mul(line_bytes.saturating_add(NUMBER_WIDTH))
}

fn is_binary(shown: &str) -> ToolError {
    ToolError::invalid_arguments(format!(
        "path: `{shown}` is a binary file (it contains NUL bytes); read_file reads text files"
    ))
}

/// Reads lines `page.offset..` (up to `page.limit`) into numbered text of at most `budget`
/// chars, streaming: the file is never loaded whole.
pub(crate) fn read_page(
    path: &Path,
    shown: &str,
    page: Page,
    budget: usize,
) -> Result<String, ToolError> {
    read_page_of(path, shown, page, budget).map_err(|error| match error {
        PageError::Tool(error) => error,
        PageError::Io(error) => ToolError::io(shown, error),
    })
}

/// A failure while paging: the tool's own, or I/O to report with the path.
enum PageError {
    Tool(ToolError),
    Io(io::Error),
}

impl From<ToolError> for PageError {
    fn from(error: ToolError) -> Self {
        PageError::Tool(error)
    }
}

impl From<io::Error> for PageError {
    fn from(error: io::Error) -> Self {
        PageError::Io(error)
    }
}

fn read_page_of(path: &Path, shown: &str, page: Page, budget: usize) -> Result<String, PageError> {
    let (mut file, meta) = open_regular(path, shown)?;
    let mut head = [0u8; 8192];
    let sampled = read_up_to(&mut file, &mut head)?;
    if memchr::memchr(0, &head[..sampled]).is_some() {
        return Err(is_binary(shown).into());
    }
    // A deep page of a file paged before starts at the nearest line start noted then, if the
    // file is unchanged (and the byte before it is still a newline); else at the top. The same
    // handle either way: one open per page.
    let key = FileKey::of(&meta);
    let index = LineIndex::shared();
    let start = index.nearest(&key, page.offset);
    let start = match start {
        Some(at) if line_starts_at(&file, at.byte)? => Some(at),
        Some(_) => {
            index.forget(&key);
            None
        }
        None => None,
    };
    file.seek(SeekFrom::Start(start.map_or(0, |at| at.byte)))?;
    let buffered = BufReader::with_capacity(64 * 1024, file);
    let mut reader = match start {
        Some(at) => LineReader::resume(buffered, at),
        None => LineReader::new(buffered),
    }
    .noting_checkpoints();

    let skipped = reader.skip(page.offset - start.map_or(0, |at| at.line))?;
    index.note(&key, reader.checkpoints());
    let skipped = skipped + start.map_or(0, |at| at.line);
    if skipped < page.offset {
        if skipped == 0 && page.offset == 0 {
            return Ok(format!("[read_file: `{shown}` is empty]"));
        }
        return Err(ToolError::invalid_arguments(format!(
            "offset: {} is past the end of `{shown}`, which has {} lines",
            page.offset,
            grouped(skipped)
        ))
        .into());
    }

    let mut out = String::new();
    let mut out_chars = 0usize;
    // Where each shown line ends in `out`, in bytes and chars: lines can be taken back.
    let mut ends: Vec<(usize, usize)> = Vec::new();
    let mut line = Vec::new();
    let mut invalid = Vec::new();
    let mut stop = Stop::EndOfFile;
    // The first line when even it does not fit: its numbered text.
    let mut oversized = None;
    loop {
        if page.limit.is_some_and(|limit| ends.len() >= limit) {
            stop = if reader.is_at_end()? {
                Stop::EndOfFile
            } else {
                Stop::Limit
            };
            break;
        }
        line.clear();
        // A line longer than the budget is read only as far as it can be shown.
        let Some(complete) = reader.read_line(&mut line, budget + 1)? else {
            break;
        };
        let number = page.offset + ends.len() + 1;
        let text = match std::str::from_utf8(without_newline(&line)) {
            Ok(text) => std::borrow::Cow::Borrowed(text),
            Err(_) => {
                invalid.push(number);
                String::from_utf8_lossy(without_newline(&line))
            }
        };
        let entry = format!("{number:>6}\t{text}\n");
        let entry_chars = entry.chars().count();
        if out_chars + entry_chars > budget || !complete {
            if ends.is_empty() {
                oversized = Some(entry);
                stop = Stop::LineCut;
            } else {
                stop = Stop::Budget;
            }
            break;
        }
        out.push_str(&entry);
        out_chars += entry_chars;
        ends.push((out.len(), out_chars));
    }

    // The closing notes must fit beside the lines: take lines back until they do.
    loop {
        let shown = ends.len().max(usize::from(oversized.is_some()));
        let notes = closing_notes(page, shown, &stop, &invalid, budget);
        let notes_chars = notes.chars().count();
        if let Some(entry) = &oversized {
            // Even one line does not fit: show its beginning.
            let keep: String = entry
                .chars()
                .take(budget.saturating_sub(notes_chars + 1))
                .collect();
            out = format!("{keep}\n{notes}");
            break;
        }
        if out_chars + notes_chars <= budget || ends.is_empty() {
            out.push_str(&notes);
            break;
        }
        let (end, chars) = ends.pop().unwrap_or((0, 0));
        if ends.is_empty() {
            // The last line standing is cut instead of dropped.
            oversized = Some(out[..end].to_owned());
            out.clear();
            out_chars = 0;
            stop = Stop::LineCut;
            continue;
        }
        let (kept_end, kept_chars) = ends.last().copied().unwrap_or((0, 0));
        debug_assert!(chars > kept_chars);
        out.truncate(kept_end);
        out_chars = kept_chars;
        stop = Stop::Budget;
    }
    Ok(out)
}

/// The notes that close a page of `shown` lines: why it stopped and where to go on, and which
/// shown lines were not valid UTF-8.
fn closing_notes(
    page: Page,
    shown: usize,
    stop: &Stop,
    invalid: &[usize],
    budget: usize,
) -> String {
    let first = page.offset + 1;
    let last = page.offset + shown;
    let next = page.offset + shown;
    let mut out = match stop {
        Stop::EndOfFile => String::new(),
        Stop::Limit => format!(
            "[read_file: lines {first}-{last} shown; the file goes on. Next page: offset={next}]\n"
        ),
        Stop::Budget => format!(
            "[read_file: lines {first}-{last} shown; line {} and after did not fit in {} chars. \
             Next page: offset={next}]\n",
            last + 1,
            grouped(budget)
        ),
        Stop::LineCut => format!(
            "[read_file: line {first} is longer than the {} chars allowed and was cut; use grep \
             to find what you need in it. Next page: offset={next}]\n",
            grouped(budget)
        ),
    };
    let invalid: Vec<String> = invalid
        .iter()
        .filter(|&&number| number <= last)
        .take(10)
        .map(ToString::to_string)
        .collect();
    if !invalid.is_empty() {
        let more = if invalid.len() >= 10 { ", …" } else { "" };
        out.push_str(&format!(
            "[read_file: line {}{more} is not valid UTF-8; invalid bytes are shown as �]\n",
            invalid.join(", ")
        ));
    }
    out
}

enum Stop {
    EndOfFile,
    Limit,
    Budget,
    LineCut,
}

/// Whether a line starts at `byte` of `file`: the file's start, or just after a newline.
fn line_starts_at(file: &File, byte: u64) -> io::Result<bool> {
    use std::os::unix::fs::FileExt as _;
    let Some(before) = byte.checked_sub(1) else {
        return Ok(true);
    };
    let mut last = [0u8; 1];
    Ok(file.read_at(&mut last, before)? == 1 && last[0] == b'\n')
}

fn read_up_to(file: &mut File, buffer: &mut [u8]) -> io::Result<usize> {
    let mut filled = 0;
    while filled < buffer.len() {
        match file.read(&mut buffer[filled..])? {
            0 => break,
            n => filled += n,
        }
    }
    Ok(filled)
}
