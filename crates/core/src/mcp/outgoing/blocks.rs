//! A result's content laid out within the cap: media over their limits left out, blocks past
//! the most a result carries kept as one artifact, other blocks up to half the cap, notes, and
//! texts sharing what is left max-min fairly. The one owner of the content's cap.

use serde_json::{Value, json};

use super::media::media_of;
use super::store::{store, store_and_give_back, store_media};
use super::structure::kept_as;
use super::{CutFacts, Fitting, MAX_BLOCKS, artifact_link, full_output};
use crate::figures::grouped;
use crate::tool::left_out_note;
use crate::trim::{self, Continuation, FullOutput, TrimStyle};

/// A block as the fitter sees it.
pub(super) enum Kind {
    /// A text block (`text`), or an embedded resource's text (`resource.text`).
    Text,
    /// An image, an audio clip, or an embedded resource's blob.
    Media,
    /// Anything else: passed as it is, counted by its JSON.
    Other,
}

pub(super) fn kind_of(block: &Value) -> Kind {
    match block.get("type").and_then(Value::as_str) {
        Some("text") if block.get("text").is_some_and(Value::is_string) => Kind::Text,
        Some("image" | "audio") if block.get("data").is_some_and(Value::is_string) => Kind::Media,
        Some("resource") => match block.get("resource") {
            Some(resource) if resource.get("text").is_some_and(Value::is_string) => Kind::Text,
            Some(resource) if resource.get("blob").is_some_and(Value::is_string) => Kind::Media,
            _ => Kind::Other,
        },
        _ => Kind::Other,
    }
}

/// The text of a text block or of an embedded resource.
fn text_slot(block: &mut Value) -> Option<&mut Value> {
    if block.get("type").and_then(Value::as_str) == Some("resource") {
        block.get_mut("resource")?.get_mut("text")
    } else {
        block.get_mut("text")
    }
}

pub(super) fn text_block(text: String) -> Value {
    json!({ "type": "text", "text": text })
}

/// The chars a reader sees of a content block: a text's (or an embedded resource's text),
/// none of an image's or audio clip's (media are not text), the JSON of any other block.
pub(crate) fn visible_chars(block: &Value) -> usize {
    visible_size(block, |text| text.chars().count())
}

/// What a reader sees of a block, sized by `size`: its text (or its embedded resource's), none
/// of an image or audio clip, the JSON of anything else. One rule for chars and for tokens.
pub(super) fn visible_size(block: &Value, size: impl Fn(&str) -> usize) -> usize {
    match kind_of(block) {
        Kind::Text => block
            .get("text")
            .or_else(|| {
                block
                    .get("resource")
                    .and_then(|resource| resource.get("text"))
            })
            .and_then(Value::as_str)
            .map_or(0, size),
        Kind::Media => 0,
        Kind::Other => size(&block.to_string()),
    }
}

/// A block on its way through the fitter: the upstream's, or a note the fitter wrote.
pub(super) struct Item {
    block: Value,
    note: bool,
}

impl Item {
    fn block(block: Value) -> Self {
        Item { block, note: false }
    }

    fn note(text: String) -> Self {
        Item {
            block: text_block(text),
            note: true,
        }
    }
}

/// A result's content on its way to [`fit`].
pub(super) struct Blocks {
    /// The blocks kept as blocks.
    pub(super) blocks: Vec<Value>,
    /// Indices of `blocks` fitted already (a structure's texts written again from its cut):
    /// laid out as they are, as notes are.
    pub(super) fitted: Vec<usize>,
    /// The blocks past [`MAX_BLOCKS`], as the JSON they were: how many, one a line.
    pub(super) beyond: (usize, String),
    /// The last blocks, after those past the limit.
    pub(super) tail: Vec<Value>,
    /// Notes that follow the content (what the reader was reading comes first).
    pub(super) notes: Vec<String>,
}

impl Blocks {
    /// Blocks and nothing else.
    pub(super) fn only(blocks: Vec<Value>) -> Self {
        Blocks {
            blocks,
            fitted: Vec::new(),
            beyond: (0, String::new()),
            tail: Vec::new(),
            notes: Vec::new(),
        }
    }
}

/// Lays out a result's content within the cap, in order, by the rule of the module: the owner
/// of the cap, which counts every char a reader sees ([`visible_chars`]). In steps: media over
/// their limits left out, the blocks past the most a result carries noted, other blocks up to
/// half the cap, the notes cut to what is left when they are over it, and the texts sharing
/// the rest, each cut text followed by its link where the link costs little.
pub(super) async fn fit(
    content: Blocks,
    fitting: &Fitting,
    style: &TrimStyle,
    report: &mut CutFacts,
) -> Vec<Value> {
    let Blocks {
        blocks,
        fitted,
        beyond,
        tail,
        notes,
    } = content;
    // Where the blocks past the limit were: after the first, before the last.
    let head = blocks.len();
    let mut items = leave_out_media(blocks.into_iter().chain(tail), &fitted, fitting, report).await;
    if beyond.0 > 0 {
        let note = keep_beyond(beyond, fitting, report).await;
        items.insert(head, Item::note(note));
    }
    items.extend(notes.into_iter().map(Item::note));
    let (mut kept, fixed_chars) = pass_others(items, fitting, report).await;
    let fixed_chars = cut_notes(&mut kept, fixed_chars, fitting.cap);
    let room = fitting.cap.saturating_sub(fixed_chars);
    report.sent_chars += fixed_chars as u64;
    let cuts_before = report.cuts.len();
    let links = share_texts(&mut kept, room, fitting, style, report).await;
    follow_with_links(kept, links, &mut report.cuts[cuts_before..])
}

/// The blocks as items, media over the limits (each block's, the result's count) stored and
/// a note in each one's place; the blocks `fitted` already laid out as notes are.
async fn leave_out_media(
    blocks: impl Iterator<Item = Value>,
    fitted: &[usize],
    fitting: &Fitting,
    report: &mut CutFacts,
) -> Vec<Item> {
    let mut items = Vec::new();
    let mut media_kept = 0usize;
    for (i, block) in blocks.enumerate() {
        if fitted.contains(&i) {
            report.received_chars += visible_chars(&block) as u64;
            items.push(Item { block, note: true });
            continue;
        }
        let Some((kind, mime, data)) =
            media_of(&block).filter(|_| matches!(kind_of(&block), Kind::Media))
        else {
            items.push(Item::block(block));
            continue;
        };
        let Some(why) = fitting
            .media
            .leave_out(data.len(), false, media_kept, media_kept)
        else {
            media_kept += 1;
            items.push(Item::block(block));
            continue;
        };
        let stored = store_media(fitting, kind, mime, data).await;
        report.cut = true;
        if let Ok(id) = &stored {
            report.artifacts.push(id.clone());
        }
        let what = if kind == "blob" { "resource" } else { kind };
        let note = left_out_note(
            what,
            mime,
            data.len(),
            &why,
            stored.as_ref().map_err(String::as_str),
        );
        items.push(Item::note(note));
    }
    items
}

/// Blocks past the most a result carries, kept as they were, as one artifact: the note that
/// stands for them.
async fn keep_beyond(beyond: (usize, String), fitting: &Fitting, report: &mut CutFacts) -> String {
    let (count, lines) = beyond;
    report.received_chars += lines.chars().count() as u64;
    let stored = store(fitting, lines).await;
    report.kept(&stored);
    format!(
        "[toolsmith: {} more content blocks left out, past the {} a result may carry; {}, \
         one block a line]",
        grouped(count),
        grouped(MAX_BLOCKS),
        kept_as(&stored)
    )
}

/// Other blocks (neither text nor media) pass, up to half the cap; the rest are kept together
/// as one artifact, a note in their place. Notes count as what they are, text the model
/// reads. The items kept, and the chars of the notes and other blocks among them.
async fn pass_others(
    items: Vec<Item>,
    fitting: &Fitting,
    report: &mut CutFacts,
) -> (Vec<Item>, usize) {
    let half = fitting.cap / 2;
    let mut fixed_chars = 0usize;
    let mut left_out: Vec<Value> = Vec::new();
    let mut first_left_out = None;
    let mut kept: Vec<Item> = Vec::with_capacity(items.len());
    for item in items {
        if item.note {
            fixed_chars += item.block["text"].as_str().map_or(0, |t| t.chars().count());
            kept.push(item);
            continue;
        }
        if !matches!(kind_of(&item.block), Kind::Other) {
            kept.push(item);
            continue;
        }
        let chars = item.block.to_string().chars().count();
        report.received_chars += chars as u64;
        if left_out.is_empty() && fixed_chars + chars <= half {
            fixed_chars += chars;
            kept.push(item);
        } else {
            first_left_out.get_or_insert(kept.len());
            left_out.push(item.block);
        }
    }
    if let Some(at) = first_left_out {
        let count = left_out.len();
        let lines: String = left_out.iter().map(|block| format!("{block}\n")).collect();
        let stored = store(fitting, lines).await;
        report.kept(&stored);
        let note = format!(
            "[toolsmith: {} more content blocks (resource links and others) left out, past half \
             the {}-char cap; {}, one block a line]",
            grouped(count),
            grouped(fitting.cap),
            kept_as(&stored)
        );
        fixed_chars += note.chars().count();
        kept.insert(at, Item::note(note));
    }
    (kept, fixed_chars)
}

/// Notes that do not fit beside the other blocks are cut, sharing the room fairly: the cap
/// holds whatever the notes say. The chars of the notes and other blocks after.
fn cut_notes(kept: &mut [Item], fixed_chars: usize, cap: usize) -> usize {
    if fixed_chars <= cap {
        return fixed_chars;
    }
    let note_chars: Vec<(usize, usize)> = kept
        .iter()
        .enumerate()
        .filter(|(_, item)| item.note)
        .map(|(i, item)| (i, visible_chars(&item.block)))
        .collect();
    let others = fixed_chars - note_chars.iter().map(|&(_, chars)| chars).sum::<usize>();
    let wants: Vec<usize> = note_chars.iter().map(|&(_, chars)| chars).collect();
    let mut shares = vec![0; wants.len()];
    crate::fair::fill(&mut shares, &wants, cap.saturating_sub(others));
    let none = Continuation::from(FullOutput::NotKept);
    for (&(i, chars), share) in note_chars.iter().zip(shares) {
        if chars > share
            && let Some(Value::String(note)) = kept[i].block.get_mut("text")
        {
            *note = trim::fit_with(note, share, &TrimStyle::error(), &none)
                .into_text()
                .into_owned();
        }
    }
    others
        + kept
            .iter()
            .filter(|item| item.note)
            .map(|item| visible_chars(&item.block))
            .sum::<usize>()
}

/// The texts share `room`, max-min fairly; a text over its share is kept whole as an artifact
/// and cut, with the marker, to its share less its link's chars. The links that follow cut
/// texts, by the place of their text.
async fn share_texts(
    kept: &mut Vec<Item>,
    room: usize,
    fitting: &Fitting,
    style: &TrimStyle,
    report: &mut CutFacts,
) -> Vec<(usize, Value)> {
    let separators = join_small_texts(kept, room);
    let texts: Vec<(usize, usize)> = kept
        .iter_mut()
        .enumerate()
        .filter(|(_, item)| !item.note && matches!(kind_of(&item.block), Kind::Text))
        .filter_map(|(i, item)| Some((i, text_slot(&mut item.block)?.as_str()?.chars().count())))
        .collect();
    let wants: Vec<usize> = texts.iter().map(|&(_, chars)| chars).collect();
    let mut shares = vec![0; wants.len()];
    crate::fair::fill(&mut shares, &wants, room);
    // The line breaks that joined texts are not what the server sent.
    report.received_chars += (wants.iter().sum::<usize>() - separators) as u64;
    let mut links: Vec<(usize, Value)> = Vec::new();
    for (&(i, chars), share) in texts.iter().zip(shares) {
        if chars <= share {
            report.sent_chars += chars as u64;
            continue;
        }
        let Some(slot) = text_slot(&mut kept[i].block) else {
            continue;
        };
        // Taken out of the block, not copied: the block gets its cut text back.
        let Value::String(text) = slot.take() else {
            continue;
        };
        if fitting.marker_token_cap.is_none() && trim::fits_compacted(&text, share, style) {
            // A JSON document that fits once written compactly: nothing left out, nothing to
            // keep; its fact says it was compacted.
            let none = Continuation::from(FullOutput::NotKept);
            let (fitted, cut) = trim::fit_with(&text, share, style, &none).into_parts();
            if let Some(cut) = &cut {
                report
                    .cuts
                    .push(crate::registry::facts::cut_fact(i, cut, None));
                report.compacted = true;
            }
            report.sent_chars += fitted.chars().count() as u64;
            *slot = Value::String(fitted.into_owned());
            continue;
        }
        let (stored, text) = store_and_give_back(fitting, text).await;
        report.kept(&stored);
        // The link's chars come out of the text's share: together they fit it.
        let link = artifact_link::after_cut(&stored, share);
        let share = share - link.as_ref().map_or(0, visible_chars);
        let continuation =
            Continuation::from(full_output(&stored)).with_token_cap(fitting.marker_token_cap);
        let (fitted, cut) = trim::fit_with(&text, share, style, &continuation).into_parts();
        let fitted = fitted.into_owned();
        if let Some(cut) = &cut {
            let artifact = stored.as_ref().ok().map(|(id, _)| id);
            report
                .cuts
                .push(crate::registry::facts::cut_fact(i, cut, artifact));
        }
        report.sent_chars += fitted.chars().count() as u64;
        *slot = Value::String(fitted);
        if let Some(link) = link {
            report.sent_chars += visible_chars(&link) as u64;
            links.push((i, link));
        }
    }
    links
}

/// The blocks, each link right after its text; the cut facts (`cuts`, this layout's) name the
/// blocks where they now are.
fn follow_with_links(
    kept: Vec<Item>,
    links: Vec<(usize, Value)>,
    cuts: &mut [Value],
) -> Vec<Value> {
    if links.is_empty() {
        return kept.into_iter().map(|item| item.block).collect();
    }
    for fact in cuts {
        if let Some(block) = fact["block"].as_u64() {
            let before = links.iter().filter(|(i, _)| (*i as u64) < block).count();
            fact["block"] = (block + before as u64).into();
        }
    }
    let mut links = links.into_iter().peekable();
    let mut blocks = Vec::with_capacity(kept.len() + links.len());
    for (i, item) in kept.into_iter().enumerate() {
        blocks.push(item.block);
        if let Some((_, link)) = links.next_if(|(at, _)| *at == i) {
            blocks.push(link);
        }
    }
    blocks
}

/// The least share of the room a text gets before many texts are cut as one body.
const LEAST_TEXT_SHARE: usize = 400;

/// Many text blocks over a small room (the Python SDK's text per item of a list) are one body:
/// joined, a line break between, into the first, so they are cut once, kept as one artifact,
/// and none is cut to nothing. Returns the line breaks added.
fn join_small_texts(kept: &mut Vec<Item>, room: usize) -> usize {
    let plain: Vec<usize> = kept
        .iter()
        .enumerate()
        .filter(|(_, item)| {
            !item.note
                && item.block.get("type").and_then(Value::as_str) == Some("text")
                && item.block.get("text").is_some_and(Value::is_string)
        })
        .map(|(i, _)| i)
        .collect();
    let total: usize = plain.iter().map(|&i| visible_chars(&kept[i].block)).sum();
    if plain.len() < 2 || total <= room || room / plain.len() >= LEAST_TEXT_SHARE {
        return 0;
    }
    let mut body = String::with_capacity(total + plain.len());
    for (n, &i) in plain.iter().enumerate() {
        if n > 0 {
            body.push('\n');
        }
        body.push_str(kept[i].block["text"].as_str().unwrap_or_default());
    }
    kept[plain[0]].block["text"] = Value::String(body);
    for &i in plain[1..].iter().rev() {
        kept.remove(i);
    }
    plain.len() - 1
}
