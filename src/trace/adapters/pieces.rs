//! Where the elements of a file's transcripts are, for cutting the file down by removing
//! whole elements (`shrink`): each element's bytes, and the JSON array it is a member
//! of, so that what is left is the same file with fewer elements.

use std::cmp::Reverse;
use std::ops::Range;

use serde_json::Value;

use super::{Doc, Element, Format, Found, Layout, Piece, Site, otel};
use crate::trace::Location;
use crate::trace::json_index::child_pointer;

/// The removable elements of the transcripts `found` in `docs`, in file order, and the
/// arrays they are members of (see [`super::Reading::pieces`]).
pub(super) fn find(
    layout: Layout,
    docs: &[Doc],
    found: &[Found<'_>],
) -> (Vec<Piece>, Vec<Range<u64>>) {
    let mut pieces = Vec::new();
    let mut arrays = Vec::new();
    if layout == Layout::ElementLines {
        // Every line is an element, also one that is not JSON.
        for doc in docs {
            pieces.push(Piece {
                bytes: bytes(&doc.whole()),
                array: None,
            });
        }
        return (pieces, arrays);
    }
    // Arrays whose every member is an element.
    let mut lists: Vec<(Site, usize)> = Vec::new();
    for transcript in found {
        match transcript.format {
            Format::Otel => {
                for element in &transcript.elements {
                    span_arrays(element.value, &element.site, &mut lists);
                }
            }
            // A search tree's nodes hang together: there is no element to remove.
            Format::ToolBench => {}
            _ => match list_of(docs, &transcript.elements) {
                Some(list) => lists.push(list),
                // A transcript that is one element (one message), on a line of its
                // own: the line can go. A document that is one element cannot.
                None if layout == Layout::DocumentLines => {
                    for element in &transcript.elements {
                        if element.site.pointer.is_empty() {
                            pieces.push(Piece {
                                bytes: bytes(&docs[element.site.doc].whole()),
                                array: None,
                            });
                        }
                    }
                }
                None => {}
            },
        }
    }
    for (site, len) in lists {
        let doc = &docs[site.doc];
        let array = arrays.len();
        arrays.push(bytes(&doc.location(&site.pointer)));
        for i in 0..len {
            pieces.push(Piece {
                bytes: bytes(&doc.location(&child_pointer(&site.pointer, i))),
                array: Some(array),
            });
        }
    }
    // An element found twice (by overlapping `--select` paths), or inside another, is
    // cut only as the outer one.
    pieces.sort_by_key(|piece| (piece.bytes.start, Reverse(piece.bytes.end)));
    pieces.dedup_by(|inner, outer| inner.bytes.end <= outer.bytes.end);
    (pieces, arrays)
}

fn bytes(loc: &Location) -> Range<u64> {
    loc.offset..loc.offset + loc.len
}

/// The array whose members are `elements`, all of them and in order, with its length.
fn list_of(docs: &[Doc], elements: &[Element<'_>]) -> Option<(Site, usize)> {
    let first = elements.first()?;
    let (parent, _) = first.site.pointer.rsplit_once('/')?;
    let len = docs[first.site.doc]
        .value
        .as_ref()?
        .pointer(parent)?
        .as_array()?
        .len();
    let all = len == elements.len()
        && elements.iter().enumerate().all(|(i, element)| {
            element.site.doc == first.site.doc
                && element.site.pointer.as_str() == child_pointer(parent, i)
        });
    all.then(|| {
        let site = Site::new(first.site.doc, parent.to_string());
        (site, len)
    })
}

/// Every `spans` array of OTLP data, with its length, as the OpenTelemetry adapter
/// walks the levels.
fn span_arrays(value: &Value, site: &Site, arrays: &mut Vec<(Site, usize)>) {
    let Value::Object(map) = value else { return };
    let Some(key) = otel::LEVELS.into_iter().find(|key| map.contains_key(*key)) else {
        return;
    };
    let Value::Array(items) = &map[key] else {
        return;
    };
    let site = site.child(key);
    if key == "spans" {
        arrays.push((site, items.len()));
    } else {
        for (i, item) in items.iter().enumerate() {
            span_arrays(item, &site.child(i), arrays);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::super::{InputOptions, Opened, open_bytes, read_text};

    /// The text of each piece, and of each array, of `text` read as it is detected.
    fn cuts(text: &str) -> (Vec<(&str, Option<usize>)>, Vec<&str>) {
        let reading = match open_bytes(text.as_bytes(), &InputOptions::default(), 1 << 20) {
            Opened::Read(reading) => reading,
            Opened::Native(_) => panic!("read as native: {text}"),
        };
        let at = |range: &std::ops::Range<u64>| &text[range.start as usize..range.end as usize];
        let pieces = reading
            .pieces
            .iter()
            .map(|piece| (at(&piece.bytes), piece.array))
            .collect();
        (pieces, reading.arrays.iter().map(at).collect())
    }

    #[test]
    fn a_message_list_is_cut_by_message() {
        let text = "{\"model\": \"m\", \"messages\": [\n  {\"role\": \"user\", \"content\": \"hi\"},\n  {\"role\": \"assistant\", \"content\": null, \"tool_calls\": [{\"id\": \"c\", \"type\": \"function\", \"function\": {\"name\": \"t\", \"arguments\": \"{}\"}}]}\n]}\n";
        let (pieces, arrays) = cuts(text);
        assert_eq!(arrays.len(), 1);
        assert!(arrays[0].starts_with("[\n  {\"role\": \"user\"") && arrays[0].ends_with("}\n]"));
        assert_eq!(pieces.len(), 2);
        assert_eq!(
            pieces[0],
            ("{\"role\": \"user\", \"content\": \"hi\"}", Some(0))
        );
        assert!(pieces[1].0.starts_with("{\"role\": \"assistant\"") && pieces[1].0.ends_with("]}"));
    }

    #[test]
    fn a_log_is_cut_by_line_and_an_export_by_span() {
        let log = "{\"jsonrpc\": \"2.0\", \"id\": 1, \"method\": \"tools/call\", \"params\": {\"name\": \"t\"}}\nnot json\n{\"jsonrpc\": \"2.0\", \"id\": 1, \"result\": {}}\n";
        let (pieces, arrays) = cuts(log);
        assert!(arrays.is_empty());
        let lines: Vec<&str> = log.lines().collect();
        assert_eq!(
            pieces,
            [(lines[0], None), ("not json", None), (lines[2], None)]
        );

        let export = r#"{"resourceSpans": [{"scopeSpans": [{"spans": [{"name": "a"}, {"name": "b"}]}, {"spans": [{"name": "c"}]}]}]}"#;
        let (pieces, arrays) = cuts(export);
        assert_eq!(
            arrays,
            [r#"[{"name": "a"}, {"name": "b"}]"#, r#"[{"name": "c"}]"#]
        );
        assert_eq!(
            pieces,
            [
                (r#"{"name": "a"}"#, Some(0)),
                (r#"{"name": "b"}"#, Some(0)),
                (r#"{"name": "c"}"#, Some(1))
            ]
        );
    }

    #[test]
    fn a_document_that_is_one_message_has_nothing_to_cut() {
        let text = "{\n  \"role\": \"assistant\",\n  \"content\": [{\"type\": \"tool_use\", \"id\": \"t\", \"name\": \"n\", \"input\": {}}]\n}\n";
        let reading = read_text(text, &InputOptions::default());
        assert_eq!(reading.entries.len(), 1);
        assert!(reading.pieces.is_empty() && reading.arrays.is_empty());
    }
}
